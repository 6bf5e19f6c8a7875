package ports

import (
	"context"
	"time"

	"github.com/agents-server/agents-server/core/domain"
)

// TaskStore keeps background tasks and the wake-up debts finished ones owe
// their parent sessions. Every state change is a compare-and-set on the
// row, so a stop, a decision, a run's end and a retry racing each other
// resolve to one winner; a write about an attempt names its run id and
// loses when the task has moved on to another.
type TaskStore interface {
	// CreateTask inserts a task; conflict when its id is taken. When admit
	// is not nil it is first told, in the same transaction, how many of
	// the parent session's tasks are live (launched, not final: what
	// CountLiveTasks counts) and queued (working, not launched); its error
	// is returned as is, nothing written, so parallel creations cannot
	// pass a cap between the count and the insert.
	CreateTask(ctx context.Context, t domain.Task, admit func(live, queued int) error) error
	// FindTask returns not_found when absent.
	FindTask(ctx context.Context, id string) (domain.Task, error)
	// FindTaskByRun returns the task whose current attempt is runID;
	// not_found when no task runs it.
	FindTaskByRun(ctx context.Context, runID string) (domain.Task, error)
	// ListSessionTasks returns a parent session's tasks, newest first.
	ListSessionTasks(ctx context.Context, parentSessionID string) ([]domain.Task, error)
	// ListTasks returns a page of an owner's tasks (every owner's for ""),
	// newest first, and how many match in all.
	ListTasks(ctx context.Context, ownerID string, f TaskFilter) ([]domain.Task, int, error)
	// CountLiveTasks counts a parent session's launched tasks that are not
	// final: what the live-task cap compares with (queued ones wait).
	CountLiveTasks(ctx context.Context, parentSessionID string) (int, error)
	// LaunchTask marks a queued task's current run started; false when it
	// was launched already or is final.
	LaunchTask(ctx context.Context, id string, at time.Time) (bool, error)
	// NextQueuedTask returns a parent session's oldest queued task; ok
	// false when none waits.
	NextQueuedTask(ctx context.Context, parentSessionID string) (domain.Task, bool, error)
	// StalledQueues returns the parent sessions, ordered by id, where a
	// task has waited queued (working, not launched) since before
	// queuedBefore while fewer than limit of their tasks are live: a
	// launch whoever queued it owed and never made (the replica driving a
	// workflow died between two of its steps).
	StalledQueues(ctx context.Context, queuedBefore time.Time, limit int) ([]string, error)
	// PauseTask moves attempt runID between working and input_required
	// (with the call it waits on, or "", and, when not nil, the state in
	// the same write); false when the task is final or on another attempt.
	PauseTask(ctx context.Context, id, runID string, status domain.TaskStatus, pendingCallID string, state []byte, at time.Time) (bool, error)
	// FinalizeTask writes attempt runID's terminal status once, with its
	// summary and result; a completed or failed end writes the parent's
	// wake-up debt (id "<task id>:<attempt>") in the same transaction. false (nothing written) when
	// the task is already final or on another attempt.
	FinalizeTask(ctx context.Context, f TaskFinal) (bool, error)
	// RetryTask reopens a failed task with a new attempt run (attempt+1,
	// result cleared, undismissed, queued until LaunchTask) if it has
	// attempts left; false when it is not failed or out of attempts
	// (another caller may have won).
	RetryTask(ctx context.Context, id, newRunID string, maxAttempts int, at time.Time) (domain.Task, bool, error)
	// DismissTask hides a final task from the live lists; false while it
	// is live.
	DismissTask(ctx context.Context, id string, at time.Time) (bool, error)
	// FailOrphanTasks ends the tasks a crash left working as failed, with
	// the result (and, when not nil, the state) end gives it, writing their
	// debts, and returns them. With runs nil that is every working task,
	// queued ones included (the process that ran or would launch them is
	// gone: the only one on the database); else only those whose attempt
	// is one of runs (the runs a failover just ended; the other replicas'
	// tasks go on) and, when launchedBefore is not zero, those launched
	// before it whose attempt's run was never recorded (the replica
	// launching it died between the launch and the run's start). A task
	// waiting for a decision (input_required) is left alone: its paused
	// run, or its step approval, survives a restart.
	FailOrphanTasks(ctx context.Context, runs []string, launchedBefore time.Time, end func(domain.Task) (result string, state []byte),
		at time.Time) ([]domain.Task, error)
	// PauseStep holds a workflow task before its next step: in one
	// transaction the task (working, on attempt run a.RunID, reserved and
	// not started) becomes input_required waiting on a.ToolCallID, and the
	// step approval a is filed. false (nothing written) when the task moved.
	PauseStep(ctx context.Context, taskID string, a domain.Approval, at time.Time) (bool, error)
	// ResolveStep decides a pending step approval in one transaction: the
	// approval goes, and the task waiting on it either ends (end, a
	// rejection) or goes back to working, queued to launch its step, with
	// state. false (nothing written) when the approval is no longer pending
	// or the task moved.
	ResolveStep(ctx context.Context, a domain.Approval, end *TaskFinal, state []byte, at time.Time) (bool, error)
	// DueWakeups returns a session's unsettled debts, oldest first.
	DueWakeups(ctx context.Context, sessionID string) ([]domain.TaskWakeup, error)
	// SessionsWithDueWakeups lists the sessions owed a notification.
	SessionsWithDueWakeups(ctx context.Context) ([]string, error)
	// SettleWakeups marks debts paid; a debt already settled stays as it was.
	SettleWakeups(ctx context.Context, ids []string, at time.Time) error
	// PruneTasks deletes the debts settled before settledBefore, and the
	// hidden task sessions created before orphanBefore that no task names
	// (a spawn cut short between the two writes); it returns how many rows
	// went.
	PruneTasks(ctx context.Context, settledBefore, orphanBefore time.Time) (int, error)
}

// TaskFinal is a terminal status for one attempt.
type TaskFinal struct {
	TaskID, RunID   string
	Status          domain.TaskStatus // completed, failed or cancelled
	Summary, Result string
	// State, when not nil, replaces the task's state in the same write (a
	// workflow's launch log records how its last step ended).
	State []byte
	At    time.Time
}

// TaskAdvance moves a workflow task from the step run that just ended
// (RunID) to its next step: a new reserved run (NewRunID, queued until
// LaunchTask), the agent that runs it, and the state saying where it is.
type TaskAdvance struct {
	TaskID, RunID, NewRunID string
	AgentConfigID           string
	State                   []byte
	At                      time.Time
}

// TaskFilter narrows a task listing.
type TaskFilter struct {
	Kind   domain.TaskKind // "" = every kind
	Live   bool            // only tasks not final
	Limit  int             // 0 = the store's default
	Offset int
}
