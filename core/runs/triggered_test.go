package runs_test

import (
	"slices"
	"testing"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/runs"
	"github.com/agents-server/agents-server/ports/porttest"
)

// asks lists a run's tool calls as "<id> asks" or "<id> runs".
func asks(t *testing.T, events []domain.Event) []string {
	var out []string
	for _, ev := range ofType(events, domain.EventToolCall) {
		p := payload[domain.ToolCallPayload](t, ev)
		out = append(out, p.ToolCallID+map[bool]string{true: " asks", false: " runs"}[p.NeedsApproval])
	}
	return out
}

func TestATriggeredTurnNeitherUsesNorGrantsStandingTrust(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := t.Context()
	exec := func(id string) porttest.Call {
		return porttest.Call{ID: id, Name: "exec_command", Arguments: `{"cmd":"make report"}`}
	}
	// A person trusts every command for the rest of the conversation.
	run, events, approvals := h.pause([]string{"exec_command"}, exec("c1"))
	h.llm.Queue(porttest.Reply{Text: "done"})
	if _, err := h.svc.Decide(ctx, h.user, approvals[0].ID, true, domain.ScopeAll, ""); err != nil {
		t.Fatal(err)
	}
	h.events(run.ID, last(events).Seq)
	<-h.hub.Freed(run.SessionID, run.ID)

	// A trigger's turn in the same conversation still asks.
	note := domain.Entry{Kind: domain.KindAnnotation, Text: "Trigger asked.", Display: &domain.Display{Kind: "trigger_fired", Title: "cron"}}
	h.llm.Queue(porttest.Reply{Calls: []porttest.Call{exec("c2")}})
	trigger := func(input string) (domain.Run, error) {
		return h.svc.StartBackground(ctx, runs.BackgroundStart{SessionID: run.SessionID, OwnerID: h.user.User.ID,
			AgentConfigID: run.AgentConfigID, Input: input, Note: &note, Title: true, NotPaused: true, Triggered: true})
	}
	tr, err := trigger("Report.")
	if err != nil {
		t.Fatal(err)
	}
	trEvents := h.events(tr.ID, 0)
	if got := asks(t, trEvents); !slices.Equal(got, []string{"c2 asks"}) {
		t.Fatalf("the triggered turn's call: %v", got)
	}
	// While its pause stands, another trigger turn is refused, not
	// set aside as a person's message would.
	if _, err := trigger("Again."); errs.CodeOf(err) != errs.Conflict {
		t.Fatalf("a trigger turn over a pause: %v", err)
	}
	// Its own "all" grant holds within it and goes no further.
	trApprovals, _ := h.svc.Approvals(ctx, h.user, run.SessionID)
	h.llm.Queue(porttest.Reply{Calls: []porttest.Call{exec("c3")}}, porttest.Reply{Text: "reported"})
	if _, err := h.svc.Decide(ctx, h.user, trApprovals[0].ID, true, domain.ScopeAll, ""); err != nil {
		t.Fatal(err)
	}
	rest := h.events(tr.ID, last(trEvents).Seq)
	if got := asks(t, rest); !slices.Equal(got, []string{"c3 runs"}) {
		t.Fatalf("within the triggered run after its own grant: %v", got)
	}
	<-h.hub.Freed(run.SessionID, tr.ID)
	// The person's standing trust is still there for the person's runs.
	h.llm.Queue(porttest.Reply{Calls: []porttest.Call{exec("c4")}}, porttest.Reply{Text: "ok"})
	later := h.start(run.SessionID, "again")
	if got := asks(t, h.events(later.ID, 0)); !slices.Equal(got, []string{"c4 runs"}) {
		t.Fatalf("the person's next run: %v", got)
	}
	// The note leads the trigger's message in the conversation.
	var kinds []string
	for _, e := range h.entries(run.SessionID) {
		if e.RunID == tr.ID || (e.Display != nil && e.Display.Kind == "trigger_fired") {
			kinds = append(kinds, string(e.Kind)+":"+e.Source)
		}
	}
	if len(kinds) < 2 || kinds[0] != "annotation:" || kinds[1] != "item:user" {
		t.Fatalf("entries of the triggered turn: %v", kinds)
	}
}
