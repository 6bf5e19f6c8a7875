package domain

import (
	"slices"
	"time"

	"github.com/agents-server/agents-server/core/errs"
)

// Approval statuses.
const (
	ApprovalPending  = "pending"
	ApprovalApproved = "approved"
	ApprovalRejected = "rejected"
)

// Decision scopes: how far an approval of exec_command extends.
const (
	ScopeOnce ApprovalScope = "once" // just this call (default)
	ScopeSame ApprovalScope = "same" // this exact command, for the rest of the session
	ScopeAll  ApprovalScope = "all"  // every command, for the rest of the session
)

// Approval is a tool call waiting for a person's decision: persisted before
// the pause is announced, so it survives a restart and is addressable over
// REST.
type Approval struct {
	ID         string
	SessionID  string
	RunID      string
	OwnerID    string
	ToolCallID string
	ToolName   string
	Arguments  string
	Status     string
	Scope      string
	Reason     string
	CreatedAt  time.Time
	DecidedAt  *time.Time
	// TaskID names the background task whose attempt filed it; "" for a
	// chat run's own.
	TaskID string
	// Preview is what a save_workflow approval shows, drawn when it is
	// read (nil for any other tool).
	Preview *WorkflowPreview
}

// CheckOwner refuses anyone but the approval's owner, as if it did not
// exist. Returns not_found.
func (a Approval) CheckOwner(p Principal) error {
	if a.OwnerID != p.User.ID {
		return errs.E(errs.NotFound, "approval not found")
	}
	return nil
}

// ValidScope checks a decision scope ("" means once). Returns validation.
func ValidScope(scope ApprovalScope) error {
	if scope != "" && !Known(scope) {
		return errs.Field("scope", "must be %s", OrList(scope.Values()))
	}
	return nil
}

// Gated reports whether an agent's approve_tools list puts a tool behind a
// person's decision.
func Gated(approveTools []string, tool string) bool {
	return slices.Contains(approveTools, "*") || slices.Contains(approveTools, tool)
}

// PauseState is what a paused run needs to go on: stored with the
// approvals in the transaction that files them.
type PauseState struct {
	Turn          int    `json:"turn"`
	AgentConfigID string `json:"agent_config_id"` // the agent holding the run (after handoffs)
	ToolChoice    string `json:"tool_choice"`
	Planning      bool   `json:"planning"`
	Injected      int    `json:"injected"`
	Calls         []Item `json:"calls"` // the paused turn's function calls, in order
	Gated         []bool `json:"gated"` // which of them wait for a decision
	// Queued is input injected while the turn ran and not yet read: the
	// resumed run reads it as if it had never paused.
	Queued []QueuedInput `json:"queued,omitempty"`
	// Model is the model the run was started on in place of its agent's
	// own, while that agent still holds it: the resumed run keeps it.
	Model string `json:"model,omitempty"`
}

// QueuedInput is one injected input waiting for its queue's moment.
type QueuedInput struct {
	Queue QueueMode `json:"queue"`
	Input string    `json:"input"`
}
