package runs_test

import (
	"slices"
	"testing"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/runs"
	"github.com/agents-server/agents-server/ports/porttest"
)

// lastModel is the model the newest model call asked for.
func (h *harness) lastModel() string {
	h.t.Helper()
	reqs := h.llm.Requests()
	if len(reqs) == 0 {
		h.t.Fatal("no model call was made")
	}
	return reqs[len(reqs)-1].Model
}

// startWith starts a run with req on a session and reads it to its end.
func (h *harness) startWith(sessionID string, req runs.StartRequest, replies ...porttest.Reply) []domain.Event {
	h.t.Helper()
	h.llm.Queue(replies...)
	r, err := h.svc.Start(h.t.Context(), h.user, sessionID, req)
	if err != nil {
		h.t.Fatalf("start: %v", err)
	}
	return h.events(r.ID, 0)
}

func TestAModelChosenForOneAnswerAndASwitchOfAgentAreNoted(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	a := h.agent(domain.AgentSpec{Name: "Writer", Model: "m"})
	b := h.agent(domain.AgentSpec{Name: "Coder", Model: "code-model"})
	sid := h.session(a.ID).ID

	// A model for this answer only: the call asks for it, the transcript says so.
	h.startWith(sid, runs.StartRequest{Input: "one", Model: "big"}, porttest.Reply{Text: "1"})
	if got := h.lastModel(); got != "big" {
		t.Fatalf("the chosen model's answer asked for %q", got)
	}
	// The next answer is the agent's own again, and notes nothing.
	h.startWith(sid, runs.StartRequest{Input: "two"}, porttest.Reply{Text: "2"})
	if got := h.lastModel(); got != "m" {
		t.Fatalf("the next answer asked for %q, want the agent's m", got)
	}
	// Another agent answers from here on, and the switch is noted.
	h.startWith(sid, runs.StartRequest{Input: "three", AgentConfigID: b.ID}, porttest.Reply{Text: "3"})
	if got := h.lastModel(); got != "code-model" {
		t.Fatalf("the switched agent's answer asked for %q", got)
	}
	h.startWith(sid, runs.StartRequest{Input: "four", AgentConfigID: b.ID, Model: "code-model"}, porttest.Reply{Text: "4"})
	want := []string{
		"annotation/: This answer uses big in place of Writer's own m.", "item/user message: one", "item/model message: 1",
		"item/user message: two", "item/model message: 2",
		"annotation/: Switched to Coder (code-model).", "item/user message: three", "item/model message: 3",
		// Choosing the agent's own model changes nothing worth a note.
		"item/user message: four", "item/model message: 4",
	}
	if got := describe(h.entries(sid)); !slices.Equal(got, want) {
		t.Fatalf("transcript:\n%q\nwant\n%q", got, want)
	}

	// A name that cannot be a model's is refused and changes nothing.
	for _, bad := range []string{"two words", "tab\tmodel", string(make([]byte, domain.MaxModelName+1))} {
		_, err := h.svc.Start(t.Context(), h.user, sid, runs.StartRequest{Input: "five", Model: bad})
		wantCode(t, err, errs.Validation)
		if f := errs.FieldsOf(err); f["model"] == "" {
			t.Fatalf("the refusal of %q names no model field: %v", bad, err)
		}
	}
	if got := len(h.entries(sid)); got != len(want) {
		t.Fatalf("a refused start wrote %d entries", got-len(want))
	}
}

func TestAModelChosenForOneAnswerOutlivesItsPause(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	a := h.agent(domain.AgentSpec{Name: "Careful", Approval: domain.AgentApproval{ApproveTools: []string{"todo_write"}}})
	sid := h.session(a.ID).ID
	events := h.startWith(sid, runs.StartRequest{Input: "go", Model: "big"},
		porttest.Reply{Calls: []porttest.Call{{ID: "c1", Name: "todo_write", Arguments: todo("x")}}})
	if last(events).Type != domain.EventInterrupted {
		t.Fatalf("the run did not pause: %s", story(events))
	}
	run := payload[domain.RunStartedPayload](t, events[0]).RunID
	paused := last(events).Seq
	approvals, err := h.svc.Approvals(t.Context(), h.user, sid)
	if err != nil || len(approvals) != 1 {
		t.Fatalf("approvals = %+v, %v", approvals, err)
	}
	h.llm.Queue(porttest.Reply{Text: "done"})
	if _, err := h.svc.Decide(t.Context(), h.user, approvals[0].ID, true, "", ""); err != nil {
		t.Fatal(err)
	}
	h.events(run, paused)
	reqs := h.llm.Requests()
	if got := []string{reqs[0].Model, reqs[len(reqs)-1].Model}; !slices.Equal(got, []string{"big", "big"}) {
		t.Fatalf("the paused and the resumed calls asked for %q, want big both times", got)
	}
}
