package domain

import "time"

// Workflow bounds: how many step launches one execution may make whatever
// its shape, and how often it may take one backward edge when its budget
// names no figure.
const (
	MaxStepRuns    = 50
	DefaultMaxLaps = 3
	// WorkflowEnd is the edge target that finishes an execution.
	WorkflowEnd = "end"
	// Gate sentinels a gate reports with when it names no words of its own.
	DefaultGatePass = "PASS"
	DefaultGateFail = "FAIL"
)

// Workflow is a fixed sequence of steps run on one session: which step
// runs next is the definition's answer, never the model's.
type Workflow struct {
	ID string
	Ownership
	WorkflowSpec
	CreatedAt time.Time
	UpdatedAt time.Time
}

// WorkflowSpec is what a workflow's author writes: the name (unique,
// whatever its case, among globals and among one owner's privates), the
// description an agent matches requests against, the steps in order, and
// the budget every execution answers to. A field tagged required is one
// the validator refuses every definition without (see AgentSpec).
type WorkflowSpec struct {
	Name        string         `json:"name" required:"true"`
	Description string         `json:"description" required:"true"`
	Steps       []WorkflowStep `json:"steps" required:"true"`
	Budget      WorkflowBudget `json:"budget"`
}

// WorkflowStep is one step: the agent that runs it, the prompt that starts
// its turn, and where to go next. Empty edges are the plain list: success
// falls through to the next step (the last one finishes), failure fails the
// execution. A gate step's verdict, not its run's status, picks the edge.
type WorkflowStep struct {
	ID            string `json:"id"` // stable, server-assigned
	Name          string `json:"name" required:"true"`
	Agent         string `json:"agent" required:"true"` // the agent's id
	Prompt        string `json:"prompt" required:"true"`
	Gate          bool   `json:"gate,omitempty"`
	GatePass      string `json:"gate_pass,omitempty"` // "" = PASS
	GateFail      string `json:"gate_fail,omitempty"` // "" = FAIL
	PauseBefore   bool   `json:"pause_before,omitempty"`
	CompactBefore bool   `json:"compact_before,omitempty"`
	OnSuccess     string `json:"on_success,omitempty"` // a step id, "end", or "" (the next step)
	OnFailure     string `json:"on_failure,omitempty"` // a step id, "end", or "" (fail the execution)
}

// PassWord and FailWord are the step's gate sentinels.
func (s WorkflowStep) PassWord() string { return orDefault(s.GatePass, DefaultGatePass) }

// FailWord is the sentinel a gate reports failure with.
func (s WorkflowStep) FailWord() string { return orDefault(s.GateFail, DefaultGateFail) }

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// WorkflowBudget bounds every execution of a definition; zero is no bound,
// except MaxLaps, whose zero is DefaultMaxLaps.
type WorkflowBudget struct {
	MaxSteps   int   `json:"max_steps,omitempty"`
	MaxTokens  int64 `json:"max_tokens,omitempty"`
	MaxMinutes int   `json:"max_minutes,omitempty"`
	MaxLaps    int   `json:"max_laps,omitempty"`
}

// Laps is the bound on one backward edge.
func (b WorkflowBudget) Laps() int {
	if b.MaxLaps <= 0 {
		return DefaultMaxLaps
	}
	return b.MaxLaps
}

// Step run endings, as the launch log records them.
const (
	StepCompleted = "completed"
	StepFailed    = "failed"
	StepPass      = "pass"
	StepFail      = "fail"
)

// StepApprovalTool is the tool name a pause_before approval carries: it
// holds a workflow before a step, not a tool call.
const StepApprovalTool = "workflow_step"

// WorkflowState is an execution's state: the definition it was started
// with (a snapshot, so an edit never steers it), the brief, where it is,
// and the log of every step launch.
type WorkflowState struct {
	WorkflowID string         `json:"workflow_id"`
	Name       string         `json:"name"`
	Steps      []WorkflowStep `json:"steps"`
	Budget     WorkflowBudget `json:"budget"`
	Input      string         `json:"input"`
	StepID     string         `json:"step_id"`
	StepRuns   []StepRun      `json:"step_runs"`
	// Laps counts the times each backward edge ("from→to" by step id) was
	// taken.
	Laps map[string]int `json:"laps,omitempty"`
	// Lead opens the next launch's turn: the error a failure handler is
	// handling (a failed run leaves no usable account of itself).
	Lead string `json:"lead,omitempty"`
	// Cleared is the reserved run whose pause_before a person approved: it
	// launches without asking again.
	Cleared string `json:"cleared,omitempty"`
	// Bound is set when a bound (laps, step runs, a budget) ended the
	// execution: a retry could only end the same way, so it is refused.
	Bound string `json:"bound,omitempty"`
}

// StepRun is one launch of a step: its run, and how it ended ("" while it
// runs).
type StepRun struct {
	StepID    string     `json:"step_id"`
	RunID     string     `json:"run_id"`
	Ending    string     `json:"ending,omitempty"`
	Retry     bool       `json:"retry,omitempty"`
	Attempt   int        `json:"attempt"` // the task's attempt that launched it
	StartedAt time.Time  `json:"started_at"`
	EndedAt   *time.Time `json:"ended_at,omitempty"`
	// PausedAt is when the run began waiting for a person's decision
	// (nil while it works); WaitedMS totals those waits, which cost the
	// max_minutes budget nothing.
	PausedAt *time.Time `json:"paused_at,omitempty"`
	WaitedMS int64      `json:"waited_ms,omitempty"`
}

// Active is the time the step's run worked: from its start to its end
// (or now), less its waits for a person.
func (r StepRun) Active(now time.Time) time.Duration {
	end := now
	if r.EndedAt != nil {
		end = *r.EndedAt
	}
	if r.PausedAt != nil {
		end = *r.PausedAt
	}
	return max(end.Sub(r.StartedAt)-time.Duration(r.WaitedMS)*time.Millisecond, 0)
}

// WorkflowPreview is what a save_workflow approval shows: the proposed
// definition drawn as text and, when it replaces a stored one, the two
// diffed line by line.
type WorkflowPreview struct {
	Definition string     `json:"definition"`
	Replaces   bool       `json:"replaces"`
	Diff       []DiffLine `json:"diff,omitempty"`
}

// DiffLine is one line of a line diff.
type DiffLine struct {
	Op   string `json:"op"`
	Text string `json:"text"`
}

// Diff line operations.
const (
	DiffSame    = "="
	DiffAdded   = "+"
	DiffRemoved = "-"
)
