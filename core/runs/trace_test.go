package runs_test

import (
	"testing"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/ports/porttest"
)

// A run's spans ride on its own session writes — each turn's in the
// transaction that records the turn, the last ones in the run's end — with
// no commit of their own, and every one is stored before the run's final
// event goes out.
func TestARunStoresItsSpansWithItsWrites(t *testing.T) {
	h := newHarness(t)
	a := h.agent(domain.AgentSpec{})
	for _, c := range []struct {
		name    string
		replies []porttest.Reply
		gens    int
		fns     int
		writes  int // the run's session writes: start, turns, end (with the last turn)
	}{
		{"one turn", []porttest.Reply{{Text: "hello"}}, 1, 0, 2},
		{"a tool turn, then the answer", []porttest.Reply{{Calls: []porttest.Call{{Name: "todo_write", Arguments: todo("x")}}},
			{Text: "done"}}, 2, 1, 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			sess := h.session(a.ID)
			h.llm.Queue(c.replies...)
			spanWrites, sessWrites := h.traces.Commits(), h.sessStore.Commits()
			run := h.start(sess.ID, "hi")
			events := h.events(run.ID, 0)
			if last(events).Type != domain.EventOutput {
				t.Fatalf("the run ended with %s", last(events).Type)
			}
			// The final event is out: the spans are already stored.
			agents, gens, fns := h.spans(run.ID, domain.SpanAgent), h.spans(run.ID, domain.SpanGeneration), h.spans(run.ID, domain.SpanFunction)
			if len(agents) != 1 || len(gens) != c.gens || len(fns) != c.fns {
				t.Fatalf("stored by the final event: %d agent, %d generation, %d function spans", len(agents), len(gens), len(fns))
			}
			if n := h.traces.Commits() - spanWrites; n != 0 {
				t.Fatalf("the run's spans took %d commits of their own, want 0", n)
			}
			if n := h.sessStore.Commits() - sessWrites; n != c.writes {
				t.Fatalf("the run wrote its session %d times, want %d", n, c.writes)
			}
			if n := len(ofType(events, domain.EventTraceSpan)); n != 1+c.gens+c.fns {
				t.Fatalf("%d trace.span events, want %d", n, 1+c.gens+c.fns)
			}
		})
	}
}
