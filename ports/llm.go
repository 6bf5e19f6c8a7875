package ports

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
)

// LLM makes one streamed model call. The internal item format is the OpenAI
// Responses item shape (see ModelRequest.Input); an adapter for another
// protocol translates at its edge, both ways.
type LLM interface {
	// Generate sends req, calls sink for every delta as it arrives (from the
	// calling goroutine, in order; a nil sink takes none), and returns the
	// completed output items and usage once the stream ends. Errors are
	// *ModelError (or a context error when ctx ends); a failed or
	// cancelled call's response still carries the usage the provider had
	// reported (zero when it reported none), for the usage record. Every
	// adapter runs these promises as adapters/llm/internal/llmtest.Contract.
	Generate(ctx context.Context, req ModelRequest, sink func(ModelDelta)) (ModelResponse, error)
	// Models lists the models the endpoint offers, through the vendor's
	// models endpoint; errors are *ModelError as Generate's are.
	Models(ctx context.Context, ep ProviderEndpoint) ([]ModelInfo, error)
}

// ModelInfo is one model a provider offers.
type ModelInfo struct {
	ID          string `json:"id"`
	DisplayName string `json:"display_name,omitempty"`
}

// ProviderEndpoint is where and how a call is sent: a provider row resolved,
// its key opened.
type ProviderEndpoint struct {
	ProviderID string
	Name       string // the provider's name, for error messages
	// AuthMode is the provider's: a chatgpt_login endpoint carries no key
	// and is called through the Codex backend with the provider's sign-in.
	AuthMode string
	Type     string // openai, anthropic
	API      string // responses, chat_completions, messages
	BaseURL  string // "" = the type's official endpoint
	APIKey   string
	ProxyURL string // the proxy_url setting, "" for none
	// Outbound is what the base URL may reach: the policy of the
	// provider's owner. The zero value refuses private addresses.
	Outbound domain.OutboundPolicy
}

// ToolDef is a function tool offered to the model. Its JSON form is what a
// generation span's payload stores under tools, snake_case like every
// payload (spans stored before the tags, with Go's field names, still
// decode: encoding/json matches names case-insensitively).
type ToolDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"` // JSON Schema object
}

// ModelRequest is one model call.
type ModelRequest struct {
	Endpoint     ProviderEndpoint
	Model        string
	Instructions string // the system prompt
	// Input is the conversation as Responses items, oldest first:
	//   {"type":"message","role":"user"|"assistant"|"system"|"developer","content":[{"type":"input_text"|"output_text","text":…}]}
	//   {"type":"function_call","call_id":…,"name":…,"arguments":"<JSON text>"}
	//   {"type":"function_call_output","call_id":…,"output":"<text>"}
	//   {"type":"reasoning","id":…,"summary":[{"type":"summary_text","text":…}],"encrypted_content":…}
	// Adapters drop fields their protocol does not take.
	Input        []json.RawMessage
	Tools        []ToolDef
	ToolChoice   string // "", auto, required, none, or a tool name
	Settings     domain.ModelSettings
	OutputSchema json.RawMessage // non-nil: structured output as a JSON object matching it
	// PromptID / PromptVersion name an OpenAI stored prompt (responses only).
	PromptID      string
	PromptVersion string
	// ConversationID is a stable key of the conversation, for providers
	// that cache by it (the Codex backend's prompt_cache_key); "" for a
	// call outside one.
	ConversationID string
}

// DeltaKind says what a streamed fragment belongs to.
type DeltaKind string

// The delta kinds.
const (
	DeltaText      DeltaKind = "text"      // assistant message text
	DeltaReasoning DeltaKind = "reasoning" // reasoning / thinking text
	DeltaArguments DeltaKind = "arguments" // a function call's arguments JSON, as it streams
)

// ModelDelta is one streamed fragment.
type ModelDelta struct {
	Kind DeltaKind
	Text string
	// CallID and Name identify the function call an arguments delta extends.
	CallID string
	Name   string
}

// ModelResponse is a completed call.
type ModelResponse struct {
	// Output is the model's output items in Responses shape, in order:
	// reasoning, message (role assistant, output_text parts), function_call.
	Output     []json.RawMessage
	Usage      domain.Usage
	ResponseID string
	Model      string // the model that answered, as the provider reports it
	// Refusal is set when the model declined (a refusal part or stop reason).
	Refusal string
	// Dropped names the request settings the provider does not take, left
	// out of the call rather than refused (sorted; nil when none were).
	Dropped []string
}

// ModelErrorKind classifies a failed call, which decides what the run does.
type ModelErrorKind string

// The model error kinds.
const (
	// ModelAuth: 401/403 — the provider's credential or access is wrong; a
	// configuration error naming the provider, never retried.
	ModelAuth ModelErrorKind = "auth"
	// ModelRateLimited: 429 — retryable.
	ModelRateLimited ModelErrorKind = "rate_limited"
	// ModelUnavailable: 5xx, a dropped connection or a timeout — retryable.
	ModelUnavailable ModelErrorKind = "unavailable"
	// ModelOverflow: the input exceeds the model's context window
	// (OpenAI context_length_exceeded, Anthropic "prompt is too long").
	ModelOverflow ModelErrorKind = "context_overflow"
	// ModelInvalid: any other refusal of the request (4xx).
	ModelInvalid ModelErrorKind = "invalid_request"
)

// ModelError is a failed model call, classified at the adapter's edge.
type ModelError struct {
	Kind     ModelErrorKind
	Provider string // the provider's name
	Status   int    // HTTP status, 0 when none was received
	Message  string // the provider's message, safe to show
	Err      error
}

// Error describes the failure with the provider's name, and the
// provider's words cut to errs.MaxUpstreamText: an address that answers
// something else than a model API never gets its page quoted back.
func (e *ModelError) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("provider %s: %s (HTTP %d): %s", e.Provider, e.Kind, e.Status, errs.Short(e.Message))
	}
	return fmt.Sprintf("provider %s: %s: %s", e.Provider, e.Kind, errs.Short(e.Message))
}

// Unwrap exposes the cause.
func (e *ModelError) Unwrap() error { return e.Err }

// Retryable reports whether trying again may succeed.
func (e *ModelError) Retryable() bool {
	return e.Kind == ModelRateLimited || e.Kind == ModelUnavailable
}

// Coded returns the error in the wire vocabulary: auth failures are the
// configuration's fault (validation), the rest are upstream failures.
func (e *ModelError) Coded() *errs.Error {
	code := errs.Upstream
	if e.Kind == ModelAuth || e.Kind == ModelInvalid || e.Kind == ModelOverflow {
		code = errs.Validation
	}
	return &errs.Error{Code: code, Message: e.Error(), Err: e}
}
