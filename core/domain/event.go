package domain

import (
	"encoding/json"
	"strconv"
)

// Event types: the one vocabulary both transports speak. Over WebSocket an
// event is the frame {type, seq, payload}; over SSE the id is the seq, the
// event name the type, and the data the same envelope.
const (
	EventRunStarted    = "run.started"
	EventAgentStart    = "run.agent_start"
	EventStep          = "run.step"
	EventReasoning     = "run.reasoning"
	EventMessage       = "run.message"
	EventReasoningItem = "run.reasoning_item"
	EventToolCall      = "run.tool_call"
	EventToolProgress  = "run.tool_progress"
	EventToolResult    = "run.tool_result"
	EventHandoff       = "run.handoff"
	EventCompaction    = "run.compaction"
	EventOutput        = "run.output"
	EventInterrupted   = "run.interrupted"
	EventDiagnostic    = "run.diagnostic"
	EventGap           = "run.gap"
	EventError         = "run.error"
	EventCancelled     = "run.cancelled"
	EventInjected      = "run.injected"
	EventTitleUpdated  = "session.title_updated"
	EventProjectBound  = "session.project_bound"
	EventTaskUpdated   = "task.updated"
	EventTraceSpan     = "trace.span"
)

// Event is one numbered event of a run. Seq is assigned by the hub at
// publish time (0 for connection-local events like run.gap).
type Event struct {
	Type    string          `json:"type"`
	Seq     int64           `json:"seq,omitempty"`
	Payload json.RawMessage `json:"payload"`
}

// Final reports whether the event ends its run's stream: run.output,
// run.error and run.cancelled close it; run.interrupted does not (the
// decision resumes the same run).
func (e Event) Final() bool {
	return e.Type == EventOutput || e.Type == EventError || e.Type == EventCancelled
}

// Envelope renders the event as the {type, seq, payload} frame both
// transports carry. The payload is already JSON, so it is spliced rather
// than re-encoded for every watcher.
func (e Event) Envelope() []byte {
	return e.AppendEnvelope(make([]byte, 0, len(e.Payload)+len(e.Type)+48))
}

// AppendEnvelope appends the envelope to b, for a writer that reuses one
// buffer across events.
func (e Event) AppendEnvelope(b []byte) []byte {
	b = append(b, `{"type":`...)
	b = appendJSONString(b, e.Type)
	if e.Seq > 0 {
		b = append(b, `,"seq":`...)
		b = strconv.AppendInt(b, e.Seq, 10)
	}
	b = append(b, `,"payload":`...)
	if len(e.Payload) == 0 {
		b = append(b, "null"...)
	} else {
		b = append(b, e.Payload...)
	}
	return append(b, '}')
}

// appendJSONString appends s as a JSON string. Event types are plain
// words: they are copied as they are; anything else takes the encoder's
// way (escapes, HTML-safe), so the bytes match json.Marshal.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			enc, _ := json.Marshal(s)
			return append(b, enc...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// NewEvent encodes a payload into an event of the given type.
func NewEvent(typ string, payload any) Event {
	b, err := json.Marshal(payload)
	if err != nil {
		// Payloads are this package's own structs; a failure is a bug.
		panic("encode " + typ + ": " + err.Error())
	}
	return Event{Type: typ, Payload: b}
}

// Payloads of the run events, with the wire surface's exact field names.

// RunStartedPayload announces a run; Input lets a browser that did not
// send it render the user bubble.
type RunStartedPayload struct {
	RunID     string `json:"run_id"`
	SessionID string `json:"session_id"`
	Input     string `json:"input"`
	// Source says who wrote the input: "" for a person, task_notification
	// for the background results a wake-up run reads (not a chat bubble).
	Source string `json:"source,omitempty"`
	// Attachments are the images the user's message carries.
	Attachments []Attachment `json:"attachments,omitempty"`
	// A background task's run carries its task (TaskLink's fields): clients
	// key task state by task_id and send the run to the parent session's
	// task list, never to a chat timeline.
	TaskID          string `json:"task_id,omitempty"`
	ParentSessionID string `json:"parent_session_id,omitempty"`
	ParentRunID     string `json:"parent_run_id,omitempty"`
	ToolCallID      string `json:"tool_call_id,omitempty"`
	Label           string `json:"label,omitempty"`
}

// WithTask is the payload carrying a task's link (nil: none).
func (p RunStartedPayload) WithTask(l *TaskLink) RunStartedPayload {
	if l != nil {
		p.TaskID, p.ParentSessionID, p.ParentRunID, p.ToolCallID, p.Label = l.TaskID, l.ParentSessionID, l.ParentRunID, l.ToolCallID, l.Label
	}
	return p
}

// TaskLink ties a task's run to its task and where it came from.
type TaskLink struct {
	TaskID          string `json:"task_id"`
	ParentSessionID string `json:"parent_session_id"`
	ParentRunID     string `json:"parent_run_id"`
	ToolCallID      string `json:"tool_call_id"`
	Label           string `json:"label"`
}

// AgentStartPayload says which agent takes its turn.
type AgentStartPayload struct {
	RunID         string `json:"run_id"`
	AgentName     string `json:"agent_name"`
	AgentConfigID string `json:"agent_config_id,omitempty"`
}

// DeltaPayload is a streamed text or reasoning fragment.
type DeltaPayload struct {
	RunID string `json:"run_id"`
	Delta string `json:"delta"`
	// FirstSeq is set on a replayed event that stands for a stretch of
	// fragments merged into one: the first seq it covers (seq is the last).
	FirstSeq int64 `json:"first_seq,omitempty"`
}

// TextPayload is a completed message or reasoning block, authoritative over
// its deltas.
type TextPayload struct {
	RunID string `json:"run_id"`
	Text  string `json:"text"`
}

// ToolCallPayload announces a tool call.
type ToolCallPayload struct {
	RunID         string `json:"run_id"`
	ToolCallID    string `json:"tool_call_id"`
	ToolName      string `json:"tool_name"`
	Arguments     string `json:"arguments"`
	NeedsApproval bool   `json:"needs_approval"`
}

// ToolResultPayload carries a tool's output and its display fields.
type ToolResultPayload struct {
	RunID      string            `json:"run_id"`
	ToolCallID string            `json:"tool_call_id"`
	Output     string            `json:"output"`
	Title      string            `json:"title,omitempty"`
	Summary    string            `json:"summary,omitempty"`
	Renderer   string            `json:"renderer,omitempty"`
	IsError    bool              `json:"is_error,omitempty"`
	Extra      map[string]string `json:"extra,omitempty"`
}

// ToolProgressPayload is partial output of a running tool: Delta appends
// to what the client holds for the call.
type ToolProgressPayload struct {
	RunID    string `json:"run_id"`
	CallID   string `json:"call_id"`
	ToolName string `json:"tool_name"`
	Delta    string `json:"delta"`
	Renderer string `json:"renderer,omitempty"`
	// FirstSeq: as DeltaPayload's, on a replayed stretch of progress.
	FirstSeq int64 `json:"first_seq,omitempty"`
}

// ProjectBoundPayload announces a session's permanent project binding.
type ProjectBoundPayload struct {
	SessionID string `json:"session_id"`
	ProjectID string `json:"project_id"`
}

// HandoffPayload records a handoff between agents.
type HandoffPayload struct {
	RunID  string `json:"run_id"`
	From   string `json:"from"`
	To     string `json:"to"`
	FromID string `json:"from_id,omitempty"`
	ToID   string `json:"to_id,omitempty"`
}

// CompactionPayload reports a session compaction at the end of a turn:
// Phase is started, then finished. It is progress only.
type CompactionPayload struct {
	RunID  string `json:"run_id"`
	Phase  string `json:"phase"`
	Detail string `json:"detail,omitempty"`
}

// TitleUpdatedPayload announces a session's new title; RunID is the run
// whose sequence carries it.
type TitleUpdatedPayload struct {
	SessionID string `json:"session_id"`
	RunID     string `json:"run_id"`
	Title     string `json:"title"`
}

// TaskUpdatedPayload is a background task's row as the store has it.
type TaskUpdatedPayload = TaskInfo

// OutputPayload is a run's final output.
type OutputPayload struct {
	RunID       string `json:"run_id"`
	FinalOutput string `json:"final_output"`
}

// RunIDPayload is an event that carries only the run id.
type RunIDPayload struct {
	RunID string `json:"run_id"`
}

// CancelServerShutdown is why a run the server's shutdown cancelled ended
// (its cancellation reason and its run row's error code).
const CancelServerShutdown = "server_shutdown"

// CancelDatabaseUnreachable is why a run ended that its replica stopped
// because the database stopped taking its heartbeat (replicas): before
// another replica could count it gone and take the run over.
const CancelDatabaseUnreachable = "database_unreachable"

// CancelledPayload ends a cancelled run, with why when known.
type CancelledPayload struct {
	RunID  string `json:"run_id"`
	Reason string `json:"reason,omitempty"`
}

// DiagnosticPayload reports trouble the run survived.
type DiagnosticPayload struct {
	RunID   string            `json:"run_id"`
	Type    string            `json:"type"`
	Code    string            `json:"code,omitempty"`
	Message string            `json:"message,omitempty"`
	Details map[string]string `json:"details,omitempty"`
}

// GapPayload tells one connection it fell behind: events after LastGood up
// to Next were dropped; resubscribe from LastGood to refetch them.
type GapPayload struct {
	RunID    string `json:"run_id"`
	Dropped  int64  `json:"dropped"`
	LastGood int64  `json:"last_good"`
	Next     int64  `json:"next"`
}

// ErrorPayload ends a failed run (or refuses one that never started, with
// SessionID set).
type ErrorPayload struct {
	RunID     string `json:"run_id,omitempty"`
	SessionID string `json:"session_id,omitempty"`
	Code      string `json:"code"`
	Message   string `json:"message"`
	Guardrail string `json:"guardrail,omitempty"`
	Stage     string `json:"stage,omitempty"`
}

// InjectedPayload says injected input was consumed.
type InjectedPayload struct {
	RunID string `json:"run_id"`
	Input string `json:"input"`
	Index int    `json:"index"`
}

// Run error codes: one namespace for both transports.
const (
	CodeSessionBusy      = "session_busy"
	CodeSessionNotFound  = "session_not_found"
	CodeRunNotFound      = "run_not_found"
	CodeConfigError      = "config_error"
	CodePersistError     = "persist_error"
	CodeModelError       = "model_error"
	CodeMaxTurnsExceeded = "max_turns_exceeded"
	CodeModelBehavior    = "model_behavior"
	CodeGuardrail        = "guardrail_tripwire"
	CodeToolTimeout      = "tool_timeout"
	CodeUserError        = "user_error"
	CodeServerRestarted  = "server_restarted"
	CodeContextOverflow  = "context_overflow"
	CodeApprovalFailed   = "approval_failed"
	CodeBudgetExceeded   = "budget_exceeded"
)
