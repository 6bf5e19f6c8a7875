package sqlstore

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
	"github.com/agents-server/agents-server/ports/storetest"
)

// newTask stores a working (launched) task of the session.
func newTask(t *testing.T, db *DB, s domain.Session, id string, at time.Time) domain.Task {
	t.Helper()
	return storeTask(t, db, s, id, at, &at)
}

// storeTask stores a working task, queued when launched is nil.
func storeTask(t *testing.T, db *DB, s domain.Session, id string, at time.Time, launched *time.Time) domain.Task {
	t.Helper()
	task := domain.Task{ID: id, RunID: "run-" + id, OwnerID: s.OwnerID, ParentSessionID: s.ID, ParentRunID: "parent-run",
		ToolCallID: "call-" + id, Label: "label " + id, Prompt: "do " + id, Kind: domain.TaskAgent, Attempt: 1,
		Status: domain.TaskWorking, Inherit: []byte(`{"agent":"a"}`), LaunchedAt: launched, CreatedAt: at, UpdatedAt: at}
	if err := db.CreateTask(context.Background(), task, nil); err != nil {
		t.Fatal(err)
	}
	return task
}

func finalize(t *testing.T, db *DB, id, runID string, status domain.TaskStatus, at time.Time) bool {
	t.Helper()
	won, err := db.FinalizeTask(context.Background(), ports.TaskFinal{TaskID: id, RunID: runID, Status: status,
		Summary: "summary of " + id, Result: "result of " + id, At: at})
	if err != nil {
		t.Fatal(err)
	}
	return won
}

func TestTaskRowsAndListings(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t)
	s := newSession(t, db, "s1")
	a := newTask(t, db, s, "a", when)
	newTask(t, db, s, "b", when.Add(time.Second))
	if err := db.CreateTask(ctx, a, nil); errs.CodeOf(err) != errs.Conflict {
		t.Fatalf("a taken id: %v", err)
	}
	got, err := db.FindTask(ctx, "a")
	if err != nil || got.RunID != "run-a" || string(got.Inherit) != `{"agent":"a"}` || got.Attempt != 1 || !got.CreatedAt.Equal(when) {
		t.Fatalf("found %+v, %v", got, err)
	}
	if _, err := db.FindTask(ctx, "nope"); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("a missing task: %v", err)
	}
	list, _ := db.ListSessionTasks(ctx, "s1")
	if len(list) != 2 || list[0].ID != "b" {
		t.Fatalf("session tasks = %+v", list)
	}
	finalize(t, db, "b", "run-b", domain.TaskCompleted, when.Add(time.Minute))
	if n, _ := db.CountLiveTasks(ctx, "s1"); n != 1 {
		t.Fatalf("live = %d", n)
	}
	page, total, err := db.ListTasks(ctx, s.OwnerID, ports.TaskFilter{Live: true})
	if err != nil || total != 1 || len(page) != 1 || page[0].ID != "a" {
		t.Fatalf("live listing = %+v (%d), %v", page, total, err)
	}
	page, total, _ = db.ListTasks(ctx, "", ports.TaskFilter{Limit: 1, Offset: 1})
	if total != 2 || len(page) != 1 || page[0].ID != "a" {
		t.Fatalf("second page = %+v (%d)", page, total)
	}
	if page, total, _ = db.ListTasks(ctx, s.OwnerID, ports.TaskFilter{Kind: domain.TaskWorkflow}); total != 0 || len(page) != 0 {
		t.Fatalf("workflow listing = %+v", page)
	}
	// Deleting the parent session takes its tasks and debts.
	if err := db.DeleteSession(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.FindTask(ctx, "a"); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("a deleted session's task: %v", err)
	}
	if due, _ := db.SessionsWithDueWakeups(ctx); len(due) != 0 {
		t.Fatalf("a deleted session is still owed: %v", due)
	}
}

func TestFinalizeWritesOnceWithItsDebt(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t)
	s := newSession(t, db, "s1")
	newTask(t, db, s, "done", when)
	newTask(t, db, s, "broke", when)
	newTask(t, db, s, "stopped", when)
	newTask(t, db, s, "paused", when)

	if finalize(t, db, "done", "stale-run", domain.TaskCompleted, when) {
		t.Fatal("a write about another attempt won")
	}
	if !finalize(t, db, "done", "run-done", domain.TaskCompleted, when) || finalize(t, db, "done", "run-done", domain.TaskFailed, when) {
		t.Fatal("the terminal status was not written exactly once")
	}
	if got, _ := db.FindTask(ctx, "done"); got.Status != domain.TaskCompleted || got.Summary != "summary of done" || got.EndedAt == nil {
		t.Fatalf("finalized row = %+v", got)
	}
	finalize(t, db, "broke", "run-broke", domain.TaskFailed, when.Add(time.Second))
	finalize(t, db, "stopped", "run-stopped", domain.TaskCancelled, when)
	// A paused task waits on a call; the pause is attempt-scoped too.
	if ok, _ := db.PauseTask(ctx, "paused", "run-paused", domain.TaskInputRequired, "call-9", nil, when); !ok {
		t.Fatal("the pause did not take")
	}
	if ok, _ := db.PauseTask(ctx, "done", "run-done", domain.TaskWorking, "", nil, when); ok {
		t.Fatal("a final task was paused")
	}
	if got, _ := db.FindTask(ctx, "paused"); got.Status != domain.TaskInputRequired || got.PendingCallID != "call-9" {
		t.Fatalf("paused row = %+v", got)
	}

	// Two finished tasks owe one notification each; the cancelled one none.
	due, _ := db.DueWakeups(ctx, "s1")
	if len(due) != 2 || due[0].TaskID != "done" || due[1].TaskID != "broke" || due[1].Status != domain.TaskFailed || due[0].ID != "done:1" {
		t.Fatalf("due = %+v", due)
	}
	if sessions, _ := db.SessionsWithDueWakeups(ctx); len(sessions) != 1 || sessions[0] != "s1" {
		t.Fatalf("owed sessions = %v", sessions)
	}
	if err := db.SettleWakeups(ctx, []string{due[0].ID, due[1].ID}, when.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if due, _ = db.DueWakeups(ctx, "s1"); len(due) != 0 {
		t.Fatalf("settled debts still due: %+v", due)
	}
}

func TestTaskRacesHaveOneWinner(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t)
	s := newSession(t, db, "s1")
	for round := range 5 {
		id := fmt.Sprintf("t%d", round)
		newTask(t, db, s, id, when)
		var wins atomic.Int32
		storetest.Race(storetest.Racers, func(i int) {
			status := []domain.TaskStatus{domain.TaskCompleted, domain.TaskFailed, domain.TaskCancelled}[i%3]
			if won, err := db.FinalizeTask(ctx, ports.TaskFinal{TaskID: id, RunID: "run-" + id, Status: status, At: when}); err != nil {
				t.Error(err)
			} else if won {
				wins.Add(1)
			}
		})
		if wins.Load() != 1 {
			t.Fatalf("round %d: %d finalizations won", round, wins.Load())
		}
		got, _ := db.FindTask(ctx, id)
		due, _ := db.DueWakeups(ctx, "s1")
		owed := 0
		for _, w := range due {
			if w.TaskID == id {
				owed++
			}
		}
		if want := map[bool]int{true: 1, false: 0}[got.Status.OwesWakeup()]; owed != want {
			t.Fatalf("round %d: ended %s with %d debts", round, got.Status, owed)
		}
	}
}

func TestRetryReopensAFailedTaskWithinItsAttempts(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t)
	s := newSession(t, db, "s1")
	newTask(t, db, s, "t", when)
	if _, ok, _ := db.RetryTask(ctx, "t", "run-2", domain.MaxTaskAttempts, when); ok {
		t.Fatal("a working task was retried")
	}
	run := "run-t"
	for attempt := 2; attempt <= domain.MaxTaskAttempts; attempt++ {
		finalize(t, db, "t", run, domain.TaskFailed, when)
		if ok, _ := db.DismissTask(ctx, "t", when); !ok {
			t.Fatal("a failed task could not be dismissed")
		}
		next := fmt.Sprintf("run-%d", attempt)
		got, ok, err := db.RetryTask(ctx, "t", next, domain.MaxTaskAttempts, when.Add(time.Minute))
		if err != nil || !ok || got.Attempt != attempt || got.RunID != next || got.Status != domain.TaskWorking || got.Result != "" || got.Dismissed || got.EndedAt != nil {
			t.Fatalf("retry %d = %+v, %v, %v", attempt, got, ok, err)
		}
		// The old attempt's end no longer counts.
		if finalize(t, db, "t", run, domain.TaskCompleted, when) {
			t.Fatal("the previous attempt's end won after the retry")
		}
		if ok, _ := db.DismissTask(ctx, "t", when); ok {
			t.Fatal("a live task was dismissed")
		}
		run = next
	}
	finalize(t, db, "t", run, domain.TaskFailed, when)
	if _, ok, _ := db.RetryTask(ctx, "t", "run-x", domain.MaxTaskAttempts, when); ok {
		t.Fatal("a retry past the last attempt")
	}
	// Each failed attempt owed its own notification.
	if due, _ := db.DueWakeups(ctx, "s1"); len(due) != domain.MaxTaskAttempts {
		t.Fatalf("%d debts for %d failed attempts", len(due), domain.MaxTaskAttempts)
	}
}

func TestFailOrphanTasksAfterACrash(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t)
	s := newSession(t, db, "s1")
	newTask(t, db, s, "working", when)
	newTask(t, db, s, "waiting", when.Add(time.Second))
	newTask(t, db, s, "done", when)
	db.PauseTask(ctx, "waiting", "run-waiting", domain.TaskInputRequired, "c", nil, when)
	finalize(t, db, "done", "run-done", domain.TaskCompleted, when)
	end := func(domain.Task) (string, []byte) {
		return "the server restarted during this task", []byte(`{"step_id":"s2"}`)
	}
	// A failover's sweep fails only the tasks of the runs it ended.
	if some, err := db.FailOrphanTasks(ctx, []string{"run-nothing"}, time.Time{}, end, when.Add(time.Hour)); err != nil || len(some) != 0 {
		t.Fatalf("a sweep of other runs failed %+v, %v", some, err)
	}
	if some, err := db.FailOrphanTasks(ctx, []string{}, time.Time{}, end, when.Add(time.Hour)); err != nil || len(some) != 0 {
		t.Fatalf("a sweep of no runs failed %+v, %v", some, err)
	}
	orphans, err := db.FailOrphanTasks(ctx, []string{"run-working"}, time.Time{}, end, when.Add(time.Hour))
	if err != nil || len(orphans) != 1 || orphans[0].ID != "working" || orphans[0].Status != domain.TaskFailed {
		t.Fatalf("orphans = %+v, %v", orphans, err)
	}
	if got, _ := db.FindTask(ctx, "working"); got.Status != domain.TaskFailed || got.Result != "the server restarted during this task" ||
		got.Summary != got.Result || string(got.State) != `{"step_id":"s2"}` {
		t.Fatalf("orphan row = %+v", got)
	}
	// A task waiting for a decision survives: its paused run does too.
	if got, _ := db.FindTask(ctx, "waiting"); got.Status != domain.TaskInputRequired || got.PendingCallID != "c" {
		t.Fatalf("paused task after the sweep = %+v", got)
	}
	if due, _ := db.DueWakeups(ctx, "s1"); len(due) != 2 {
		t.Fatalf("due after the sweep = %+v", due)
	}
	// A second start finds nothing left to fail, and owes nothing twice.
	if again, _ := db.FailOrphanTasks(ctx, nil, time.Time{}, end, when.Add(2*time.Hour)); len(again) != 0 {
		t.Fatalf("second sweep = %+v", again)
	}
	if due, _ := db.DueWakeups(ctx, "s1"); len(due) != 2 {
		t.Fatalf("due after a second sweep = %d", len(due))
	}
}

func TestQueuedTasksWaitBehindTheCap(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t)
	s := newSession(t, db, "s1")
	newTask(t, db, s, "running", when)
	storeTask(t, db, s, "second", when.Add(2*time.Second), nil)
	storeTask(t, db, s, "first", when.Add(time.Second), nil)
	// Only launched tasks count against the cap.
	if n, _ := db.CountLiveTasks(ctx, "s1"); n != 1 {
		t.Fatalf("live = %d, want the one launched", n)
	}
	next, ok, err := db.NextQueuedTask(ctx, "s1")
	if err != nil || !ok || next.ID != "first" || !next.Queued() {
		t.Fatalf("next queued = %+v, %v, %v", next, ok, err)
	}
	if ok, _ := db.LaunchTask(ctx, "first", when.Add(time.Minute)); !ok {
		t.Fatal("the launch did not take")
	}
	if ok, _ := db.LaunchTask(ctx, "first", when.Add(time.Minute)); ok {
		t.Fatal("a task was launched twice")
	}
	if got, _ := db.FindTask(ctx, "first"); got.Queued() || got.LaunchedAt == nil || !got.LaunchedAt.Equal(when.Add(time.Minute)) {
		t.Fatalf("launched row = %+v", got)
	}
	if n, _ := db.CountLiveTasks(ctx, "s1"); n != 2 {
		t.Fatalf("live after the launch = %d", n)
	}
	// A stopped queued task leaves the queue; a retried one rejoins it.
	finalize(t, db, "second", "run-second", domain.TaskCancelled, when)
	if _, ok, _ := db.NextQueuedTask(ctx, "s1"); ok {
		t.Fatal("a cancelled task is still queued")
	}
	finalize(t, db, "running", "run-running", domain.TaskFailed, when)
	retried, ok, _ := db.RetryTask(ctx, "running", "run-running-2", domain.MaxTaskAttempts, when.Add(time.Hour))
	if !ok || !retried.Queued() {
		t.Fatalf("a retry is not queued: %+v", retried)
	}
	if next, ok, _ := db.NextQueuedTask(ctx, "s1"); !ok || next.ID != "running" {
		t.Fatalf("next after the retry = %+v, %v", next, ok)
	}
}

func TestPruneTasksKeepsWhatIsStillNeeded(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t)
	s := newSession(t, db, "s1")
	child := func(id string) {
		c := domain.Session{ID: id, OwnerID: s.OwnerID, Hidden: true, ParentSessionID: s.ID, CreatedAt: when, UpdatedAt: when}
		if err := db.CreateSession(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	child("named")
	child("orphan")
	storeTask(t, db, s, "t", when, &when)
	db.exec(ctx, `UPDATE tasks SET child_session_id = 'named' WHERE id = 't'`)
	finalize(t, db, "t", "run-t", domain.TaskCompleted, when)
	due, _ := db.DueWakeups(ctx, s.ID)
	if err := db.SettleWakeups(ctx, []string{due[0].ID}, when); err != nil {
		t.Fatal(err)
	}
	// Nothing is old enough yet.
	if n, err := db.PruneTasks(ctx, when.Add(-time.Hour), when.Add(-time.Hour)); err != nil || n != 0 {
		t.Fatalf("early prune = %d, %v", n, err)
	}
	if n, err := db.PruneTasks(ctx, when.Add(time.Hour), when.Add(time.Hour)); err != nil || n != 2 {
		t.Fatalf("prune = %d, %v", n, err)
	}
	if _, err := db.FindSession(ctx, "orphan"); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("the orphan session survived: %v", err)
	}
	if _, err := db.FindSession(ctx, "named"); err != nil {
		t.Fatalf("a task's session went: %v", err)
	}
}

// CreateTask's admit is told the parent's live (launched, not final) and
// queued (working, not launched) tasks; its refusal writes nothing.
func TestCreateTaskAdmitsByTheSessionsCounts(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t)
	s := newSession(t, db, "s1")
	newTask(t, db, s, "live", when)
	storeTask(t, db, s, "queued", when, nil)
	newTask(t, db, s, "done", when)
	finalize(t, db, "done", "run-done", domain.TaskCompleted, when)
	other := newSession(t, db, "s2")
	storeTask(t, db, other, "elsewhere", when, nil)

	full := errs.E(errs.Conflict, "full")
	next := domain.Task{ID: "next", RunID: "run-next", OwnerID: s.OwnerID, ParentSessionID: s.ID, Kind: domain.TaskAgent,
		Status: domain.TaskWorking, CreatedAt: when, UpdatedAt: when}
	var live, queued int
	err := db.CreateTask(ctx, next, func(l, q int) error { live, queued = l, q; return full })
	if err != full || live != 1 || queued != 1 {
		t.Fatalf("admit saw %d live, %d queued; insert = %v", live, queued, err)
	}
	if _, err := db.FindTask(ctx, "next"); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("a refused task was written: %v", err)
	}
	if err := db.CreateTask(ctx, next, func(int, int) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := db.FindTask(ctx, "next"); err != nil {
		t.Fatalf("an admitted task: %v", err)
	}
}
