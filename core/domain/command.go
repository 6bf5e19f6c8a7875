package domain

// Client commands: the {type, payload} frames a client sends on the
// WebSocket bus. Their answers are events (a refusal is run.error).
const (
	CommandRunCreate    = "run.create"
	CommandRunSubscribe = "run.subscribe"
	CommandRunCancel    = "run.cancel"
	CommandRunInject    = "run.inject"
	CommandToolApprove  = "tool.approve"
	CommandToolReject   = "tool.reject"
)

// RunCreatePayload starts a run in a session, as POST
// /sessions/:id/runs does.
type RunCreatePayload struct {
	SessionID     string   `json:"session_id"`
	Input         string   `json:"input"`
	AgentConfigID string   `json:"agent_config_id"`
	ProjectID     string   `json:"project_id"`
	Plan          *bool    `json:"plan"`
	AttachmentIDs []string `json:"attachment_ids"`
	Model         string   `json:"model"`
}

// RunSubscribePayload attaches the connection to a run's stream from a
// cursor: events after FromSeq are replayed.
type RunSubscribePayload struct {
	RunID   string `json:"run_id"`
	FromSeq int64  `json:"from_seq"`
}

// RunCancelPayload stops a run; Mode is a Cancel mode, empty for abort.
type RunCancelPayload struct {
	RunID string     `json:"run_id"`
	Mode  CancelMode `json:"mode"`
}

// RunInjectPayload feeds input into a live run; Queue is an inject queue.
type RunInjectPayload struct {
	RunID string    `json:"run_id"`
	Queue QueueMode `json:"queue"`
	Input string    `json:"input"`
}

// ToolDecisionPayload approves or rejects a pending tool call: Scope is a
// decision scope, Reason reaches the model.
type ToolDecisionPayload struct {
	ToolCallID string        `json:"tool_call_id"`
	Scope      ApprovalScope `json:"scope"`
	Reason     string        `json:"reason"`
}
