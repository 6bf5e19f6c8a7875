package runs_test

import (
	"testing"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/ports/porttest"
)

// A run's spans are stored together — after a turn that used tools, and
// when the loop ends — not one commit each, and every one of them is
// stored before the run's final event goes out.
func TestARunStoresItsSpansTogether(t *testing.T) {
	h := newHarness(t)
	before := h.traces.Commits()
	run, events := h.run(domain.AgentSpec{}, "hi", porttest.Reply{Text: "hello"})
	if last(events).Type != domain.EventOutput {
		t.Fatalf("the run ended with %s", last(events).Type)
	}
	// The final event is out: the spans are already stored.
	if len(h.spans(run.ID, domain.SpanAgent)) != 1 || len(h.spans(run.ID, domain.SpanGeneration)) != 1 {
		t.Fatalf("stored by the final event: agent %d, generation %d", len(h.spans(run.ID, domain.SpanAgent)),
			len(h.spans(run.ID, domain.SpanGeneration)))
	}
	if n := h.traces.Commits() - before; n != 1 {
		t.Fatalf("a one-turn run stored its two spans in %d commits, want 1", n)
	}
	if n := len(ofType(events, domain.EventTraceSpan)); n != 2 {
		t.Fatalf("%d trace.span events, want 2", n)
	}

	// A turn with a tool call stores its spans before the next turn; the
	// last turn's go with the agent's.
	before = h.traces.Commits()
	run, events = h.run(domain.AgentSpec{}, "plan",
		porttest.Reply{Calls: []porttest.Call{{Name: "todo_write", Arguments: todo("x")}}}, porttest.Reply{Text: "done"})
	if last(events).Type != domain.EventOutput {
		t.Fatalf("the run ended with %s", last(events).Type)
	}
	if gens, fns := h.spans(run.ID, domain.SpanGeneration), h.spans(run.ID, domain.SpanFunction); len(gens) != 2 || len(fns) != 1 {
		t.Fatalf("stored: %d generations, %d function spans", len(gens), len(fns))
	}
	if n := h.traces.Commits() - before; n != 2 {
		t.Fatalf("a two-turn run stored its four spans in %d commits, want 2", n)
	}
	if n := len(ofType(events, domain.EventTraceSpan)); n != 4 {
		t.Fatalf("%d trace.span events, want 4", n)
	}
}
