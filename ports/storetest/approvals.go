package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// Approvals is the contract of ports.ApprovalStore and the pause writes
// of a session transaction, as the runner's approval gate leans on them:
// filing a pause with its state, listing and finding what waits, one
// winner of every decision, resume and ending, and the live-run cap a
// resuming decision is held to. open returns an empty database.
func Approvals(t *testing.T, open func(t *testing.T) Stores) {
	t.Run("filing a pause", func(t *testing.T) { approvalsFiling(t, open(t)) })
	t.Run("listing and finding what waits", func(t *testing.T) { approvalsListing(t, open(t)) })
	t.Run("one decision wins, answered with the run's approvals", func(t *testing.T) { approvalsDecide(t, open(t)) })
	t.Run("deciding every call at once leaves someone to resume", func(t *testing.T) { approvalsDecideAll(t, open(t)) })
	t.Run("a resuming decision past the cap is refused", func(t *testing.T) { approvalsCap(t, open(t)) })
	t.Run("one resume wins, with the state and the decisions", func(t *testing.T) { approvalsResume(t, open(t)) })
	t.Run("ending a pause: one winner, against a resume too", func(t *testing.T) { approvalsEndPause(t, open(t)) })
}

// pauseState is a resume state with something in every field, so a lost
// or mangled field shows.
func pauseState(calls int) domain.PauseState {
	st := domain.PauseState{Turn: 2, AgentConfigID: "agent-2", ToolChoice: "auto", Planning: true, Injected: 1,
		Queued: []domain.QueuedInput{{Queue: domain.QueueSteer, Input: "also this"}}}
	for i := range calls {
		st.Calls = append(st.Calls, domain.Item{Type: "function_call", CallID: fmt.Sprintf("c%d", i), Name: "exec_command", Arguments: `{"cmd":"ls"}`})
		st.Gated = append(st.Gated, true)
	}
	return st
}

// pauseRun starts a run of sess and pauses it on n approvals (calls c0,
// c1, ... filed a second apart from runEpoch), the way the runner files
// them: approvals, resume state and status in one session transaction.
func pauseRun(t *testing.T, s Stores, sess domain.Session, runID string, n int) (domain.Run, domain.PauseState, []domain.Approval) {
	t.Helper()
	ctx := context.Background()
	run := storeRun(t, s, sess, runID, domain.RunRunning)
	st := pauseState(n)
	approvals := make([]domain.Approval, n)
	for i := range approvals {
		approvals[i] = domain.Approval{ID: fmt.Sprintf("ap-%s-%02d", runID, i), SessionID: sess.ID, RunID: run.ID, OwnerID: sess.OwnerID,
			ToolCallID: fmt.Sprintf("c%d", i), ToolName: "exec_command", Arguments: `{"cmd":"ls"}`, Status: domain.ApprovalPending,
			CreatedAt: runEpoch.Add(time.Duration(i) * time.Second)}
	}
	run.LastSeq, run.UpdatedAt = 7, runEpoch.Add(time.Minute)
	if err := s.Sessions.WriteSession(ctx, sess.ID, func(tx ports.SessionTx) error { return tx.FileApprovals(ctx, approvals, run, st) }); err != nil {
		t.Fatal(err)
	}
	run.Status = domain.RunInterrupted
	return run, st, approvals
}

// decide records status on a pending approval, with no cap.
func decide(t *testing.T, s Stores, id, status string) []domain.Approval {
	t.Helper()
	all, err := s.Approvals.DecideApproval(context.Background(), id, status, "", "", runEpoch.Add(time.Hour), 0)
	if err != nil {
		t.Fatal(err)
	}
	return all
}

func approvalIDs(list []domain.Approval) []string {
	out := make([]string, len(list))
	for i, a := range list {
		out[i] = a.ID
	}
	return out
}

// sameJSON compares values as they are stored: raw JSON fields read back
// as null where they were nil.
func sameJSON(t *testing.T, a, b any) bool {
	t.Helper()
	x, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	y, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return string(x) == string(y)
}

func approvalsFiling(t *testing.T, s Stores) {
	ctx := context.Background()
	sess := s.NewSession(t, "s1")
	run := storeRun(t, s, sess, "r1", domain.RunRunning)
	st := pauseState(2)
	filedAt := runEpoch.Add(1500 * time.Microsecond)
	decided := runEpoch
	// Filed pending, whatever decision the caller's rows carry.
	aps := []domain.Approval{
		{ID: "ap-1", SessionID: sess.ID, RunID: run.ID, OwnerID: sess.OwnerID, ToolCallID: "c0", ToolName: "exec_command", Arguments: `{"cmd":"ls"}`,
			Status: domain.ApprovalApproved, Scope: "all", Reason: "already", CreatedAt: filedAt, DecidedAt: &decided},
		{ID: "ap-2", SessionID: sess.ID, RunID: run.ID, OwnerID: sess.OwnerID, ToolCallID: "c1", ToolName: "write_file", CreatedAt: filedAt},
	}
	paused := run
	paused.AgentConfigID, paused.LastSeq, paused.UpdatedAt, paused.Input = "agent-2", 7, runEpoch.Add(time.Minute), "not stored"
	write := func(sessionID string, fn func(tx ports.SessionTx) error) error {
		return s.Sessions.WriteSession(ctx, sessionID, fn)
	}
	if err := write(sess.ID, func(tx ports.SessionTx) error { return tx.FileApprovals(ctx, aps, paused, st) }); err != nil {
		t.Fatal(err)
	}
	want := run
	want.Status, want.AgentConfigID, want.LastSeq, want.UpdatedAt = domain.RunInterrupted, "agent-2", 7, kept(paused.UpdatedAt)
	if got := findRun(t, s, run.ID); !reflect.DeepEqual(got, want) {
		t.Fatalf("the paused run:\n%+v\nwant\n%+v", got, want)
	}
	for _, a := range aps {
		w := a
		w.Status, w.Scope, w.Reason, w.DecidedAt, w.CreatedAt = domain.ApprovalPending, "", "", nil, kept(filedAt)
		if got, err := s.Approvals.FindApproval(ctx, a.ID); err != nil || !reflect.DeepEqual(got, w) {
			t.Fatalf("filed approval:\n%+v, %v\nwant\n%+v", got, err, w)
		}
	}
	if got, err := s.Approvals.PauseState(ctx, run.ID); err != nil || !sameJSON(t, got, st) {
		t.Fatalf("resume state = %+v, %v; want %+v", got, err, st)
	}

	// Refusals leave everything as it was.
	again := []domain.Approval{{ID: "ap-3", SessionID: sess.ID, RunID: run.ID, OwnerID: sess.OwnerID, ToolCallID: "c9", CreatedAt: runEpoch}}
	if err := write(sess.ID, func(tx ports.SessionTx) error { return tx.FileApprovals(ctx, again, paused, st) }); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("pausing a paused run: %v, want not_found", err)
	}
	gone := paused
	gone.ID = "nope"
	if err := write(sess.ID, func(tx ports.SessionTx) error { return tx.FileApprovals(ctx, nil, gone, st) }); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("pausing a missing run: %v, want not_found", err)
	}
	r2 := storeRun(t, s, sess, "r2", domain.RunRunning)
	p2 := r2
	p2.UpdatedAt = runEpoch.Add(time.Hour)
	of2 := func(id, call string) domain.Approval {
		return domain.Approval{ID: id, SessionID: sess.ID, RunID: r2.ID, OwnerID: sess.OwnerID, ToolCallID: call, CreatedAt: runEpoch}
	}
	boom := errors.New("boom")
	for name, c := range map[string]struct {
		approvals []domain.Approval
		fail      error
		code      errs.Code
	}{
		"a call filed twice":         {[]domain.Approval{of2("x1", "k"), of2("x2", "k")}, nil, errs.Conflict},
		"an approval id taken":       {[]domain.Approval{of2("x1", "k"), of2("ap-1", "j")}, nil, errs.Conflict},
		"a transaction failing next": {[]domain.Approval{of2("x1", "k")}, boom, ""},
	} {
		err := write(sess.ID, func(tx ports.SessionTx) error {
			if err := tx.FileApprovals(ctx, c.approvals, p2, st); err != nil {
				return err
			}
			return c.fail
		})
		if (c.fail != nil && !errors.Is(err, c.fail)) || (c.fail == nil && errs.CodeOf(err) != c.code) {
			t.Fatalf("%s: %v", name, err)
		}
		if got := findRun(t, s, r2.ID); got.Status != domain.RunRunning {
			t.Fatalf("%s left the run %s", name, got.Status)
		}
		if _, err := s.Approvals.FindApproval(ctx, "x1"); errs.CodeOf(err) != errs.NotFound {
			t.Fatalf("%s left an approval: %v", name, err)
		}
		if got, err := s.Approvals.PauseState(ctx, r2.ID); err != nil || !reflect.DeepEqual(got, domain.PauseState{}) {
			t.Fatalf("%s left a resume state: %+v, %v", name, got, err)
		}
	}
	if got, _ := s.Approvals.FindApproval(ctx, "ap-1"); got.RunID != run.ID {
		t.Fatalf("a refused filing took over an approval: %+v", got)
	}

	// The paused runs, newest of a session first found.
	if err := write(sess.ID, func(tx ports.SessionTx) error {
		return tx.FileApprovals(ctx, []domain.Approval{of2("x1", "k")}, p2, st)
	}); err != nil {
		t.Fatal(err)
	}
	if list, err := s.Approvals.ListInterruptedRuns(ctx); err != nil || !slices.Equal(runIDs(list), []string{"r1", "r2"}) {
		t.Fatalf("interrupted runs = %v, %v", runIDs(list), err)
	}
	if got, ok, err := s.Approvals.FindPausedRun(ctx, sess.ID); err != nil || !ok || got.ID != "r2" || got.Status != domain.RunInterrupted {
		t.Fatalf("the session's paused run = %s %v %v, want the newest", got.ID, ok, err)
	}
	if _, ok, err := s.Approvals.FindPausedRun(ctx, s.NewSession(t, "s2").ID); ok || err != nil {
		t.Fatalf("a session with no pause: %v, %v", ok, err)
	}
	if _, err := s.Approvals.PauseState(ctx, "nope"); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("the state of a missing run: %v, want not_found", err)
	}
	never := storeRun(t, s, sess, "r3", domain.RunCompleted)
	if got, err := s.Approvals.PauseState(ctx, never.ID); err != nil || !reflect.DeepEqual(got, domain.PauseState{}) {
		t.Fatalf("the state of a run never paused = %+v, %v; want the zero state", got, err)
	}
}

func approvalsListing(t *testing.T, s Stores) {
	ctx := context.Background()
	p, q := s.NewSession(t, "p"), s.NewSession(t, "q")
	p2 := ownSession(t, s, p, "p2")
	child := domain.Session{ID: "child", OwnerID: p.OwnerID, Hidden: true, ParentSessionID: p.ID, CreatedAt: runEpoch, UpdatedAt: runEpoch}
	if err := s.Sessions.CreateSession(ctx, child); err != nil {
		t.Fatal(err)
	}
	task := domain.Task{ID: "task", RunID: "r-child", OwnerID: p.OwnerID, ParentSessionID: p.ID, ChildSessionID: child.ID,
		Kind: domain.TaskAgent, Attempt: 1, Status: domain.TaskWorking, LaunchedAt: &runEpoch, CreatedAt: runEpoch, UpdatedAt: runEpoch}
	if err := s.Tasks.CreateTask(ctx, task, nil); err != nil {
		t.Fatal(err)
	}
	pauseRun(t, s, p, "r-p", 2)
	pauseRun(t, s, p2, "r-p2", 1)
	pauseRun(t, s, child, "r-child", 1)
	pauseRun(t, s, q, "r-q", 1)
	decide(t, s, "ap-r-p-01", domain.ApprovalApproved)

	list := func(owner, session string, want ...string) []domain.Approval {
		t.Helper()
		got, err := s.Approvals.ListApprovals(ctx, owner, session)
		if err != nil || !slices.Equal(approvalIDs(got), want) {
			t.Fatalf("pending of %s in %q = %v, %v; want %v", owner, session, approvalIDs(got), err, want)
		}
		return got
	}
	// A session's list holds its tasks' pauses (decided from the
	// conversation that spawned them), naming the task.
	got := list(p.OwnerID, p.ID, "ap-r-child-00", "ap-r-p-00")
	if got[0].TaskID != "task" || got[1].TaskID != "" {
		t.Fatalf("task ids = %q, %q; want the task whose attempt filed it", got[0].TaskID, got[1].TaskID)
	}
	list(p.OwnerID, child.ID, "ap-r-child-00")
	list(p.OwnerID, "", "ap-r-child-00", "ap-r-p-00", "ap-r-p2-00")
	list(q.OwnerID, p.ID)
	list(q.OwnerID, "", "ap-r-q-00")

	if a, err := s.Approvals.FindApproval(ctx, "ap-r-child-00"); err != nil || a.TaskID != "task" || a.SessionID != child.ID {
		t.Fatalf("found %+v, %v", a, err)
	}
	if a, err := s.Approvals.FindApproval(ctx, "ap-r-p-01"); err != nil || a.Status != domain.ApprovalApproved || a.DecidedAt == nil {
		t.Fatalf("a decided approval is found as %+v, %v", a, err)
	}
	if _, err := s.Approvals.FindApproval(ctx, "nope"); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("a missing approval: %v, want not_found", err)
	}
	byCall := func(owner, call, want string) {
		t.Helper()
		a, err := s.Approvals.FindApprovalByCall(ctx, owner, call)
		if want == "" && errs.CodeOf(err) != errs.NotFound || want != "" && (err != nil || a.ID != want) {
			t.Fatalf("%s's pending call %s = %s, %v; want %q", owner, call, a.ID, err, want)
		}
	}
	byCall(p.OwnerID, "c0", "ap-r-p2-00") // the newest of three
	byCall(p.OwnerID, "c1", "")           // decided
	byCall(q.OwnerID, "c0", "ap-r-q-00")
	byCall(q.OwnerID, "c1", "")

	expired := func(cutoff time.Time, want ...string) {
		t.Helper()
		got, err := s.Approvals.ExpiredApprovals(ctx, cutoff)
		if err != nil || !slices.Equal(approvalIDs(got), want) {
			t.Fatalf("filed before %v = %v, %v; want %v", cutoff, approvalIDs(got), err, want)
		}
	}
	expired(runEpoch)
	expired(runEpoch.Add(time.Millisecond), "ap-r-child-00", "ap-r-p-00", "ap-r-p2-00", "ap-r-q-00")
	decide(t, s, "ap-r-q-00", domain.ApprovalRejected)
	expired(runEpoch.Add(time.Hour), "ap-r-child-00", "ap-r-p-00", "ap-r-p2-00")
}

func approvalsCap(t *testing.T, s Stores) {
	ctx := context.Background()
	sess := s.NewSession(t, "held")
	paused, _, aps := pauseRun(t, s, sess, "held", 2)
	storeRun(t, s, ownSession(t, s, sess, "busy"), "busy", domain.RunRunning)
	count := func() int {
		t.Helper()
		n, err := s.Runs.CountLiveRuns(ctx, sess.OwnerID)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	// Not the last call: no resume, no cap.
	if _, err := s.Approvals.DecideApproval(ctx, aps[0].ID, domain.ApprovalApproved, "once", "", runEpoch, 1); err != nil {
		t.Fatalf("a decision that resumes nothing: %v", err)
	}
	// The last one would resume it beside the running one: refused.
	if _, err := s.Approvals.DecideApproval(ctx, aps[1].ID, domain.ApprovalApproved, "once", "", runEpoch, 1); errs.CodeOf(err) != errs.RateLimited {
		t.Fatalf("a resume past the cap: %v, want rate_limited", err)
	}
	if a, _ := s.Approvals.FindApproval(ctx, aps[1].ID); a.Status != domain.ApprovalPending || a.DecidedAt != nil {
		t.Fatalf("the refused decision was recorded: %+v", a)
	}
	if n := count(); n != 1 {
		t.Fatalf("after a refused resume %d runs are live", n)
	}
	// With room for it: decided, and the run is live from the decision on.
	if _, err := s.Approvals.DecideApproval(ctx, aps[1].ID, domain.ApprovalApproved, "once", "", runEpoch, 2); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 2 {
		t.Fatalf("a run resuming on its last decision: %d live", n)
	}
	if _, _, _, ok, err := s.Approvals.ResumeRun(ctx, paused.ID, "me", runEpoch); !ok || err != nil {
		t.Fatalf("resume: %v %v", ok, err)
	}
	if n := count(); n != 2 {
		t.Fatalf("after the resume %d live", n)
	}
}
