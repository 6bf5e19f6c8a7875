package domain

import (
	"encoding/json"
	"time"
)

// Agent is one configured agent: who it is, which model it runs on through
// which provider, and the knobs of its behavior.
type Agent struct {
	ID string
	Ownership
	AgentSpec
	CreatedAt time.Time
	UpdatedAt time.Time
}

// AgentSpec is everything a client writes about an agent. The JSON tags are
// both the wire shape and the stored shape: each group is one JSON column,
// so a new knob needs no schema change. An agent carries no model-API
// credential; it names a provider. The API document marks a field
// `required:"true"` only when Validate refuses a spec without it.
type AgentSpec struct {
	Name          string `json:"name" required:"true"`
	Avatar        string `json:"avatar"`
	Description   string `json:"description"`
	Instructions  string `json:"instructions"`
	Model         string `json:"model" required:"true"`
	ProviderID    string `json:"provider_id"`
	ContextWindow int    `json:"context_window"`

	Behavior   AgentBehavior   `json:"behavior"`
	Resilience AgentResilience `json:"resilience"`
	Guardrails AgentGuardrails `json:"guardrails"`
	Session    AgentSession    `json:"session"`
	Approval   AgentApproval   `json:"approval"`
	Compaction AgentCompaction `json:"compaction"`

	ModelSettings ModelSettings `json:"model_settings"`
	Tools         []string      `json:"tools"`
	// Skills is tri-state: null = every visible skill, [] = none, else ids.
	Skills        []string      `json:"skills" nullable:"true"`
	Handoffs      []string      `json:"handoffs"`
	ErrorHandlers ErrorHandlers `json:"error_handlers"`
}

// AgentBehavior groups how the run loop treats the agent.
type AgentBehavior struct {
	MaxTurns               int                   `json:"max_turns"`
	HandoffDescription     string                `json:"handoff_description"`
	DisableToolChoiceReset bool                  `json:"disable_tool_choice_reset"`
	StopAtTools            string                `json:"stop_at_tools"`
	HandoffInputFilter     HandoffInputFilter    `json:"handoff_input_filter"`
	MaxToolConcurrency     int                   `json:"max_tool_concurrency"`
	ToolNotFoundBehavior   ToolNotFoundBehavior  `json:"tool_not_found_behavior"`
	ReasoningItemIDPolicy  ReasoningItemIDPolicy `json:"reasoning_item_id_policy"`
	WorkflowAuthoring      bool                  `json:"workflow_authoring"`
	Subagents              *bool                 `json:"subagents,omitempty"`
}

// AgentResilience groups retries and fallbacks of model calls.
type AgentResilience struct {
	RetryEnabled   bool            `json:"retry_enabled"`
	RetryPolicy    RetryPolicy     `json:"retry_policy"`
	FallbackModels []FallbackModel `json:"fallback_models"`
}

// RetryPolicy bounds retries of a failing model call; zero values take the
// runner's defaults.
type RetryPolicy struct {
	MaxRetries       int `json:"max_retries"`
	InitialBackoffMS int `json:"initial_backoff_ms"`
	MaxBackoffMS     int `json:"max_backoff_ms"`
}

// FallbackModel is a model tried when the primary fails: a provider and a
// model on it — never a key.
type FallbackModel struct {
	ProviderID string `json:"provider_id" required:"true"`
	Model      string `json:"model" required:"true"`
}

// AgentGuardrails groups the checks on the agent's runs.
type AgentGuardrails struct {
	Guardrails   []string        `json:"guardrails"`
	OutputSchema json.RawMessage `json:"output_schema,omitempty"`
}

// AgentSession groups what each turn sends of the session.
type AgentSession struct {
	PromptID      string `json:"prompt_id"`
	PromptVersion string `json:"prompt_version"`
	HistoryLimit  int    `json:"history_limit"`
}

// AgentApproval groups the human-in-the-loop gate.
type AgentApproval struct {
	ApproveTools []string `json:"approve_tools"`
}

// AgentCompaction groups how a long session is folded.
type AgentCompaction struct {
	Enabled         bool           `json:"compaction_enabled"`
	ThresholdTokens int            `json:"compaction_threshold_tokens"`
	Window          int            `json:"compaction_window"`
	Model           string         `json:"compaction_model"`
	Prompt          string         `json:"compaction_prompt"`
	Mode            CompactionMode `json:"compaction_mode"`
}

// ModelSettings pass through to the provider on every call; absent values
// leave the provider's defaults.
type ModelSettings struct {
	Temperature       *float64         `json:"temperature,omitempty"`
	TopP              *float64         `json:"top_p,omitempty"`
	MaxOutputTokens   *int             `json:"max_output_tokens,omitempty"`
	ReasoningEffort   ReasoningEffort  `json:"reasoning_effort,omitempty"`
	ReasoningSummary  ReasoningSummary `json:"reasoning_summary,omitempty"`
	ToolChoice        string           `json:"tool_choice,omitempty"`
	ParallelToolCalls *bool            `json:"parallel_tool_calls,omitempty"`
	Verbosity         Verbosity        `json:"verbosity,omitempty"`
}

// ErrorHandlers turn a failure into a static final output instead of an
// error; each is keyed by the failure it answers.
type ErrorHandlers struct {
	MaxTurns           *ErrorHandler `json:"max_turns,omitempty"`
	ModelRefusal       *ErrorHandler `json:"model_refusal,omitempty"`
	InvalidFinalOutput *ErrorHandler `json:"invalid_final_output,omitempty"`
}

// ErrorHandler is the static outcome of one failure.
type ErrorHandler struct {
	// FinalOutput is a string for plain-text agents, or a value matching the
	// agent's output_schema.
	FinalOutput        json.RawMessage `json:"final_output" required:"true"`
	ExcludeFromHistory bool            `json:"exclude_from_history"`
}
