package domain

import (
	"encoding/json"
	"time"

	"github.com/agents-server/agents-server/core/errs"
)

// Task is one piece of background work a chat started with spawn_task: a
// durable identity (ID) over attempts, each a run (RunID, replaced by a
// retry) on the task's own hidden child session.
type Task struct {
	ID              string
	RunID           string // the current attempt's run
	OwnerID         string // the parent session's owner
	ParentSessionID string
	ParentRunID     string
	ToolCallID      string // the spawn_task call
	ChildSessionID  string // the hidden session the attempts run on
	AgentConfigID   string // the agent the task runs
	Label           string
	Prompt          string
	Kind            TaskKind
	Attempt         int // 1 for the original run, one more per retry
	Dismissed       bool
	Status          TaskStatus
	// Inherit is the spawning run's configuration snapshot the task runs
	// with; State is a workflow's (its definition, step, step runs).
	Inherit json.RawMessage
	State   json.RawMessage
	Summary string // at most TaskSummaryRunes
	Result  string
	// PendingCallID is the call a paused (input_required) attempt waits on.
	PendingCallID string
	// LaunchedAt is when the current attempt's run started; nil while the
	// task waits behind the session's live-task cap (its RunID reserved).
	LaunchedAt *time.Time
	CreatedAt  time.Time
	UpdatedAt  time.Time
	EndedAt    *time.Time
}

// TaskKind says what a task runs.
type TaskKind string

// The kinds: a sub-agent on a prompt, or a workflow execution.
const (
	TaskAgent    TaskKind = "agent"
	TaskWorkflow TaskKind = "workflow"
)

// Values lists the kinds.
func (TaskKind) Values() []string { return []string{"agent", "workflow"} }

// TaskStatus is the MCP Tasks five-state vocabulary.
type TaskStatus string

// The statuses: two live ones, three terminal ones.
const (
	TaskWorking       TaskStatus = "working"
	TaskInputRequired TaskStatus = "input_required" // paused for an approval in the parent session
	TaskCompleted     TaskStatus = "completed"
	TaskFailed        TaskStatus = "failed"
	TaskCancelled     TaskStatus = "cancelled"
)

// Values lists the statuses.
func (TaskStatus) Values() []string {
	return []string{"working", "input_required", "completed", "failed", "cancelled"}
}

// Terminal reports whether the status is final: written once, and left
// only by a retry of a failed task.
func (s TaskStatus) Terminal() bool {
	return s == TaskCompleted || s == TaskFailed || s == TaskCancelled
}

// OwesWakeup reports whether ending in this status owes the parent session
// a notification: a completed or failed task does, a cancelled one not.
func (s TaskStatus) OwesWakeup() bool { return s == TaskCompleted || s == TaskFailed }

// Task limits.
const (
	// MaxTaskAttempts bounds a task's runs: the original and two retries.
	MaxTaskAttempts = 3
	// TaskSummaryRunes bounds a task's summary.
	TaskSummaryRunes = 300
	// TaskStatusWait is the longest a task_status call waits for a change.
	TaskStatusWait = 120 * time.Second
)

// Live reports whether the task still works (or waits for a decision, or
// for its turn behind the cap).
func (t Task) Live() bool { return !t.Status.Terminal() }

// Queued reports whether the task waits behind the cap, not yet started.
func (t Task) Queued() bool { return t.Live() && t.LaunchedAt == nil }

// CheckRetry refuses a retry of a task that is not failed or has used
// every attempt. Returns conflict.
func (t Task) CheckRetry() error {
	switch {
	case t.Status != TaskFailed:
		return errs.E(errs.Conflict, "only a failed task can be retried; this one is %s", t.Status)
	case t.Attempt >= MaxTaskAttempts:
		return errs.E(errs.Conflict, "the task has used all %d attempts", MaxTaskAttempts)
	}
	return nil
}

// CheckDismiss refuses to dismiss a live task. Returns conflict.
func (t Task) CheckDismiss() error {
	if t.Live() {
		return errs.E(errs.Conflict, "a task still working cannot be dismissed: stop it first")
	}
	return nil
}

// TaskWakeup is a debt a finished task owes its parent session: paid by
// ONE notification turn on the parent carrying every due result.
type TaskWakeup struct {
	ID        string
	SessionID string // the parent session
	TaskID    string
	Attempt   int
	Status    TaskStatus // completed or failed
	Summary   string
	CreatedAt time.Time
	SettledAt *time.Time
}

// TaskInfo is a task as clients read it: the tasks API, task.updated, and
// GET /runs/:id of a task's run.
type TaskInfo struct {
	TaskID          string          `json:"task_id"`
	RunID           string          `json:"run_id"`
	Kind            TaskKind        `json:"kind"`
	Status          TaskStatus      `json:"status"`
	Label           string          `json:"label"`
	Prompt          string          `json:"prompt"`
	Attempt         int             `json:"attempt"`
	MaxAttempts     int             `json:"max_attempts"`
	Dismissed       bool            `json:"dismissed"`
	Queued          bool            `json:"queued"`
	ParentSessionID string          `json:"parent_session_id"`
	ParentRunID     string          `json:"parent_run_id"`
	ToolCallID      string          `json:"tool_call_id"`
	ChildSessionID  string          `json:"child_session_id"`
	AgentConfigID   string          `json:"agent_config_id"`
	Summary         string          `json:"summary"`
	Result          string          `json:"result"`
	PendingCallID   string          `json:"pending_call_id,omitempty"`
	State           json.RawMessage `json:"state,omitempty"`
	CreatedAt       time.Time       `json:"created_at"`
	UpdatedAt       time.Time       `json:"updated_at"`
	EndedAt         *time.Time      `json:"ended_at,omitempty"`
}

// Info is the task as clients read it.
func (t Task) Info() TaskInfo {
	return TaskInfo{TaskID: t.ID, RunID: t.RunID, Kind: t.Kind, Status: t.Status, Label: t.Label, Prompt: t.Prompt,
		Attempt: t.Attempt, MaxAttempts: MaxTaskAttempts, Dismissed: t.Dismissed, Queued: t.Queued(),
		ParentSessionID: t.ParentSessionID, ParentRunID: t.ParentRunID, ToolCallID: t.ToolCallID, ChildSessionID: t.ChildSessionID,
		AgentConfigID: t.AgentConfigID, Summary: t.Summary, Result: t.Result, PendingCallID: t.PendingCallID, State: t.State,
		CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt, EndedAt: t.EndedAt}
}

// Link is what a task's run carries of its task.
func (t Task) Link() *TaskLink {
	return &TaskLink{TaskID: t.ID, ParentSessionID: t.ParentSessionID, ParentRunID: t.ParentRunID, ToolCallID: t.ToolCallID, Label: t.Label}
}
