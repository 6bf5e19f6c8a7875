package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// TaskStores is one database as the task contract uses it: its tasks,
// the sessions they run on (whose write transactions end attempts) and
// the approvals a workflow's pause_before files.
type TaskStores struct {
	Tasks     ports.TaskStore
	Sessions  ports.SessionStore
	Approvals ports.ApprovalStore
	// Runs is the same database's runs, which go with a pruned session.
	Runs ports.RunStore
	// NewSession stores a visible session with that id, of an owner of
	// its own, and returns it.
	NewSession func(t *testing.T, id string) domain.Session
}

// taskEpoch is when the contract's rows happen.
var taskEpoch = time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)

// Tasks is the contract of ports.TaskStore and the task writes of a
// session transaction, as the task manager leans on them: the cap's
// counts and queue, attempt-scoped compare-and-sets with one debt per
// completed or failed attempt, a workflow's step hold and decision, the
// restart sweep and pruning. open returns an empty database.
func Tasks(t *testing.T, open func(t *testing.T) TaskStores) {
	t.Run("queue, cap counts and launch", func(t *testing.T) { tasksQueue(t, open(t)) })
	t.Run("one ending per attempt, with its debt", func(t *testing.T) { tasksEnding(t, open(t)) })
	t.Run("a session transaction's task writes", func(t *testing.T) { tasksInTx(t, open(t)) })
	t.Run("a step held for a decision", func(t *testing.T) { tasksStep(t, open(t)) })
	t.Run("retry, dismiss and the restart sweep", func(t *testing.T) { tasksRetry(t, open(t)) })
	t.Run("pruning", func(t *testing.T) { tasksPrune(t, open(t)) })
	t.Run("stalled queues", func(t *testing.T) { tasksStalled(t, open(t)) })
}

// tasksStalled: a queue is stalled where a task has waited queued since
// before the cutoff while its conversation has room under the cap — a
// launch owed and never made — and nowhere else.
func tasksStalled(t *testing.T, s TaskStores) {
	ctx := context.Background()
	cutoff := taskEpoch.Add(time.Minute)
	stalled := func(limit int) []string {
		t.Helper()
		got, err := s.Tasks.StalledQueues(ctx, cutoff, limit)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	if got := stalled(1); len(got) != 0 {
		t.Fatalf("an empty database has stalled queues %v", got)
	}
	// p1: an old queued task behind one live task.
	p1 := s.NewSession(t, "p1")
	storeTask(t, s, p1, "p1-live", taskEpoch, true)
	storeTask(t, s, p1, "p1-waits", taskEpoch, false)
	storeTask(t, s, p1, "p1-waits-too", taskEpoch, false)
	// p2: only a task queued after the cutoff, which its launcher may
	// still be launching.
	p2 := s.NewSession(t, "p2")
	storeTask(t, s, p2, "p2-new", cutoff.Add(time.Second), false)
	// p3: an old queued task that was cancelled, and an old launched one.
	p3 := s.NewSession(t, "p3")
	storeTask(t, s, p3, "p3-gone", taskEpoch, false)
	finalTask(t, s, "p3-gone", "run-p3-gone", domain.TaskCancelled)
	storeTask(t, s, p3, "p3-running", taskEpoch, true)
	// p4: a workflow advanced to its next step before the cutoff, its
	// launch never made: queued again, nothing live.
	p4 := s.NewSession(t, "p4")
	storeTask(t, s, p4, "p4-wf", taskEpoch, true)
	adv := ports.TaskAdvance{TaskID: "p4-wf", RunID: "run-p4-wf", NewRunID: "run-p4-wf-2", AgentConfigID: "a", State: []byte(`{}`),
		At: taskEpoch.Add(time.Second)}
	if err := s.Sessions.WriteSession(ctx, p4.ID, func(tx ports.SessionTx) error { _, err := tx.AdvanceTask(ctx, adv); return err }); err != nil {
		t.Fatal(err)
	}
	if got := stalled(2); len(got) != 2 || got[0] != p1.ID || got[1] != p4.ID {
		t.Fatalf("stalled under a cap of 2: %v, want p1 and p4", got)
	}
	// At the cap, p1's queue waits for its live task to end: not stalled.
	if got := stalled(1); len(got) != 1 || got[0] != p4.ID {
		t.Fatalf("stalled under a cap of 1: %v, want p4 alone", got)
	}
}

// storeTask writes a working task of parent, queued when launched is
// false.
func storeTask(t *testing.T, s TaskStores, parent domain.Session, id string, at time.Time, launched bool) domain.Task {
	t.Helper()
	task := domain.Task{ID: id, RunID: "run-" + id, OwnerID: parent.OwnerID, ParentSessionID: parent.ID, Label: id, Prompt: "do " + id,
		Kind: domain.TaskAgent, Attempt: 1, Status: domain.TaskWorking, CreatedAt: at, UpdatedAt: at}
	if launched {
		task.LaunchedAt = &at
	}
	if err := s.Tasks.CreateTask(context.Background(), task, nil); err != nil {
		t.Fatal(err)
	}
	return task
}

func findTask(t *testing.T, s TaskStores, id string) domain.Task {
	t.Helper()
	got, err := s.Tasks.FindTask(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func finalTask(t *testing.T, s TaskStores, id, runID string, status domain.TaskStatus) bool {
	t.Helper()
	won, err := s.Tasks.FinalizeTask(context.Background(), ports.TaskFinal{TaskID: id, RunID: runID, Status: status,
		Summary: "sum " + id, Result: "res " + id, At: taskEpoch.Add(time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	return won
}

func tasksQueue(t *testing.T, s TaskStores) {
	ctx := context.Background()
	p := s.NewSession(t, "p1")
	storeTask(t, s, p, "live", taskEpoch, true)
	storeTask(t, s, p, "second", taskEpoch.Add(2*time.Second), false)
	storeTask(t, s, p, "first", taskEpoch.Add(time.Second), false)
	var live, queued int
	full := errs.E(errs.Conflict, "full")
	next := domain.Task{ID: "next", RunID: "run-next", OwnerID: p.OwnerID, ParentSessionID: p.ID, Kind: domain.TaskAgent,
		Status: domain.TaskWorking, CreatedAt: taskEpoch, UpdatedAt: taskEpoch}
	if err := s.Tasks.CreateTask(ctx, next, func(l, q int) error { live, queued = l, q; return full }); err != full || live != 1 || queued != 2 {
		t.Fatalf("admit saw %d live and %d queued, insert = %v", live, queued, err)
	}
	if _, err := s.Tasks.FindTask(ctx, "next"); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("a refused task was written: %v", err)
	}
	if n, _ := s.Tasks.CountLiveTasks(ctx, p.ID); n != 1 {
		t.Fatalf("live = %d, want only the launched one", n)
	}
	got, ok, err := s.Tasks.NextQueuedTask(ctx, p.ID)
	if err != nil || !ok || got.ID != "first" || !got.Queued() {
		t.Fatalf("next queued = %s %v %v, want the oldest", got.ID, ok, err)
	}
	at := taskEpoch.Add(time.Hour)
	if won, _ := s.Tasks.LaunchTask(ctx, "first", at); !won {
		t.Fatal("the launch did not take")
	}
	if won, _ := s.Tasks.LaunchTask(ctx, "first", at); won {
		t.Fatal("a task was launched twice")
	}
	if got := findTask(t, s, "first"); got.LaunchedAt == nil || !got.LaunchedAt.Equal(at) {
		t.Fatalf("launched at %v", got.LaunchedAt)
	}
	finalTask(t, s, "second", "run-second", domain.TaskCancelled)
	if _, ok, _ := s.Tasks.NextQueuedTask(ctx, p.ID); ok {
		t.Fatal("a cancelled task is still queued")
	}
	if won, _ := s.Tasks.LaunchTask(ctx, "second", at); won {
		t.Fatal("a final task was launched")
	}
	list, _ := s.Tasks.ListSessionTasks(ctx, p.ID)
	if len(list) != 3 || list[0].ID != "second" || list[2].ID != "live" {
		t.Fatalf("session tasks not newest first: %v", taskIDs(list))
	}
	page, total, _ := s.Tasks.ListTasks(ctx, p.OwnerID, ports.TaskFilter{Live: true, Limit: 1, Offset: 1})
	if total != 2 || len(page) != 1 || page[0].ID != "live" {
		t.Fatalf("live listing page 2 = %v of %d", taskIDs(page), total)
	}
}

func taskIDs(list []domain.Task) []string {
	out := make([]string, len(list))
	for i, t := range list {
		out[i] = t.ID
	}
	return out
}

func tasksEnding(t *testing.T, s TaskStores) {
	ctx := context.Background()
	p := s.NewSession(t, "p1")
	for _, id := range []string{"done", "broke", "stopped", "paused"} {
		storeTask(t, s, p, id, taskEpoch, true)
	}
	if won, _ := s.Tasks.PauseTask(ctx, "paused", "run-paused", domain.TaskInputRequired, "call-1", []byte(`{"x":1}`), taskEpoch); !won {
		t.Fatal("the pause did not take")
	}
	if got := findTask(t, s, "paused"); got.Status != domain.TaskInputRequired || got.PendingCallID != "call-1" || string(got.State) != `{"x":1}` {
		t.Fatalf("paused = %s %q %s", got.Status, got.PendingCallID, got.State)
	}
	if won, _ := s.Tasks.PauseTask(ctx, "paused", "another-run", domain.TaskWorking, "", nil, taskEpoch); won {
		t.Fatal("a pause about another attempt took")
	}
	if finalTask(t, s, "done", "stale-run", domain.TaskCompleted) {
		t.Fatal("an ending about another attempt won")
	}
	if !finalTask(t, s, "done", "run-done", domain.TaskCompleted) || finalTask(t, s, "done", "run-done", domain.TaskFailed) {
		t.Fatal("the ending was not written exactly once")
	}
	finalTask(t, s, "broke", "run-broke", domain.TaskFailed)
	finalTask(t, s, "stopped", "run-stopped", domain.TaskCancelled)
	if !finalTask(t, s, "paused", "run-paused", domain.TaskCompleted) {
		t.Fatal("a paused attempt could not end")
	}
	if got := findTask(t, s, "done"); got.Summary != "sum done" || got.Result != "res done" || got.EndedAt == nil {
		t.Fatalf("ended = %+v", got)
	}
	if got := findTask(t, s, "paused"); got.PendingCallID != "" {
		t.Fatalf("an ended task still waits on %q", got.PendingCallID)
	}
	if won, _ := s.Tasks.PauseTask(ctx, "done", "run-done", domain.TaskWorking, "", nil, taskEpoch); won {
		t.Fatal("a final task was paused")
	}
	due, _ := s.Tasks.DueWakeups(ctx, p.ID)
	owed := map[string]domain.TaskStatus{}
	for _, w := range due {
		owed[w.ID] = w.Status
	}
	if len(due) != 3 || owed["done:1"] != domain.TaskCompleted || owed["broke:1"] != domain.TaskFailed || owed["paused:1"] != domain.TaskCompleted {
		t.Fatalf("debts = %v, want one per completed or failed attempt, none for a stop", owed)
	}
	if sessions, _ := s.Tasks.SessionsWithDueWakeups(ctx); len(sessions) != 1 || sessions[0] != p.ID {
		t.Fatalf("owed sessions = %v", sessions)
	}
	if err := s.Tasks.SettleWakeups(ctx, []string{"done:1", "broke:1"}, taskEpoch); err != nil {
		t.Fatal(err)
	}
	// Outside a transaction a debt settled already is no error.
	if err := s.Tasks.SettleWakeups(ctx, []string{"done:1", "paused:1"}, taskEpoch); err != nil {
		t.Fatal(err)
	}
	if due, _ := s.Tasks.DueWakeups(ctx, p.ID); len(due) != 0 {
		t.Fatalf("settled debts still due: %+v", due)
	}
}

func tasksInTx(t *testing.T, s TaskStores) {
	ctx := context.Background()
	p := s.NewSession(t, "p1")
	storeTask(t, s, p, "wf", taskEpoch, true)
	storeTask(t, s, p, "done", taskEpoch, true)
	finalTask(t, s, "done", "run-done", domain.TaskFailed)
	write := func(fn func(tx ports.SessionTx) error) error {
		return s.Sessions.WriteSession(ctx, p.ID, fn)
	}
	// A step run's state is written while that run is the task's.
	if err := write(func(tx ports.SessionTx) error {
		return tx.RecordTaskState(ctx, "wf", "run-wf", []byte(`{"step":1}`), taskEpoch)
	}); err != nil {
		t.Fatal(err)
	}
	if err := write(func(tx ports.SessionTx) error {
		return tx.RecordTaskState(ctx, "done", "run-done", []byte(`{}`), taskEpoch)
	}); errs.CodeOf(err) != errs.Conflict {
		t.Fatalf("state of a final task: %v, want conflict", err)
	}
	adv := ports.TaskAdvance{TaskID: "wf", RunID: "run-wf", NewRunID: "run-wf-2", AgentConfigID: "agent-2", State: []byte(`{"step":2}`), At: taskEpoch}
	var won bool
	if err := write(func(tx ports.SessionTx) (err error) { won, err = tx.AdvanceTask(ctx, adv); return err }); err != nil || !won {
		t.Fatalf("advance = %v, %v", won, err)
	}
	if got := findTask(t, s, "wf"); got.RunID != "run-wf-2" || got.AgentConfigID != "agent-2" || string(got.State) != `{"step":2}` || !got.Queued() {
		t.Fatalf("advanced = run %s agent %s state %s queued %v", got.RunID, got.AgentConfigID, got.State, got.Queued())
	}
	if err := write(func(tx ports.SessionTx) (err error) { won, err = tx.AdvanceTask(ctx, adv); return err }); err != nil || won {
		t.Fatalf("a second advance from the same run = %v, %v", won, err)
	}
	if err := write(func(tx ports.SessionTx) (err error) {
		won, err = tx.FinalizeTask(ctx, ports.TaskFinal{TaskID: "wf", RunID: "run-wf-2", Status: domain.TaskCompleted, At: taskEpoch})
		return err
	}); err != nil || !won {
		t.Fatalf("an ending in a transaction = %v, %v", won, err)
	}
	// In a transaction every debt is settled, or none and conflict.
	if err := write(func(tx ports.SessionTx) error { return tx.SettleWakeups(ctx, []string{"done:1"}, taskEpoch) }); err != nil {
		t.Fatal(err)
	}
	err := write(func(tx ports.SessionTx) error { return tx.SettleWakeups(ctx, []string{"wf:1", "done:1"}, taskEpoch) })
	if errs.CodeOf(err) != errs.Conflict {
		t.Fatalf("settling a paid debt again: %v, want conflict", err)
	}
	if due, _ := s.Tasks.DueWakeups(ctx, p.ID); len(due) != 1 || due[0].ID != "wf:1" {
		t.Fatalf("a refused settlement paid something: due %+v", due)
	}
}

func tasksStep(t *testing.T, s TaskStores) {
	ctx := context.Background()
	p := s.NewSession(t, "p1")
	storeTask(t, s, p, "wf", taskEpoch, true)
	hold := func(id, runID, call string) domain.Approval {
		return domain.Approval{ID: id, SessionID: p.ID, RunID: runID, OwnerID: p.OwnerID, ToolCallID: call, ToolName: domain.StepApprovalTool,
			Arguments: `{}`, CreatedAt: taskEpoch}
	}
	a := hold("ap-1", "run-wf", "step_run-wf")
	if won, err := s.Tasks.PauseStep(ctx, "wf", hold("ap-0", "another-run", "step_x"), taskEpoch); err != nil || won {
		t.Fatalf("a hold on another attempt = %v, %v", won, err)
	}
	if won, err := s.Tasks.PauseStep(ctx, "wf", a, taskEpoch); err != nil || !won {
		t.Fatalf("hold = %v, %v", won, err)
	}
	if got := findTask(t, s, "wf"); got.Status != domain.TaskInputRequired || got.PendingCallID != a.ToolCallID || got.LaunchedAt != nil {
		t.Fatalf("held = %s %q launched %v", got.Status, got.PendingCallID, got.LaunchedAt)
	}
	if got, err := s.Approvals.FindApproval(ctx, "ap-1"); err != nil || got.Status != domain.ApprovalPending || got.ToolName != domain.StepApprovalTool ||
		got.TaskID != "wf" {
		t.Fatalf("the step approval = %+v, %v", got, err)
	}
	if pending, _ := s.Approvals.ListApprovals(ctx, p.OwnerID, p.ID); len(pending) != 1 {
		t.Fatalf("pending approvals = %d", len(pending))
	}
	// An approval goes back to working with the new state, once.
	if won, err := s.Tasks.ResolveStep(ctx, a, nil, []byte(`{"cleared":"run-wf"}`), taskEpoch); err != nil || !won {
		t.Fatalf("approve = %v, %v", won, err)
	}
	if won, _ := s.Tasks.ResolveStep(ctx, a, nil, []byte(`{}`), taskEpoch); won {
		t.Fatal("a step was decided twice")
	}
	if got := findTask(t, s, "wf"); got.Status != domain.TaskWorking || got.PendingCallID != "" || string(got.State) != `{"cleared":"run-wf"}` {
		t.Fatalf("approved = %s %q %s", got.Status, got.PendingCallID, got.State)
	}
	if _, err := s.Approvals.FindApproval(ctx, "ap-1"); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("a decided step approval stays: %v", err)
	}
	// A rejection ends the task with its approval.
	b := hold("ap-2", "run-wf", "step_again")
	if won, _ := s.Tasks.PauseStep(ctx, "wf", b, taskEpoch); !won {
		t.Fatal("the second hold did not take")
	}
	end := &ports.TaskFinal{TaskID: "wf", RunID: "run-wf", Status: domain.TaskCancelled, Result: "rejected", Summary: "rejected", At: taskEpoch}
	if won, err := s.Tasks.ResolveStep(ctx, b, end, nil, taskEpoch); err != nil || !won {
		t.Fatalf("reject = %v, %v", won, err)
	}
	if got := findTask(t, s, "wf"); got.Status != domain.TaskCancelled || got.Result != "rejected" {
		t.Fatalf("rejected = %s %q", got.Status, got.Result)
	}
	// A held task stopped takes its step approval (its run never started).
	storeTask(t, s, p, "wf2", taskEpoch, true)
	c := hold("ap-3", "run-wf2", "step_run-wf2")
	if won, _ := s.Tasks.PauseStep(ctx, "wf2", c, taskEpoch); !won {
		t.Fatal("the third hold did not take")
	}
	if !finalTask(t, s, "wf2", "run-wf2", domain.TaskCancelled) {
		t.Fatal("a held task could not be stopped")
	}
	if _, err := s.Approvals.FindApproval(ctx, "ap-3"); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("a stopped task's step approval stays: %v", err)
	}
	if won, _ := s.Tasks.ResolveStep(ctx, c, nil, []byte(`{}`), taskEpoch); won {
		t.Fatal("a stopped task's step was decided")
	}
}

func tasksRetry(t *testing.T, s TaskStores) {
	ctx := context.Background()
	p := s.NewSession(t, "p1")
	storeTask(t, s, p, "t", taskEpoch, true)
	if _, won, _ := s.Tasks.RetryTask(ctx, "t", "run-2", domain.MaxTaskAttempts, taskEpoch); won {
		t.Fatal("a working task was retried")
	}
	if won, _ := s.Tasks.DismissTask(ctx, "t", taskEpoch); won {
		t.Fatal("a live task was dismissed")
	}
	finalTask(t, s, "t", "run-t", domain.TaskFailed)
	if won, _ := s.Tasks.DismissTask(ctx, "t", taskEpoch); !won || !findTask(t, s, "t").Dismissed {
		t.Fatal("a failed task could not be dismissed")
	}
	got, won, err := s.Tasks.RetryTask(ctx, "t", "run-2", domain.MaxTaskAttempts, taskEpoch.Add(time.Hour))
	if err != nil || !won || got.Attempt != 2 || got.RunID != "run-2" || got.Status != domain.TaskWorking || got.Dismissed || got.Result != "" ||
		got.EndedAt != nil || !got.Queued() {
		t.Fatalf("retry = %+v, %v, %v", got, won, err)
	}
	if finalTask(t, s, "t", "run-t", domain.TaskCompleted) {
		t.Fatal("the previous attempt's ending won after the retry")
	}
	finalTask(t, s, "t", "run-2", domain.TaskFailed)
	if _, won, _ := s.Tasks.RetryTask(ctx, "t", "run-3", 2, taskEpoch); won {
		t.Fatal("a retry past the last attempt")
	}
	// The restart sweep: working tasks (queued too) fail with what end
	// gives them; one waiting for a decision stays.
	storeTask(t, s, p, "working", taskEpoch, true)
	storeTask(t, s, p, "queued", taskEpoch.Add(time.Second), false)
	storeTask(t, s, p, "waiting", taskEpoch, true)
	s.Tasks.PauseTask(ctx, "waiting", "run-waiting", domain.TaskInputRequired, "c", nil, taskEpoch)
	end := func(t domain.Task) (string, []byte) { return "restarted: " + t.ID, []byte(`{"swept":true}`) }
	if some, err := s.Tasks.FailOrphanTasks(ctx, []string{}, time.Time{}, end, taskEpoch); err != nil || len(some) != 0 {
		t.Fatalf("a sweep of no runs = %v, %v", taskIDs(some), err)
	}
	some, err := s.Tasks.FailOrphanTasks(ctx, []string{"run-queued"}, time.Time{}, end, taskEpoch)
	if err != nil || len(some) != 1 || some[0].ID != "queued" || some[0].Status != domain.TaskFailed {
		t.Fatalf("a failover's sweep = %v, %v", taskIDs(some), err)
	}
	all, err := s.Tasks.FailOrphanTasks(ctx, nil, time.Time{}, end, taskEpoch)
	if err != nil || len(all) != 1 || all[0].ID != "working" || all[0].Result != "restarted: working" || string(all[0].State) != `{"swept":true}` {
		t.Fatalf("a start's sweep = %+v, %v", all, err)
	}
	if got := findTask(t, s, "waiting"); got.Status != domain.TaskInputRequired {
		t.Fatalf("a task waiting for a decision was swept: %s", got.Status)
	}
	due, _ := s.Tasks.DueWakeups(ctx, p.ID)
	if len(due) != 4 { // t:1, t:2, queued:1, working:1
		t.Fatalf("debts after the sweep = %d", len(due))
	}
	// A failover's sweep also fails a task launched before launchedBefore
	// whose run was never recorded (its replica died in between) — not one
	// launched since, nor one whose run exists (the runs' sweep's).
	storeTask(t, s, p, "lost", taskEpoch, true)
	storeTask(t, s, p, "young", taskEpoch.Add(2*time.Second), true)
	storeTask(t, s, p, "started", taskEpoch, true)
	if err := s.Runs.CreateRun(ctx, domain.Run{ID: "run-started", SessionID: p.ID, OwnerID: p.OwnerID, Status: domain.RunRunning,
		CreatedAt: taskEpoch, UpdatedAt: taskEpoch}); err != nil {
		t.Fatal(err)
	}
	lost, err := s.Tasks.FailOrphanTasks(ctx, []string{}, taskEpoch.Add(time.Second), end, taskEpoch)
	if err != nil || len(lost) != 1 || lost[0].ID != "lost" || lost[0].Status != domain.TaskFailed {
		t.Fatalf("a failover's sweep of launches that never started = %v, %v", taskIDs(lost), err)
	}
	if due, _ := s.Tasks.DueWakeups(ctx, p.ID); len(due) != 5 {
		t.Fatalf("debts after the launches' sweep = %d", len(due))
	}
}

func tasksPrune(t *testing.T, s TaskStores) {
	ctx := context.Background()
	p := s.NewSession(t, "p1")
	child := func(id string) {
		c := domain.Session{ID: id, OwnerID: p.OwnerID, Hidden: true, ParentSessionID: p.ID, CreatedAt: taskEpoch, UpdatedAt: taskEpoch}
		if err := s.Sessions.CreateSession(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	child("named")
	child("orphan")
	task := domain.Task{ID: "t", RunID: "run-t", OwnerID: p.OwnerID, ParentSessionID: p.ID, ChildSessionID: "named", Kind: domain.TaskAgent,
		Attempt: 1, Status: domain.TaskWorking, LaunchedAt: &taskEpoch, CreatedAt: taskEpoch, UpdatedAt: taskEpoch}
	if err := s.Tasks.CreateTask(ctx, task, nil); err != nil {
		t.Fatal(err)
	}
	finalTask(t, s, "t", "run-t", domain.TaskCompleted)
	if err := s.Tasks.SettleWakeups(ctx, []string{"t:1"}, taskEpoch); err != nil {
		t.Fatal(err)
	}
	// The orphan spawned a task of its own, which ended owing it a debt:
	// both go with the orphan (the cascade of deleting its session row).
	nested := domain.Task{ID: "nested", RunID: "run-nested", OwnerID: p.OwnerID, ParentSessionID: "orphan", Kind: domain.TaskAgent,
		Attempt: 1, Status: domain.TaskWorking, LaunchedAt: &taskEpoch, CreatedAt: taskEpoch, UpdatedAt: taskEpoch}
	if err := s.Tasks.CreateTask(ctx, nested, nil); err != nil {
		t.Fatal(err)
	}
	finalTask(t, s, "nested", "run-nested", domain.TaskCompleted)
	if due, _ := s.Tasks.DueWakeups(ctx, "orphan"); len(due) != 1 {
		t.Fatalf("the orphan's debts before the prune = %+v", due)
	}
	orphanRun := domain.Run{ID: "run-orphan", SessionID: "orphan", OwnerID: p.OwnerID, AgentConfigID: "agent", Status: domain.RunCompleted,
		CreatedAt: taskEpoch, UpdatedAt: taskEpoch, EndedAt: &taskEpoch}
	if err := s.Runs.CreateRun(ctx, orphanRun); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Tasks.PruneTasks(ctx, taskEpoch.Add(-time.Hour), taskEpoch.Add(-time.Hour)); err != nil || n != 0 {
		t.Fatalf("an early prune = %d, %v", n, err)
	}
	if n, err := s.Tasks.PruneTasks(ctx, taskEpoch.Add(time.Hour), taskEpoch.Add(time.Hour)); err != nil || n != 2 {
		t.Fatalf("prune = %d, %v; want the settled debt and the orphan session", n, err)
	}
	if _, err := s.Sessions.FindSession(ctx, "orphan"); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("the orphan session survived: %v", err)
	}
	for _, id := range []string{"named", p.ID} {
		if _, err := s.Sessions.FindSession(ctx, id); err != nil {
			t.Fatalf("session %s went: %v", id, err)
		}
	}
	if _, err := s.Tasks.FindTask(ctx, "nested"); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("the pruned orphan's task: %v, want not_found", err)
	}
	if due, err := s.Tasks.DueWakeups(ctx, "orphan"); err != nil || len(due) != 0 {
		t.Fatalf("the pruned orphan is still owed %+v, %v", due, err)
	}
	if owed, err := s.Tasks.SessionsWithDueWakeups(ctx); err != nil || len(owed) != 0 {
		t.Fatalf("sessions owed a notification after the prune = %v, %v", owed, err)
	}
	if _, err := s.Runs.FindRun(ctx, "run-orphan"); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("the pruned orphan's run: %v, want not_found", err)
	}
	if got := findTask(t, s, "t"); got.ChildSessionID != "named" {
		t.Fatalf("the named session's task after the prune = %+v", got)
	}
}
