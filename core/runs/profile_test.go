package runs_test

import (
	"encoding/json"
	"testing"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/ports"
	"github.com/agents-server/agents-server/ports/porttest"
)

// A run's context profile is filed with its first recorded turn — no
// session write of its own — or, when no turn is recorded (the model call
// failed), with the run's end.
func TestARunFilesItsContextProfileWithItsWrites(t *testing.T) {
	h := newHarness(t)
	a := h.agent(domain.AgentSpec{Name: "profiled"})
	profileOf := func(sessionID string) map[string]any {
		t.Helper()
		var got map[string]any
		err := h.sessStore.ReadSession(t.Context(), sessionID, func(r ports.SessionReader) error {
			p, ok, err := r.LatestContextProfile(t.Context())
			if ok {
				_ = json.Unmarshal(p, &got)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	for _, c := range []struct {
		name  string
		reply porttest.Reply
		end   string
	}{
		{"a turn recorded", porttest.Reply{Text: "hello"}, domain.EventOutput},
		{"no turn recorded", porttest.Fail(ports.ModelInvalid, "no"), domain.EventError},
	} {
		t.Run(c.name, func(t *testing.T) {
			sess := h.session(a.ID)
			h.llm.Queue(c.reply)
			before := h.sessStore.Commits()
			run := h.start(sess.ID, "hi")
			if got := last(h.events(run.ID, 0)).Type; got != c.end {
				t.Fatalf("the run ended with %s, want %s", got, c.end)
			}
			// The start and the end (a final answer's turn goes with
			// it): nothing else.
			want := 2
			if n := h.sessStore.Commits() - before; n != want {
				t.Fatalf("the run wrote its session %d times, want %d", n, want)
			}
			if p := profileOf(sess.ID); p["agent"] != "profiled" {
				t.Fatalf("the stored profile: %v", p)
			}
		})
	}
}

// A run reads its agent once: the read Start checks it with is the one
// the run builds from.
func TestARunReadsItsAgentOnce(t *testing.T) {
	h := newHarness(t)
	a := h.agent(domain.AgentSpec{Name: "read-once"})
	sess := h.session(a.ID)
	h.llm.Queue(porttest.Reply{Text: "hello"})
	before := h.config.AgentReads()
	run := h.start(sess.ID, "hi")
	if got := last(h.events(run.ID, 0)).Type; got != domain.EventOutput {
		t.Fatalf("the run ended with %s", got)
	}
	if n := h.config.AgentReads() - before; n != 1 {
		t.Fatalf("a run read its agent %d times, want 1", n)
	}
	if reqs := h.llm.Requests(); reqs[len(reqs)-1].Model != a.Model {
		t.Fatalf("the model call used %q, want the agent's %q", reqs[len(reqs)-1].Model, a.Model)
	}
}

// A run reads its history in the transaction that files its start: a run
// with one answer takes no read snapshot of its session of its own.
func TestARunReadsItsHistoryWithItsStart(t *testing.T) {
	h := newHarness(t)
	a := h.agent(domain.AgentSpec{Name: "history"})
	sess := h.session(a.ID)
	for i, input := range []string{"first", "second"} {
		h.llm.Queue(porttest.Reply{Text: "answer " + input})
		before := h.sessStore.Reads()
		run := h.start(sess.ID, input)
		if got := last(h.events(run.ID, 0)).Type; got != domain.EventOutput {
			t.Fatalf("the run ended with %s", got)
		}
		if n := h.sessStore.Reads() - before; n != 0 {
			t.Fatalf("run %d took %d read snapshots of its session, want 0", i+1, n)
		}
		reqs := h.llm.Requests()
		if got := len(reqs[len(reqs)-1].Input); got != 2*i+1 {
			t.Fatalf("run %d sent %d items of history, want %d", i+1, got, 2*i+1)
		}
	}
}
