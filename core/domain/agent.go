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
	Avatar        string `json:"avatar" doc:"A picture from the UI's catalog, /avatars/<name>.svg; empty renders an initial"`
	Description   string `json:"description" doc:"What the agent is for, in a sentence; never sent to the model"`
	Instructions  string `json:"instructions"`
	Model         string `json:"model" required:"true"`
	ProviderID    string `json:"provider_id" doc:"The provider whose endpoint and credential the agent uses; empty fails the run's pre-flight"`
	ContextWindow int    `json:"context_window" doc:"Declared context window in tokens; 0 = unknown"`

	Behavior   AgentBehavior   `json:"behavior"`
	Resilience AgentResilience `json:"resilience"`
	Guardrails AgentGuardrails `json:"guardrails"`
	Session    AgentSession    `json:"session"`
	Approval   AgentApproval   `json:"approval"`
	Compaction AgentCompaction `json:"compaction"`

	ModelSettings ModelSettings `json:"model_settings"`
	Tools         []string      `json:"tools" doc:"Built-in tool names the agent may use"`
	// Skills is tri-state: null = every visible skill, [] = none, else ids.
	Skills        []string      `json:"skills" nullable:"true" doc:"Skill ids: null = every visible skill, [] = none"`
	Handoffs      []string      `json:"handoffs" doc:"Ids of agents this one may hand the conversation to"`
	ErrorHandlers ErrorHandlers `json:"error_handlers"`
}

// AgentBehavior groups how the run loop treats the agent.
type AgentBehavior struct {
	MaxTurns               int    `json:"max_turns" doc:"Model turns per run; 0 = the default (10)"`
	HandoffDescription     string `json:"handoff_description" doc:"What other agents are told this one is for when they may hand off to it"`
	DisableToolChoiceReset bool   `json:"disable_tool_choice_reset"`
	StopAtTools            string `json:"stop_at_tools" doc:"Comma-separated tool names: the run ends after a turn that called any of them"`
	HandoffInputFilter     string `json:"handoff_input_filter" enum:",remove_all_tools" doc:"What the next agent sees of the history on a handoff"`
	MaxToolConcurrency     int    `json:"max_tool_concurrency" doc:"Tool calls run at once; 0 = the default"`
	ToolNotFoundBehavior   string `json:"tool_not_found_behavior" enum:",error" doc:"Empty feeds an unknown tool name back to the model; error ends the run"`
	ReasoningItemIDPolicy  string `json:"reasoning_item_id_policy" enum:",preserve,omit"`
	WorkflowAuthoring      bool   `json:"workflow_authoring" doc:"Gives chat runs get_workflow / save_workflow"`
	Subagents              *bool  `json:"subagents,omitempty" doc:"Background task tools on chat runs; absent = on"`
}

// AgentResilience groups retries and fallbacks of model calls.
type AgentResilience struct {
	RetryEnabled   bool            `json:"retry_enabled"`
	RetryPolicy    RetryPolicy     `json:"retry_policy"`
	FallbackModels []FallbackModel `json:"fallback_models" doc:"Tried in order when the primary model keeps failing"`
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
	Guardrails   []string        `json:"guardrails" doc:"Guardrail names; each carries the stages it inspects"`
	OutputSchema json.RawMessage `json:"output_schema,omitempty" doc:"A JSON Schema (object) the final output must match"`
}

// AgentSession groups what each turn sends of the session.
type AgentSession struct {
	PromptID      string `json:"prompt_id" doc:"An OpenAI stored prompt"`
	PromptVersion string `json:"prompt_version"`
	HistoryLimit  int    `json:"history_limit" doc:"Recent items sent per turn; 0 = all"`
}

// AgentApproval groups the human-in-the-loop gate.
type AgentApproval struct {
	ApproveTools []string `json:"approve_tools" doc:"[\"*\"] or tool names whose calls wait for a person's decision"`
}

// AgentCompaction groups how a long session is folded.
type AgentCompaction struct {
	Enabled         bool   `json:"compaction_enabled"`
	ThresholdTokens int    `json:"compaction_threshold_tokens" doc:"Fold when the history passes this many tokens; 0 = 50000"`
	Window          int    `json:"compaction_window" doc:"Recent entries kept intact; 0 = 10"`
	Model           string `json:"compaction_model"`
	Prompt          string `json:"compaction_prompt"`
	Mode            string `json:"compaction_mode" enum:",summary,reset,hybrid"`
}

// ModelSettings pass through to the provider on every call; absent values
// leave the provider's defaults.
type ModelSettings struct {
	Temperature       *float64 `json:"temperature,omitempty"`
	TopP              *float64 `json:"top_p,omitempty"`
	MaxOutputTokens   *int     `json:"max_output_tokens,omitempty"`
	ReasoningEffort   string   `json:"reasoning_effort,omitempty" enum:"minimal,low,medium,high"`
	ReasoningSummary  string   `json:"reasoning_summary,omitempty" enum:"auto,concise,detailed"`
	ToolChoice        string   `json:"tool_choice,omitempty" doc:"auto, required, none, or a tool name"`
	ParallelToolCalls *bool    `json:"parallel_tool_calls,omitempty"`
	Verbosity         string   `json:"verbosity,omitempty" enum:"low,medium,high"`
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
