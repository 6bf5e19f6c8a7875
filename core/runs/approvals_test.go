package runs_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/settings"
	"github.com/agents-server/agents-server/ports/porttest"
)

// pause runs an agent whose approve_tools are gated until the model's
// calls pause it, and returns — once the run has let go of its session —
// the run, its events and its approvals.
func (h *harness) pause(gated []string, calls ...porttest.Call) (domain.Run, []domain.Event, []domain.Approval) {
	h.t.Helper()
	run, events := h.run(domain.AgentSpec{Approval: domain.AgentApproval{ApproveTools: gated}}, "go", porttest.Reply{Calls: calls})
	if last(events).Type != domain.EventInterrupted {
		h.t.Fatalf("the run did not pause: %s", ending(h.t, events))
	}
	// run.interrupted is out; the run lets go of the session right after.
	select {
	case <-h.hub.Freed(run.SessionID, run.ID):
	case <-time.After(wait):
		h.t.Fatal("the paused run never let go of its session")
	}
	approvals, err := h.svc.Approvals(h.t.Context(), h.user, run.SessionID)
	if err != nil {
		h.t.Fatal(err)
	}
	return run, events, approvals
}

func TestADecisionResumesTheSameRun(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		approve bool
		reason  string
		output  string // the tool output the model reads next
	}{
		{name: "approved", approve: true, output: "Checklist saved: 0 of 1 done."},
		{name: "rejected with a reason", reason: "not now", output: "The person rejected this call; it did not run. Their reason: not now"},
		{name: "rejected", output: "The person rejected this call; it did not run."},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			ctx := t.Context()
			run, events, approvals := h.pause([]string{"todo_write"}, porttest.Call{ID: "c1", Name: "todo_write", Arguments: todo("x")})
			if got := story(events); got != "run.started run.agent_start run.tool_call run.interrupted" {
				t.Fatalf("story = %s", got)
			}
			if p := payload[domain.ToolCallPayload](t, ofType(events, domain.EventToolCall)[0]); !p.NeedsApproval || p.ToolCallID != "c1" {
				t.Fatalf("tool_call = %+v", p)
			}
			paused := last(events).Seq
			if row := h.row(run.ID); row.Status != domain.RunInterrupted || row.LastSeq != paused || row.EndedAt != nil {
				t.Fatalf("paused row = %+v (interrupted at %d)", row, paused)
			}
			if len(approvals) != 1 || approvals[0].ToolCallID != "c1" || approvals[0].Status != domain.ApprovalPending || approvals[0].RunID != run.ID {
				t.Fatalf("approvals = %+v", approvals)
			}
			if got, err := h.svc.ApprovalByCall(ctx, h.user, "c1"); err != nil || got.ID != approvals[0].ID {
				t.Fatalf("ApprovalByCall = %+v, %v", got, err)
			}
			if all, err := h.svc.Approvals(ctx, h.user, ""); err != nil || len(all) != 1 {
				t.Fatalf("all approvals = %+v, %v", all, err)
			}
			if _, err := h.svc.Approvals(ctx, h.other, run.SessionID); errs.CodeOf(err) != errs.NotFound {
				t.Fatalf("another member's listing: %v", err)
			}
			if got := describe(h.entries(run.SessionID)); !slices.Equal(got, []string{"item/user message: go", "item/model call todo_write"}) {
				t.Fatalf("a pause records the model's turn: %q", got)
			}
			// Refused decisions change nothing.
			_, err := h.svc.Decide(ctx, h.other, approvals[0].ID, true, "", "")
			wantCode(t, err, errs.NotFound)
			_, err = h.svc.Decide(ctx, h.user, approvals[0].ID, true, "forever", "")
			wantCode(t, err, errs.Validation)

			h.llm.Queue(porttest.Reply{Text: "done"})
			resumed, err := h.svc.Decide(ctx, h.user, approvals[0].ID, c.approve, "", c.reason)
			if err != nil || resumed.ID != run.ID || resumed.Status != domain.RunRunning {
				t.Fatalf("Decide = %+v, %v", resumed, err)
			}
			rest := h.events(run.ID, paused)
			if got := story(rest); got != "run.agent_start run.tool_result run.message run.output" {
				t.Fatalf("resumed story = %s", got)
			}
			if rest[0].Seq != paused+1 {
				t.Fatalf("the resumed run's first event has seq %d, want %d", rest[0].Seq, paused+1)
			}
			if p := payload[domain.ToolResultPayload](t, ofType(rest, domain.EventToolResult)[0]); p.Output != c.output {
				t.Fatalf("tool result = %q, want %q", p.Output, c.output)
			}
			reqs := h.llm.Requests()
			if len(reqs) != 2 || !strings.Contains(porttest.InputText(reqs[1]), c.output) {
				t.Fatalf("the model read %q", porttest.InputText(reqs[len(reqs)-1]))
			}
			if row := h.row(run.ID); row.Status != domain.RunCompleted || row.LastSeq != last(rest).Seq {
				t.Fatalf("row = %+v", row)
			}
			if left := h.runStore.Approvals(); len(left) != 0 {
				t.Fatalf("approvals left behind: %+v", left)
			}
			_, err = h.svc.Decide(ctx, h.user, approvals[0].ID, true, "", "")
			wantCode(t, err, errs.NotFound)
		})
	}
}

func TestTwoGatedCallsAreDecidedOneByOne(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := t.Context()
	run, events, approvals := h.pause([]string{"*"}, porttest.Call{ID: "a", Name: "todo_write", Arguments: todo("a")},
		porttest.Call{ID: "b", Name: "todo_write", Arguments: todo("b", "c")})
	if len(approvals) != 2 {
		t.Fatalf("approvals = %+v", approvals)
	}
	got, err := h.svc.Decide(ctx, h.user, approvals[1].ID, false, "", "no")
	if err != nil || got.Status != domain.RunInterrupted {
		t.Fatalf("the first decision: %+v, %v — the run waits for the other", got, err)
	}
	if n := len(h.llm.Requests()); n != 1 {
		t.Fatalf("%d model calls before the last decision", n)
	}
	h.llm.Queue(porttest.Reply{Text: "done"})
	if got, err = h.svc.Decide(ctx, h.user, approvals[0].ID, true, domain.ScopeOnce, ""); err != nil || got.Status != domain.RunRunning {
		t.Fatalf("the last decision: %+v, %v", got, err)
	}
	rest := h.events(run.ID, last(events).Seq)
	var outs []string
	for _, ev := range ofType(rest, domain.EventToolResult) {
		p := payload[domain.ToolResultPayload](t, ev)
		outs = append(outs, p.ToolCallID+": "+p.Output)
	}
	if !slices.Equal(outs, []string{"a: Checklist saved: 0 of 1 done.", "b: The person rejected this call; it did not run. Their reason: no"}) {
		t.Fatalf("results = %q", outs)
	}
	if ending(t, rest) != "run.output done" {
		t.Fatalf("ending = %s", ending(t, rest))
	}
}

func TestAPauseEnds(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		end    func(t *testing.T, h *harness, run domain.Run)
		reason string
		note   string
	}{
		{name: "a new message supersedes it", reason: "superseded", note: "A new message arrived before a decision on its approvals.",
			end: func(t *testing.T, h *harness, run domain.Run) {
				h.llm.Queue(porttest.Reply{Text: "fresh"})
				next := h.start(run.SessionID, "something else")
				if got := ending(t, h.events(next.ID, 0)); got != "run.output fresh" {
					t.Fatalf("the new run: %s", got)
				}
				if got := porttest.InputText(h.llm.Requests()[1]); !strings.Contains(got, "Not run: a new message arrived before a decision.") {
					t.Fatalf("the new run sent %q: every call needs its output", got)
				}
			}},
		{name: "a cancel stops it", reason: "stopped", note: "Stopped before it finished.",
			end: func(t *testing.T, h *harness, run domain.Run) {
				if err := h.svc.Cancel(t.Context(), h.user, run.ID, ""); err != nil {
					t.Fatal(err)
				}
				wantCode(t, h.svc.Cancel(t.Context(), h.user, run.ID, ""), errs.Conflict)
			}},
		{name: "its approval expires", reason: "expired", note: "The approval for todo_write waited more than 1440 minutes without a decision; the run was stopped.",
			end: func(t *testing.T, h *harness, run domain.Run) {
				if n, err := h.svc.ReapApprovals(t.Context()); n != 0 || err != nil {
					t.Fatalf("reaped %d (%v) before the ttl", n, err)
				}
				h.clock.Advance(1441 * time.Minute)
				if n, err := h.svc.ReapApprovals(t.Context()); n != 1 || err != nil {
					t.Fatalf("reaped %d, %v", n, err)
				}
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			run, events, approvals := h.pause([]string{"todo_write"}, call("todo_write", todo("x")))
			c.end(t, h, run)
			rest := h.events(run.ID, last(events).Seq)
			if got := ending(t, rest); got != "run.cancelled "+c.reason {
				t.Fatalf("the paused run's stream ended with %s", got)
			}
			if row := h.row(run.ID); row.Status != domain.RunCancelled || row.ErrorCode != c.reason || row.EndedAt == nil {
				t.Fatalf("row = %+v", row)
			}
			entries := h.entries(run.SessionID)
			if !hasEntry(entries, "item/tool output: Not run: ") || !hasEntry(entries, "annotation/: "+c.note) {
				t.Fatalf("entries = %q", describe(entries))
			}
			_, err := h.svc.Decide(t.Context(), h.user, approvals[0].ID, true, "", "")
			wantCode(t, err, errs.NotFound)
			if left := h.runStore.Approvals(); len(left) != 0 {
				t.Fatalf("approvals left behind: %+v", left)
			}
		})
	}
}

func TestApprovalsNeverExpireWithAZeroTTL(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	if _, err := h.settings.Put(t.Context(), h.admin, settings.KeyApprovalTTLMinutes, "0"); err != nil {
		t.Fatal(err)
	}
	run, _, _ := h.pause([]string{"todo_write"}, call("todo_write", todo("x")))
	h.clock.Advance(1000 * 24 * time.Hour)
	if n, err := h.svc.ReapApprovals(t.Context()); n != 0 || err != nil {
		t.Fatalf("reaped %d, %v", n, err)
	}
	if row := h.row(run.ID); row.Status != domain.RunInterrupted {
		t.Fatalf("row = %+v", row)
	}
}

func TestADecisionWaitsForTheSessionToBeFree(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	run, _, approvals := h.pause([]string{"todo_write"}, call("todo_write", todo("x")))
	release, err := h.hub.Hold(run.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	_, err = h.svc.Decide(t.Context(), h.user, approvals[0].ID, true, "", "")
	wantCode(t, err, errs.Conflict)
	release()
	if got := h.runStore.Approvals(); len(got) != 1 || got[0].Status != domain.ApprovalPending {
		t.Fatalf("a refused decision was recorded: %+v", got)
	}
}

func TestTrustedCommandsSkipTheGate(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := t.Context()
	exec := func(id, cmd string) porttest.Call {
		return porttest.Call{ID: id, Name: "exec_command", Arguments: `{"cmd":"` + cmd + `"}`}
	}
	run, events, approvals := h.pause([]string{"exec_command"}, exec("c1", "go test"))
	// Approved for the session: the same command again runs without asking,
	// another one still asks.
	h.llm.Queue(porttest.Reply{Calls: []porttest.Call{exec("c2", "go test")}}, porttest.Reply{Calls: []porttest.Call{exec("c3", "rm -rf /")}})
	if _, err := h.svc.Decide(ctx, h.user, approvals[0].ID, true, domain.ScopeSame, ""); err != nil {
		t.Fatal(err)
	}
	rest := h.events(run.ID, last(events).Seq)
	var gated []string
	for _, ev := range ofType(rest, domain.EventToolCall) {
		p := payload[domain.ToolCallPayload](t, ev)
		gated = append(gated, p.ToolCallID+map[bool]string{true: " asks", false: " runs"}[p.NeedsApproval])
	}
	if !slices.Equal(gated, []string{"c2 runs", "c3 asks"}) || last(rest).Type != domain.EventInterrupted {
		t.Fatalf("calls %v, then %s", gated, last(rest).Type)
	}
	// Without a project the shell tool is unknown: the model is told so.
	if !hasEntry(h.entries(run.SessionID), `output: Error: there is no tool named "exec_command"`) {
		t.Fatalf("entries = %q", describe(h.entries(run.SessionID)))
	}
}

func TestARestartKeepsPausesAndEndsRunningRuns(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := t.Context()
	run, events, approvals := h.pause([]string{"todo_write"}, call("todo_write", todo("x")))
	// A run the crash left running, with its user message recorded.
	orphanSession := h.session(h.agent(domain.AgentSpec{}).ID)
	orphan := domain.Run{ID: h.ids.NewID(), SessionID: orphanSession.ID, OwnerID: h.user.User.ID, Status: domain.RunRunning,
		Input: "lost", CreatedAt: h.clock.Now(), UpdatedAt: h.clock.Now()}
	if err := h.runStore.CreateRun(ctx, orphan); err != nil {
		t.Fatal(err)
	}

	h.newService()
	if ended, err := h.sweep(ctx); err != nil || len(ended) != 1 || ended[0].ID != orphan.ID {
		t.Fatalf("recovered %+v, %v", ended, err)
	}
	if err := h.svc.ReopenPaused(ctx); err != nil {
		t.Fatal(err)
	}
	if row := h.row(orphan.ID); row.Status != domain.RunError || row.ErrorCode != domain.CodeServerRestarted || row.EndedAt == nil {
		t.Fatalf("orphan row = %+v", row)
	}
	if !hasEntry(h.entries(orphanSession.ID), "annotation/: The server restarted during this run; it ended with an error.") {
		t.Fatalf("orphan entries = %q", describe(h.entries(orphanSession.ID)))
	}
	if row := h.row(run.ID); row.Status != domain.RunInterrupted {
		t.Fatalf("a paused run must stay decidable: %+v", row)
	}
	// Its stream is back before any decision, at the sequence it paused at.
	if got, err := h.svc.Get(ctx, h.user, run.ID); err != nil || got.LastSeq != last(events).Seq {
		t.Fatalf("the paused run after a restart: %+v, %v", got, err)
	}
	h.llm.Queue(porttest.Reply{Text: "done"})
	if _, err := h.svc.Decide(ctx, h.user, approvals[0].ID, true, "", ""); err != nil {
		t.Fatal(err)
	}
	rest := h.events(run.ID, last(events).Seq)
	if rest[0].Seq != last(events).Seq+1 || ending(t, rest) != "run.output done" {
		t.Fatalf("after the restart the run went on at seq %d: %s", rest[0].Seq, story(rest))
	}
	if _, err := h.svc.Get(ctx, h.user, run.ID); err != nil {
		t.Fatalf("Get after the restart: %v", err)
	}
}

// Input injected while a turn runs is not lost when that turn pauses for a
// decision: it travels with the pause and the resumed run reads it. Once
// the pause is announced, an injection is refused rather than dropped.
func TestInputInjectedBeforeAPauseReachesTheResumedRun(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := t.Context()
	hold := make(chan struct{})
	run := h.started(domain.AgentSpec{Approval: domain.AgentApproval{ApproveTools: []string{"*"}}},
		porttest.Reply{Hold: hold, Calls: []porttest.Call{{ID: "a", Name: "todo_write", Arguments: todo("a")}}})
	if err := h.svc.Inject(t.Context(), h.user, run.ID, domain.QueueSteer, "also check the README"); err != nil {
		t.Fatalf("inject during the turn: %v", err)
	}
	close(hold)
	events := h.events(run.ID, 0)
	if last(events).Type != domain.EventInterrupted {
		t.Fatalf("the run did not pause: %s", ending(t, events))
	}
	wantCode(t, h.svc.Inject(t.Context(), h.user, run.ID, domain.QueueSteer, "too late"), errs.Conflict)
	select {
	case <-h.hub.Freed(run.SessionID, run.ID):
	case <-time.After(wait):
		t.Fatal("the paused run never let go of its session")
	}
	approvals, err := h.svc.Approvals(ctx, h.user, run.SessionID)
	if err != nil || len(approvals) != 1 {
		t.Fatalf("approvals = %+v, %v", approvals, err)
	}
	h.llm.Queue(porttest.Reply{Text: "done"})
	if _, err := h.svc.Decide(ctx, h.user, approvals[0].ID, true, domain.ScopeOnce, ""); err != nil {
		t.Fatal(err)
	}
	rest := h.events(run.ID, last(events).Seq)
	if last(rest).Type != domain.EventOutput {
		t.Fatalf("the resumed run ended with %s", story(rest))
	}
	if got := ofType(rest, domain.EventInjected); len(got) != 1 {
		t.Fatalf("%d run.injected events after the resume, want 1: %s", len(got), story(rest))
	}
	reqs := conversation(h.llm.Requests())
	if len(reqs) != 2 || !strings.Contains(porttest.InputText(reqs[1]), "also check the README") {
		t.Fatalf("the resumed model call did not read the injected input: %q", porttest.InputText(reqs[len(reqs)-1]))
	}
	if strings.Contains(porttest.InputText(reqs[1]), "too late") {
		t.Fatal("a refused injection reached the model")
	}
}
