package tasks

import (
	"context"
	"fmt"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/runs"
	"github.com/agents-server/agents-server/core/settings"
)

// restartMessage is the result of a task a restart cut short.
const restartMessage = "The server restarted while this task was working; it did not finish."

// pump starts a parent session's queued tasks while it is under the
// live-task cap (max_tasks_per_session, read each time).
func (m *Manager) pump(ctx context.Context, parentID string) {
	m.launchMu.Lock()
	defer m.launchMu.Unlock()
	limit, err := m.d.Settings.Int(ctx, settings.KeyMaxTasksPerSession)
	if err != nil {
		m.logErr("reading the task cap failed", err)
		return
	}
	for {
		live, err := m.d.Store.CountLiveTasks(ctx, parentID)
		if err != nil || live >= limit {
			m.logErr("counting live tasks failed", err, "session_id", parentID)
			return
		}
		t, ok, err := m.d.Store.NextQueuedTask(ctx, parentID)
		if err != nil || !ok {
			m.logErr("reading the task queue failed", err, "session_id", parentID)
			return
		}
		won, err := m.d.Store.LaunchTask(ctx, t.ID, m.d.Clock.Now())
		if err != nil {
			m.logErr("launching a task failed", err, "task_id", t.ID)
			return
		}
		if won {
			m.launch(ctx, t)
		}
	}
}

// launch starts a task's current attempt on its session. An attempt that
// cannot start ends failed, saying why (while the server drains it is
// left for the restart sweep).
func (m *Manager) launch(ctx context.Context, t domain.Task) {
	start := &runs.BackgroundStart{SessionID: t.ChildSessionID, OwnerID: t.OwnerID,
		AgentConfigID: t.AgentConfigID, RunID: t.RunID, Input: attemptInput(t), Task: t.Link()}
	if t.Kind == domain.TaskWorkflow {
		if start = m.stepStart(ctx, t); start == nil {
			return
		}
	}
	start.Triggered = triggered(t)
	_, err := m.runs.StartBackground(ctx, *start)
	if err == nil || errs.Is(err, errs.Unavailable) {
		now, err2 := m.d.Store.FindTask(ctx, t.ID)
		if err2 != nil {
			m.logErr("reading a task failed", err2, "task_id", t.ID)
			return
		}
		m.changed(now)
		if err == nil && (!now.Live() || now.RunID != t.RunID) {
			// Stopped while its run was starting, before a stop could
			// find the run: the run is tracked now, so stop it here.
			m.logErr("stopping a stopped task's run failed", m.runs.StopRun(ctx, t.RunID, "stopped"), "task_id", t.ID)
		}
		return
	}
	m.d.Log.Warn("a task could not start", "task_id", t.ID, "err", err)
	m.failLaunch(ctx, t, nil, "The task could not start: "+errs.MessageOf(err))
}

// attemptInput is what an attempt's run is told: the prompt, or for a
// retry why it runs again and the prompt once more, so nothing the task
// needs is left to inference from the failed attempt.
func attemptInput(t domain.Task) string {
	if t.Attempt <= 1 {
		return t.Prompt
	}
	return fmt.Sprintf("This is attempt %d of %d of this task: the previous attempt failed. Resume from the progress "+
		"made above rather than starting over, and finish the task.\n\nThe task:\n%s", t.Attempt, domain.MaxTaskAttempts, t.Prompt)
}

// Stop cancels a live task of the caller's: its row first (so nothing
// else ends or relaunches it), then its run. Returns not_found, or
// conflict when the task is already final.
func (m *Manager) Stop(ctx context.Context, p domain.Principal, id string) (domain.Task, error) {
	return m.stop(ctx, p.User.ID, id, "")
}

// stop is Stop for an owner; within "" or the parent session the task
// must belong to.
func (m *Manager) stop(ctx context.Context, ownerID, id, within string) (domain.Task, error) {
	t, err := m.ownedWithin(ctx, ownerID, id, within)
	if err != nil {
		return t, err
	}
	if t.Status.Terminal() {
		return t, errs.E(errs.Conflict, "the task is already %s", t.Status)
	}
	// A launched task's run ends now, and its end writes the card.
	if t, err = m.cancel(ctx, t, t.LaunchedAt == nil); err != nil {
		return t, err
	}
	if t.Status != domain.TaskCancelled {
		return t, errs.E(errs.Conflict, "the task is already %s", t.Status)
	}
	if t.LaunchedAt != nil {
		if err := m.runs.StopRun(ctx, t.RunID, "stopped"); err != nil {
			return t, err
		}
	}
	m.pump(ctx, t.ParentSessionID)
	return t, nil
}

// Retry reopens a failed task of the caller's for another attempt, which
// starts at once. Returns not_found, conflict when the task is not
// failed, has used every attempt, or its session is at the live-task cap,
// or rate_limited when the caller has max_runs_per_user live runs.
func (m *Manager) Retry(ctx context.Context, p domain.Principal, id string) (domain.Task, error) {
	return m.retry(ctx, p.User.ID, id, "")
}

func (m *Manager) retry(ctx context.Context, ownerID, id, within string) (domain.Task, error) {
	t, err := m.ownedWithin(ctx, ownerID, id, within)
	if err != nil {
		return t, err
	}
	if err := t.CheckRetry(); err != nil {
		return t, err
	}
	if t.Kind == domain.TaskWorkflow {
		if err := m.checkWorkflowRetry(ctx, t); err != nil {
			return t, err
		}
	}
	limit, err := m.d.Settings.Int(ctx, settings.KeyMaxTasksPerSession)
	if err != nil {
		return t, err
	}
	if live, err := m.d.Store.CountLiveTasks(ctx, t.ParentSessionID); err != nil {
		return t, err
	} else if live >= limit {
		return t, errs.E(errs.Conflict, "the conversation already has %d live tasks (max_tasks_per_session); retry when one ends", live)
	}
	// Refused here, a retry costs no attempt.
	if err := m.runs.CheckRunCap(ctx, ownerID); err != nil {
		return t, err
	}
	t, won, err := m.d.Store.RetryTask(ctx, id, m.d.IDs.NewID(), domain.MaxTaskAttempts, m.d.Clock.Now())
	if err != nil {
		return t, err
	}
	if !won {
		return t, errs.E(errs.Conflict, "the task can no longer be retried")
	}
	m.changed(t)
	m.pump(ctx, t.ParentSessionID)
	return m.d.Store.FindTask(ctx, id)
}

// Dismiss hides a final task of the caller's from the live lists.
// Returns not_found, or conflict while it is live.
func (m *Manager) Dismiss(ctx context.Context, p domain.Principal, id string) (domain.Task, error) {
	t, err := m.owned(ctx, p.User.ID, id)
	if err != nil {
		return t, err
	}
	if err := t.CheckDismiss(); err != nil {
		return t, err
	}
	if won, err := m.d.Store.DismissTask(ctx, id, m.d.Clock.Now()); err != nil {
		return t, err
	} else if !won {
		return t, errs.E(errs.Conflict, "a task still working cannot be dismissed: stop it first")
	}
	return m.reload(ctx, id)
}

// Recover fails the tasks a crash left working — after the run engine has
// failed their runs — writing their debts in the same transaction: with
// runs nil every working task (at start, the only process on the
// database), else the tasks attempting those runs (a failover's) and
// those launched before launchedBefore (zero: none) whose run was never
// recorded — the replica launching them died before their run started.
// Their parents are told by Drain.
func (m *Manager) Recover(ctx context.Context, runs []string, launchedBefore time.Time) error {
	now := m.d.Clock.Now()
	failed, err := m.d.Store.FailOrphanTasks(ctx, runs, launchedBefore, orphanEnding(now), now)
	if err != nil {
		return err
	}
	for _, t := range failed {
		m.settled(ctx, t)
		m.d.Log.Warn("task failed by a restart", "task_id", t.ID, "session_id", t.ParentSessionID)
	}
	return nil
}

// PumpStalled launches what waits in the conversations whose queue
// stalled: a task queued since before queuedBefore while the conversation
// has room under the live-task cap is a launch owed by a replica that died
// before making it — between two steps of a workflow it drove (the step
// that ended advanced the execution and queued the next), or after a task
// ended there, before the next queued one started. Nothing of the queued
// attempt ran, so it starts here as its launcher would have started it: a
// workflow goes on at its next step. It returns how many conversations it
// pumped. (On one process a restart fails queued work instead: see
// Recover.)
func (m *Manager) PumpStalled(ctx context.Context, queuedBefore time.Time) (int, error) {
	limit, err := m.d.Settings.Int(ctx, settings.KeyMaxTasksPerSession)
	if err != nil {
		return 0, err
	}
	parents, err := m.d.Store.StalledQueues(ctx, queuedBefore, limit)
	if err != nil {
		return 0, err
	}
	for _, id := range parents {
		m.d.Log.Warn("launching the tasks a gone replica left queued", "session_id", id)
		m.pump(ctx, id)
	}
	return len(parents), nil
}

// How long what a task leaves behind is kept: a settled debt for the
// record, a hidden session no task names (a spawn cut short) in case its
// task row is still being written.
const (
	settledKept = 7 * 24 * time.Hour
	orphanGrace = time.Hour
)

// Prune deletes settled debts past settledKept and task sessions no task
// names past orphanGrace; it returns how many rows went.
func (m *Manager) Prune(ctx context.Context) (int, error) {
	now := m.d.Clock.Now()
	return m.d.Store.PruneTasks(ctx, now.Add(-settledKept), now.Add(-orphanGrace))
}

// Drain pays every session's due debts (at startup, once handlers exist).
func (m *Manager) Drain(ctx context.Context) {
	ids, err := m.d.Store.SessionsWithDueWakeups(ctx)
	if err != nil {
		m.logErr("listing due wake-ups failed", err)
		return
	}
	for _, id := range ids {
		m.drain(ctx, id)
	}
}
