package tasks

import (
	"context"
	"fmt"
	"strings"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// final is the terminal status a task's attempt takes from its run's end.
func final(t domain.Task, run domain.Run, at ports.TaskFinal) ports.TaskFinal {
	at.TaskID, at.RunID = t.ID, run.ID
	switch run.Status {
	case domain.RunCompleted:
		at.Status, at.Result = domain.TaskCompleted, run.FinalOutput
	case domain.RunCancelled:
		at.Status, at.Result = domain.TaskCancelled, "Stopped before it finished."
		if run.ErrorCode == domain.CancelServerShutdown {
			// Nobody stopped it: the parent is told at the next start.
			at.Status, at.Result = domain.TaskFailed, "The server shut down while this task was working; it did not finish."
		}
	default:
		at.Status = domain.TaskFailed
		at.Result = fmt.Sprintf("The run failed (%s): %s", run.ErrorCode, run.ErrorMessage)
	}
	at.Summary = summarize(at.Result)
	return at
}

// summarize is a result cut to TaskSummaryRunes, on one line.
func summarize(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) > domain.TaskSummaryRunes {
		return string(r[:domain.TaskSummaryRunes-1]) + "…"
	}
	return s
}

// Ending implements runs.Listener: a task's attempt ends in the
// transaction that records its run's end (written once: a stop that got
// there first wins).
func (m *Manager) Ending(ctx context.Context, run domain.Run, taskSession bool) func(tx ports.SessionTx) error {
	if !taskSession {
		// Every task's run works in the task's own session.
		m.noTask.note(run.ID)
		return nil
	}
	t, err := m.d.Store.FindTaskByRun(ctx, run.ID)
	if err != nil || t.Status.Terminal() {
		if errs.Is(err, errs.NotFound) {
			m.noTask.note(run.ID)
		} else {
			m.logErr("reading a run's task failed", err, "run_id", run.ID)
		}
		return nil
	}
	if t.Kind == domain.TaskWorkflow {
		return m.stepEnding(ctx, t, run)
	}
	f := final(t, run, ports.TaskFinal{At: m.d.Clock.Now()})
	return func(tx ports.SessionTx) error {
		_, err := tx.FinalizeTask(ctx, f)
		return err
	}
}

// Ended implements runs.Listener: a task's run ended, so the task is
// announced, its card updated, the next queued task may start and the
// parent may be told; any run's end pays its session's debts.
func (m *Manager) Ended(run domain.Run) {
	ctx := context.Background()
	if m.noTask.take(run.ID) {
		// A chat run (Ending found no task): its session is all there is.
		m.drain(ctx, run.SessionID)
		return
	}
	t, err := m.d.Store.FindTaskByRun(ctx, run.ID)
	if id, ok := m.takeStepped(run.ID); ok && errs.Is(err, errs.NotFound) {
		// A workflow's step run that advanced it: the task names its next
		// step's run now, which the pump below launches.
		t, err = m.d.Store.FindTask(ctx, id)
	}
	switch {
	case err == nil:
		m.settled(ctx, t)
		m.pump(ctx, t.ParentSessionID)
		m.drain(ctx, t.ParentSessionID)
	case !errs.Is(err, errs.NotFound):
		m.logErr("reading a run's task failed", err, "run_id", run.ID)
	}
	m.drain(ctx, run.SessionID)
}

// settled announces a task that may have ended and, once it has, records
// the ending on its spawn_task card (terminal only, so a card never goes
// backwards).
func (m *Manager) settled(ctx context.Context, t domain.Task) {
	m.changed(t)
	if !t.Status.Terminal() || t.ToolCallID == "" {
		return
	}
	update := domain.Entry{Kind: domain.KindUpdate, TargetCallID: t.ToolCallID, RunID: t.ParentRunID, Display: card(t)}
	if _, err := m.d.Sessions.Append(ctx, t.ParentSessionID, []domain.Entry{update}); err != nil && !errs.Is(err, errs.NotFound) {
		m.logErr("updating a task's card failed", err, "task_id", t.ID)
	}
}

// Paused implements runs.Listener: a task whose run waits for a
// decision is input_required, the decision made from the parent session.
func (m *Manager) Paused(run domain.Run, pendingCallID string) {
	m.pause(run, domain.TaskInputRequired, pendingCallID)
}

// Resumed implements runs.Listener: the decision let the task go on.
func (m *Manager) Resumed(run domain.Run) { m.pause(run, domain.TaskWorking, "") }

// Recovered implements runs.Listener: nothing here, as a restart's sweep
// hands the manager the tasks of the runs it ended (see Recover).
func (m *Manager) Recovered(domain.Run) {}

func (m *Manager) pause(run domain.Run, status domain.TaskStatus, callID string) {
	ctx := context.Background()
	t, err := m.d.Store.FindTaskByRun(ctx, run.ID)
	if err != nil {
		if !errs.Is(err, errs.NotFound) {
			m.logErr("reading a run's task failed", err, "run_id", run.ID)
		}
		return
	}
	now := m.d.Clock.Now()
	won, err := m.d.Store.PauseTask(ctx, t.ID, run.ID, status, callID, waited(t, run.ID, status, now), now)
	m.logErr("recording a task's pause failed", err, "task_id", t.ID)
	if won {
		_, err = m.reload(ctx, t.ID)
		m.logErr("reading a task failed", err, "task_id", t.ID)
	}
}

// stopTasks cancels the live tasks of a session about to be deleted (so
// nothing launches them again) and returns their sessions, whose runs
// StopWork stops.
func (m *Manager) stopTasks(ctx context.Context, sessionID string) ([]string, error) {
	list, err := m.d.Store.ListSessionTasks(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	var children []string
	for _, t := range list {
		if !t.Live() {
			continue
		}
		if _, err := m.cancel(ctx, t, false); err != nil {
			return nil, err
		}
		children = append(children, t.ChildSessionID)
	}
	return children, nil
}

// cancel writes a task's cancelled end (if nothing else ended it first)
// and announces the task as it now stands. card records the end on the
// spawn card too — for a queued task, whose run will never end to do it.
func (m *Manager) cancel(ctx context.Context, t domain.Task, card bool) (domain.Task, error) {
	_, err := m.d.Store.FinalizeTask(ctx, ports.TaskFinal{TaskID: t.ID, RunID: t.RunID, Status: domain.TaskCancelled,
		Result: "Stopped before it finished.", Summary: "Stopped before it finished.", At: m.d.Clock.Now()})
	if err != nil {
		return t, err
	}
	if t, err = m.d.Store.FindTask(ctx, t.ID); err != nil {
		return t, err
	}
	if card {
		m.settled(ctx, t)
	} else {
		m.changed(t)
	}
	return t, nil
}
