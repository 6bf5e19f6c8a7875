package porttest

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// TaskStore is an in-memory ports.TaskStore, and the task side of a
// SessionStore's write transactions (set it as SessionStore.Tasks). Every
// method is atomic under one lock; times are kept as a store keeps them
// (UTC, whole milliseconds). The zero value is empty and ready; Runs and
// Sessions are where the other tables a task write reaches live.
type TaskStore struct {
	// Runs keeps the step approvals PauseStep files, ResolveStep decides
	// and FinalizeTask drops with a run that never started; without it
	// those writes fail with internal.
	Runs *RunStore
	// Sessions holds the hidden task sessions PruneTasks deletes when no
	// task names them; without it none are pruned.
	Sessions *SessionStore

	mu      sync.Mutex
	tasks   map[string]domain.Task
	wakeups map[string]domain.TaskWakeup
	byRun   int // FindTaskByRun calls
}

var _ ports.TaskStore = (*TaskStore)(nil)

// storedTask is t with its times as the store keeps them.
func storedTask(t domain.Task) domain.Task {
	t.CreatedAt, t.UpdatedAt = storedTime(t.CreatedAt), storedTime(t.UpdatedAt)
	t.LaunchedAt, t.EndedAt = storedTimePtr(t.LaunchedAt), storedTimePtr(t.EndedAt)
	t.Attempt = max(t.Attempt, 1)
	t.Inherit, t.State = slices.Clone(t.Inherit), slices.Clone(t.State)
	return t
}

func storedTimePtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	s := storedTime(*t)
	return &s
}

// tasksNewestFirst orders tasks as the listings do: created_at, then id, descending.
func tasksNewestFirst(a, b domain.Task) int {
	if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
		return c
	}
	return cmp.Compare(b.ID, a.ID)
}

// whereLocked lists the tasks keep accepts, newest first; s.mu is held.
func (s *TaskStore) whereLocked(keep func(domain.Task) bool) []domain.Task {
	out := []domain.Task{}
	for _, t := range s.tasks {
		if keep(t) {
			out = append(out, storedTask(t))
		}
	}
	slices.SortFunc(out, tasksNewestFirst)
	return out
}

// countsLocked are a parent session's live (launched, not final) and queued
// (working, not launched) tasks; s.mu is held.
func (s *TaskStore) countsLocked(parentID string) (live, queued int) {
	for _, t := range s.tasks {
		switch {
		case t.ParentSessionID != parentID:
		case t.LaunchedAt != nil && t.Live():
			live++
		case t.LaunchedAt == nil && t.Status == domain.TaskWorking:
			queued++
		}
	}
	return live, queued
}

// CreateTask implements ports.TaskStore.
func (s *TaskStore) CreateTask(ctx context.Context, t domain.Task, admit func(live, queued int) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if admit != nil {
		if err := admit(s.countsLocked(t.ParentSessionID)); err != nil {
			return err
		}
	}
	if _, taken := s.tasks[t.ID]; taken {
		return errs.E(errs.Conflict, "task %s already exists", t.ID)
	}
	if s.tasks == nil {
		s.tasks = map[string]domain.Task{}
	}
	s.tasks[t.ID] = storedTask(t)
	return nil
}

// FindTask implements ports.TaskStore.
func (s *TaskStore) FindTask(ctx context.Context, id string) (domain.Task, error) {
	if err := ctx.Err(); err != nil {
		return domain.Task{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tasks[id]
	if !ok {
		return domain.Task{}, errs.E(errs.NotFound, "task not found")
	}
	return storedTask(t), nil
}

// FindTaskByRun implements ports.TaskStore.
func (s *TaskStore) FindTaskByRun(ctx context.Context, runID string) (domain.Task, error) {
	if err := ctx.Err(); err != nil {
		return domain.Task{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.byRun++
	found := s.whereLocked(func(t domain.Task) bool { return t.RunID == runID })
	if len(found) == 0 {
		return domain.Task{}, errs.E(errs.NotFound, "task not found")
	}
	return found[0], nil
}

// ListSessionTasks implements ports.TaskStore.
func (s *TaskStore) ListSessionTasks(ctx context.Context, parentSessionID string) ([]domain.Task, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.whereLocked(func(t domain.Task) bool { return t.ParentSessionID == parentSessionID }), nil
}

// ListTasks implements ports.TaskStore: a limit of 0 is a page of 100.
func (s *TaskStore) ListTasks(ctx context.Context, ownerID string, f ports.TaskFilter) ([]domain.Task, int, error) {
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	all := s.whereLocked(func(t domain.Task) bool {
		return (ownerID == "" || t.OwnerID == ownerID) && (f.Kind == "" || t.Kind == f.Kind) && (!f.Live || t.Live())
	})
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	from := min(max(f.Offset, 0), len(all))
	return all[from:min(from+limit, len(all))], len(all), nil
}

// CountLiveTasks implements ports.TaskStore.
func (s *TaskStore) CountLiveTasks(ctx context.Context, parentSessionID string) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	live, _ := s.countsLocked(parentSessionID)
	return live, nil
}

// changeLocked applies fn to task id when when accepts it, and reports whether
// it did; s.mu is held.
func (s *TaskStore) changeLocked(id string, when func(domain.Task) bool, fn func(*domain.Task)) bool {
	t, ok := s.tasks[id]
	if !ok || !when(t) {
		return false
	}
	fn(&t)
	s.tasks[id] = storedTask(t)
	return true
}

// LaunchTask implements ports.TaskStore.
func (s *TaskStore) LaunchTask(ctx context.Context, id string, at time.Time) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changeLocked(id, func(t domain.Task) bool { return t.LaunchedAt == nil && t.Live() },
		func(t *domain.Task) { t.LaunchedAt, t.UpdatedAt = &at, at }), nil
}

// NextQueuedTask implements ports.TaskStore.
func (s *TaskStore) NextQueuedTask(ctx context.Context, parentSessionID string) (domain.Task, bool, error) {
	if err := ctx.Err(); err != nil {
		return domain.Task{}, false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	queued := s.whereLocked(func(t domain.Task) bool {
		return t.ParentSessionID == parentSessionID && t.LaunchedAt == nil && t.Status == domain.TaskWorking
	})
	if len(queued) == 0 {
		return domain.Task{}, false, nil
	}
	return queued[len(queued)-1], true, nil
}

// StalledQueues implements ports.TaskStore.
func (s *TaskStore) StalledQueues(ctx context.Context, queuedBefore time.Time, limit int) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	before := storedTime(queuedBefore)
	out := []string{}
	for _, t := range s.tasks {
		if t.LaunchedAt != nil || t.Status != domain.TaskWorking || !t.UpdatedAt.Before(before) || slices.Contains(out, t.ParentSessionID) {
			continue
		}
		if live, _ := s.countsLocked(t.ParentSessionID); live < limit {
			out = append(out, t.ParentSessionID)
		}
	}
	slices.Sort(out)
	return out, nil
}

// PauseTask implements ports.TaskStore.
func (s *TaskStore) PauseTask(ctx context.Context, id, runID string, status domain.TaskStatus, pendingCallID string, state []byte,
	at time.Time) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	if status.Terminal() {
		return false, fmt.Errorf("PauseTask takes a live status, not %s", status)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changeLocked(id, func(t domain.Task) bool { return t.RunID == runID && t.Live() }, func(t *domain.Task) {
		t.Status, t.PendingCallID, t.UpdatedAt = status, pendingCallID, at
		if state != nil {
			t.State = state
		}
	}), nil
}

// FinalizeTask implements ports.TaskStore.
func (s *TaskStore) FinalizeTask(ctx context.Context, f ports.TaskFinal) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.finalizeLocked(f)
}

// finalizeLocked is FinalizeTask; s.mu is held.
func (s *TaskStore) finalizeLocked(f ports.TaskFinal) (bool, error) {
	if !f.Status.Terminal() {
		return false, fmt.Errorf("FinalizeTask takes a terminal status, not %s", f.Status)
	}
	won := s.changeLocked(f.TaskID, func(t domain.Task) bool { return t.RunID == f.RunID && t.Live() }, func(t *domain.Task) {
		t.Status, t.Summary, t.Result, t.PendingCallID, t.UpdatedAt, t.EndedAt = f.Status, f.Summary, f.Result, "", f.At, &f.At
		if f.State != nil {
			t.State = f.State
		}
	})
	if !won {
		return false, nil
	}
	// A step approval filed under a run that never started goes with the
	// task (a started run's approvals go with its pause).
	if s.Runs != nil {
		s.Runs.dropUnstartedApprovals(f.RunID)
	}
	s.oweLocked(f.TaskID, f.At)
	return true, nil
}

// oweLocked writes a final task's debt to its parent, once per attempt, when it
// owes one; s.mu is held.
func (s *TaskStore) oweLocked(taskID string, at time.Time) {
	t := s.tasks[taskID]
	if !t.Status.OwesWakeup() {
		return
	}
	id := fmt.Sprintf("%s:%d", t.ID, t.Attempt)
	if _, ok := s.wakeups[id]; ok {
		return
	}
	if s.wakeups == nil {
		s.wakeups = map[string]domain.TaskWakeup{}
	}
	s.wakeups[id] = domain.TaskWakeup{ID: id, SessionID: t.ParentSessionID, TaskID: t.ID, Attempt: t.Attempt, Status: t.Status,
		Summary: t.Summary, CreatedAt: storedTime(at)}
}

// RetryTask implements ports.TaskStore.
func (s *TaskStore) RetryTask(ctx context.Context, id, newRunID string, maxAttempts int, at time.Time) (domain.Task, bool, error) {
	if err := ctx.Err(); err != nil {
		return domain.Task{}, false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.tasks[id]; !ok {
		return domain.Task{}, false, errs.E(errs.NotFound, "task not found")
	}
	won := s.changeLocked(id, func(t domain.Task) bool { return t.Status == domain.TaskFailed && t.Attempt < maxAttempts }, func(t *domain.Task) {
		t.RunID, t.Attempt, t.Status, t.Summary, t.Result = newRunID, t.Attempt+1, domain.TaskWorking, "", ""
		t.Dismissed, t.PendingCallID, t.LaunchedAt, t.UpdatedAt, t.EndedAt = false, "", nil, at, nil
	})
	return storedTask(s.tasks[id]), won, nil
}

// DismissTask implements ports.TaskStore.
func (s *TaskStore) DismissTask(ctx context.Context, id string, at time.Time) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changeLocked(id, func(t domain.Task) bool { return !t.Live() },
		func(t *domain.Task) { t.Dismissed, t.UpdatedAt = true, at }), nil
}

// FailOrphanTasks implements ports.TaskStore.
func (s *TaskStore) FailOrphanTasks(ctx context.Context, runs []string, launchedBefore time.Time, end func(domain.Task) (string, []byte),
	at time.Time) ([]domain.Task, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if runs != nil && len(runs) == 0 && launchedBefore.IsZero() {
		return nil, nil
	}
	cutoff := storedTime(launchedBefore)
	// neverStarted says a launched task's run was never recorded (read
	// before taking the lock: the run fake has its own).
	neverStarted := map[string]bool{}
	if !launchedBefore.IsZero() && s.Runs != nil {
		s.mu.Lock()
		runOf := map[string]string{}
		for id, t := range s.tasks {
			runOf[id] = t.RunID
		}
		s.mu.Unlock()
		for id, run := range runOf {
			if _, err := s.Runs.FindRun(ctx, run); errs.Is(err, errs.NotFound) {
				neverStarted[id] = true
			}
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.whereLocked(func(t domain.Task) bool {
		lost := !launchedBefore.IsZero() && t.LaunchedAt != nil && t.LaunchedAt.Before(cutoff) && neverStarted[t.ID]
		return t.Status == domain.TaskWorking && (runs == nil || slices.Contains(runs, t.RunID) || lost)
	})
	slices.Reverse(out) // oldest first
	for i, t := range out {
		result, state := end(t)
		s.changeLocked(t.ID, func(domain.Task) bool { return true }, func(t *domain.Task) {
			t.Status, t.Result, t.Summary, t.PendingCallID, t.UpdatedAt, t.EndedAt = domain.TaskFailed, result, result, "", at, &at
			if state != nil {
				t.State = state
			}
		})
		s.oweLocked(t.ID, at)
		out[i] = storedTask(s.tasks[t.ID])
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// PauseStep implements ports.TaskStore: the step approval goes to Runs.
func (s *TaskStore) PauseStep(ctx context.Context, taskID string, a domain.Approval, at time.Time) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tasks[taskID]
	if !ok || t.RunID != a.RunID || t.Status != domain.TaskWorking {
		return false, nil
	}
	if s.Runs == nil {
		return false, errs.E(errs.Internal, "porttest: TaskStore.Runs is not set")
	}
	if err := s.Runs.fileStepApproval(a); err != nil {
		return false, err
	}
	t.Status, t.PendingCallID, t.LaunchedAt, t.UpdatedAt = domain.TaskInputRequired, a.ToolCallID, nil, at
	s.tasks[taskID] = storedTask(t)
	return true, nil
}

// ResolveStep implements ports.TaskStore: the step approval is taken from
// Runs, and nothing changes unless both the approval and the task are as
// the decision found them.
func (s *TaskStore) ResolveStep(ctx context.Context, a domain.Approval, end *ports.TaskFinal, state []byte, at time.Time) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.Runs == nil {
		return false, errs.E(errs.Internal, "porttest: TaskStore.Runs is not set")
	}
	var waiting *domain.Task
	for _, t := range s.tasks {
		if t.RunID == a.RunID && t.Status == domain.TaskInputRequired && t.PendingCallID == a.ToolCallID {
			waiting = &t
		}
	}
	switch {
	case end != nil && !end.Status.Terminal():
		return false, fmt.Errorf("FinalizeTask takes a terminal status, not %s", end.Status)
	case end != nil:
		if t, ok := s.tasks[end.TaskID]; !ok || t.RunID != end.RunID || !t.Live() {
			return false, nil
		}
	case waiting == nil:
		return false, nil
	}
	if !s.Runs.takePendingApproval(a.ID) {
		return false, nil
	}
	if end != nil {
		return s.finalizeLocked(*end)
	}
	return s.changeLocked(waiting.ID, func(domain.Task) bool { return true }, func(t *domain.Task) {
		t.Status, t.PendingCallID, t.State, t.UpdatedAt = domain.TaskWorking, "", state, at
	}), nil
}

// AdvanceTask is SessionTx.AdvanceTask: it moves a working workflow task
// from run a.RunID on to a.NewRunID, queued.
func (s *TaskStore) AdvanceTask(ctx context.Context, a ports.TaskAdvance) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changeLocked(a.TaskID, func(t domain.Task) bool { return t.RunID == a.RunID && t.Status == domain.TaskWorking },
		func(t *domain.Task) {
			t.RunID, t.AgentConfigID, t.State, t.LaunchedAt, t.PendingCallID, t.UpdatedAt = a.NewRunID, a.AgentConfigID, a.State, nil, "", a.At
		}), nil
}

// RecordTaskState is SessionTx.RecordTaskState: conflict when the task is
// final or on another run.
func (s *TaskStore) RecordTaskState(ctx context.Context, taskID, runID string, state []byte, at time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.changeLocked(taskID, func(t domain.Task) bool { return t.RunID == runID && t.Live() },
		func(t *domain.Task) { t.State, t.UpdatedAt = state, at }) {
		return errs.E(errs.Conflict, "the task was stopped before its step could start")
	}
	return nil
}

// DueWakeups implements ports.TaskStore.
func (s *TaskStore) DueWakeups(ctx context.Context, sessionID string) ([]domain.TaskWakeup, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []domain.TaskWakeup{}
	for _, w := range s.wakeups {
		if w.SessionID == sessionID && w.SettledAt == nil {
			out = append(out, w)
		}
	}
	slices.SortFunc(out, func(a, b domain.TaskWakeup) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	return out, nil
}

// SessionsWithDueWakeups implements ports.TaskStore.
func (s *TaskStore) SessionsWithDueWakeups(ctx context.Context) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	due := map[string]bool{}
	for _, w := range s.wakeups {
		if w.SettledAt == nil {
			due[w.SessionID] = true
		}
	}
	return slices.Sorted(maps.Keys(due)), nil
}

// SettleWakeups implements ports.TaskStore.
func (s *TaskStore) SettleWakeups(ctx context.Context, ids []string, at time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.settleLocked(ids, at)
	return nil
}

// settleAll is SessionTx.SettleWakeups: every debt of ids, or none and
// conflict when another payer settled one first.
func (s *TaskStore) settleAll(ctx context.Context, ids []string, at time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	due := 0
	for _, id := range ids {
		if w, ok := s.wakeups[id]; ok && w.SettledAt == nil {
			due++
		}
	}
	if due != len(ids) {
		return errs.E(errs.Conflict, "%d of %d debts were settled already", len(ids)-due, len(ids))
	}
	s.settleLocked(ids, at)
	return nil
}

// settleLocked marks the unsettled debts of ids paid; s.mu is held.
func (s *TaskStore) settleLocked(ids []string, at time.Time) {
	at = storedTime(at)
	for _, id := range ids {
		if w, ok := s.wakeups[id]; ok && w.SettledAt == nil {
			w.SettledAt = &at
			s.wakeups[id] = w
		}
	}
}

// PruneTasks implements ports.TaskStore.
func (s *TaskStore) PruneTasks(ctx context.Context, settledBefore, orphanBefore time.Time) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if s.Sessions != nil {
		// Session writes reach this store inside their transaction: the
		// session writer is taken first, as they take it.
		s.Sessions.writer.Lock()
		defer s.Sessions.writer.Unlock()
	}
	s.mu.Lock()
	n := 0
	for id, w := range s.wakeups {
		if w.SettledAt != nil && w.SettledAt.Before(settledBefore) {
			delete(s.wakeups, id)
			n++
		}
	}
	var gone []string
	if s.Sessions != nil {
		named := map[string]bool{}
		for _, t := range s.tasks {
			named[t.ChildSessionID] = true
		}
		gone = s.Sessions.pruneTaskSessionsLocked(func(sess domain.Session) bool {
			return !named[sess.ID] && sess.CreatedAt.Before(orphanBefore)
		})
		n += len(gone)
	}
	// What deleting a session row cascades to in the SQL store goes with
	// it: the tasks it spawned, the debts owed to it, its runs, spans and
	// triggers.
	for _, id := range gone {
		s.forgetSessionLocked(id)
	}
	s.mu.Unlock()
	for _, id := range gone {
		if s.Sessions.Runs != nil {
			s.Sessions.Runs.ForgetSession(id)
		}
		if s.Sessions.Traces != nil {
			s.Sessions.Traces.ForgetSession(id)
		}
		if s.Sessions.Triggers != nil {
			s.Sessions.Triggers.ForgetSession(id)
		}
	}
	return n, nil
}

// keep returns what puts the tasks of taskIDs, their debts and the debts
// of wakeupIDs back as they are now: the rollback of a failing session
// transaction's task writes.
func (s *TaskStore) keep(taskIDs, wakeupIDs []string) (undo func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	tasks := map[string]*domain.Task{}
	for _, id := range taskIDs {
		tasks[id] = nil
		if t, ok := s.tasks[id]; ok {
			tasks[id] = &t
		}
	}
	touched := func(w domain.TaskWakeup) bool {
		_, ofTask := tasks[w.TaskID]
		return ofTask || slices.Contains(wakeupIDs, w.ID)
	}
	var wakeups []domain.TaskWakeup
	for _, w := range s.wakeups {
		if touched(w) {
			wakeups = append(wakeups, w)
		}
	}
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		for id, t := range tasks {
			if t == nil {
				delete(s.tasks, id)
			} else {
				s.tasks[id] = *t
			}
		}
		maps.DeleteFunc(s.wakeups, func(_ string, w domain.TaskWakeup) bool { return touched(w) })
		for _, w := range wakeups {
			s.wakeups[w.ID] = w
		}
	}
}

// taskOfRun names the task whose attempt runID is; "" when none (or s is
// nil).
func (s *TaskStore) taskOfRun(runID string) string {
	if s == nil {
		return ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, t := range s.tasks {
		if t.RunID == runID {
			return id
		}
	}
	return ""
}

// ForgetSession drops the tasks a session spawned and the debts owed to
// it: what deleting the session cascades to in the real store
// (SessionStore.DeleteSession calls it when this fake is its Tasks).
func (s *TaskStore) ForgetSession(sessionID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.forgetSessionLocked(sessionID)
}

// forgetSessionLocked is ForgetSession with s.mu held.
func (s *TaskStore) forgetSessionLocked(sessionID string) {
	maps.DeleteFunc(s.tasks, func(_ string, t domain.Task) bool { return t.ParentSessionID == sessionID })
	maps.DeleteFunc(s.wakeups, func(_ string, w domain.TaskWakeup) bool {
		_, kept := s.tasks[w.TaskID]
		return w.SessionID == sessionID || !kept
	})
}

// Wakeups returns every debt, settled or not, oldest first: what a test
// asserts on.
func (s *TaskStore) Wakeups() []domain.TaskWakeup {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := slices.Collect(maps.Values(s.wakeups))
	slices.SortFunc(out, func(a, b domain.TaskWakeup) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	return out
}

// RunLookups is how many times FindTaskByRun was asked: a query each on a
// real store.
func (s *TaskStore) RunLookups() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.byRun
}
