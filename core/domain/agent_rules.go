package domain

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agents-server/agents-server/core/errs"
)

// AvatarCatalog names the pictures the UI ships under /avatars/<name>.svg.
// Anything else is refused: the UI's CSP would block an outside URL anyway.
var AvatarCatalog = []string{
	"atom", "bear", "cat", "compass", "fox", "lighthouse", "octopus", "owl", "robot", "rocket", "spark", "wizard",
}

// Agent field bounds: Validate checks them, and the API document states
// them from these same constants (lengths in characters, numbers
// inclusive; every number's least value is 0 unless said otherwise).
const (
	MaxAgentName         = 100
	MaxAgentDescription  = 500
	MaxAgentInstructions = 200_000
	MaxContextWindow     = 10_000_000 // also bounds compaction_threshold_tokens
	MaxTurnsLimit        = 1000
	MaxToolConcurrency   = 64
	MaxRetries           = 10
	MaxBackoffMS         = 10 * 60 * 1000
	MaxFallbacks         = 5
	MaxListLen           = 200 // tools, skills, handoffs, guardrails, approve_tools
	MaxHistoryLimit      = 1_000_000
	MaxCompactionWindow  = 10_000
	MaxModelName         = 200 // a model's name, on an agent or chosen for one run
)

// Model setting bounds, for agents and the playground alike: temperature
// from 0 to MaxTemperature, top_p above 0 up to MaxTopP, max_output_tokens
// at least MinOutputTokens.
const (
	MaxTemperature  = 2.0
	MaxTopP         = 1.0
	MinOutputTokens = 1
)

var toolNamePattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// ValidToolName reports whether s can name a tool for a model API.
func ValidToolName(s string) bool { return toolNamePattern.MatchString(s) }

// SafeToolName spells s with the characters tool names may hold: any
// other becomes "_" (the length is the caller's to bound).
func SafeToolName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '_' || r == '-' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			return r
		}
		return '_'
	}, s)
}

// Validate checks everything about a spec that needs no other row: bounds,
// enums, list shapes. Cross-entity checks (the provider, guardrails,
// handoffs, skills, the output schema) are the agents service's. Returns
// validation naming every offending field.
func (s AgentSpec) Validate() error {
	var f errs.FieldErrors
	s.checkIdentity(&f)
	s.Behavior.check(&f)
	s.Resilience.check(&f)
	uniqueNames(&f, "guardrails.guardrails", s.Guardrails.Guardrails, nil)
	if raw := bytes.TrimSpace(s.Guardrails.OutputSchema); len(raw) > 0 && !bytes.Equal(raw, []byte("null")) && raw[0] != '{' {
		f.Add("guardrails.output_schema", "must be a JSON Schema object")
	}
	bound(&f, "session.history_limit", s.Session.HistoryLimit, 0, MaxHistoryLimit)
	if s.Session.PromptVersion != "" && s.Session.PromptID == "" {
		f.Add("session.prompt_version", "needs session.prompt_id")
	}
	approve := s.Approval.ApproveTools
	if slices.Contains(approve, "*") && len(approve) > 1 {
		f.Add("approval.approve_tools", `"*" already covers every tool; list it alone`)
	} else if !slices.Equal(approve, []string{"*"}) {
		uniqueNames(&f, "approval.approve_tools", approve, ValidToolName)
	}
	c := s.Compaction
	bound(&f, "compaction.compaction_threshold_tokens", c.ThresholdTokens, 0, MaxContextWindow)
	bound(&f, "compaction.compaction_window", c.Window, 0, MaxCompactionWindow)
	oneOf(&f, "compaction.compaction_mode", c.Mode)
	s.ModelSettings.check(&f, "model_settings.")
	uniqueNames(&f, "tools", s.Tools, ValidToolName)
	uniqueNames(&f, "skills", s.Skills, nil)
	uniqueNames(&f, "handoffs", s.Handoffs, nil)
	s.ErrorHandlers.check(&f)
	return f.Err()
}

// checkIdentity checks what names and presents the agent, and its model.
func (s AgentSpec) checkIdentity(f *errs.FieldErrors) {
	switch name := strings.TrimSpace(s.Name); {
	case name == "":
		f.Add("name", "is required")
	case utf8.RuneCountInString(s.Name) > MaxAgentName:
		f.Add("name", "must be at most %d characters", MaxAgentName)
	case name != s.Name:
		f.Add("name", "must not start or end with spaces")
	case strings.ContainsAny(s.Name, "\r\n"):
		f.Add("name", "must be one line")
	}
	if s.Avatar != "" {
		name, ok := strings.CutPrefix(s.Avatar, "/avatars/")
		name, okExt := strings.CutSuffix(name, ".svg")
		if !ok || !okExt || !slices.Contains(AvatarCatalog, name) {
			f.Add("avatar", "must be /avatars/<name>.svg with a name from the catalog (%s)", strings.Join(AvatarCatalog, ", "))
		}
	}
	if utf8.RuneCountInString(s.Description) > MaxAgentDescription {
		f.Add("description", "must be at most %d characters", MaxAgentDescription)
	}
	if utf8.RuneCountInString(s.Instructions) > MaxAgentInstructions {
		f.Add("instructions", "must be at most %d characters", MaxAgentInstructions)
	}
	if strings.TrimSpace(s.Model) == "" {
		f.Add("model", "is required")
	}
	bound(f, "context_window", s.ContextWindow, 0, MaxContextWindow)
}

func (b AgentBehavior) check(f *errs.FieldErrors) {
	bound(f, "behavior.max_turns", b.MaxTurns, 0, MaxTurnsLimit)
	bound(f, "behavior.max_tool_concurrency", b.MaxToolConcurrency, 0, MaxToolConcurrency)
	oneOf(f, "behavior.handoff_input_filter", b.HandoffInputFilter)
	oneOf(f, "behavior.tool_not_found_behavior", b.ToolNotFoundBehavior)
	oneOf(f, "behavior.reasoning_item_id_policy", b.ReasoningItemIDPolicy)
	if b.StopAtTools != "" {
		for _, name := range strings.Split(b.StopAtTools, ",") {
			if !ValidToolName(strings.TrimSpace(name)) {
				f.Add("behavior.stop_at_tools", "%q is not a tool name", strings.TrimSpace(name))
				break
			}
		}
	}
}

func (r AgentResilience) check(f *errs.FieldErrors) {
	bound(f, "resilience.retry_policy.max_retries", r.RetryPolicy.MaxRetries, 0, MaxRetries)
	bound(f, "resilience.retry_policy.initial_backoff_ms", r.RetryPolicy.InitialBackoffMS, 0, MaxBackoffMS)
	bound(f, "resilience.retry_policy.max_backoff_ms", r.RetryPolicy.MaxBackoffMS, 0, MaxBackoffMS)
	if p := r.RetryPolicy; p.MaxBackoffMS > 0 && p.InitialBackoffMS > p.MaxBackoffMS {
		f.Add("resilience.retry_policy.max_backoff_ms", "must not be below initial_backoff_ms")
	}
	if len(r.FallbackModels) > MaxFallbacks {
		f.Add("resilience.fallback_models", "at most %d fallbacks", MaxFallbacks)
	}
	for i, fb := range r.FallbackModels {
		if fb.ProviderID == "" {
			f.Add(fmt.Sprintf("resilience.fallback_models[%d].provider_id", i), "is required")
		}
		if strings.TrimSpace(fb.Model) == "" {
			f.Add(fmt.Sprintf("resilience.fallback_models[%d].model", i), "is required")
		}
	}
}

func (h ErrorHandlers) check(f *errs.FieldErrors) {
	all := h.All()
	for _, key := range ErrorHandlerKeys {
		eh, ok := all[key]
		if !ok {
			continue
		}
		if raw := bytes.TrimSpace(eh.FinalOutput); len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
			f.Add("error_handlers."+key+".final_output", "is required")
		}
	}
}

// Validate checks the settings' bounds and enums on their own (the
// playground's edits; an agent's are checked by AgentSpec.Validate).
// Returns validation naming every offending field under model_settings.
func (m ModelSettings) Validate() error {
	var f errs.FieldErrors
	m.check(&f, "model_settings.")
	return f.Err()
}

func (m ModelSettings) check(f *errs.FieldErrors, prefix string) {
	if m.Temperature != nil && (*m.Temperature < 0 || *m.Temperature > MaxTemperature) {
		f.Add(prefix+"temperature", "must be between 0 and %g", MaxTemperature)
	}
	if m.TopP != nil && (*m.TopP <= 0 || *m.TopP > MaxTopP) {
		f.Add(prefix+"top_p", "must be above 0 and at most %g", MaxTopP)
	}
	if m.MaxOutputTokens != nil && *m.MaxOutputTokens < MinOutputTokens {
		f.Add(prefix+"max_output_tokens", "must be positive")
	}
	oneOf(f, prefix+"reasoning_effort", m.ReasoningEffort)
	oneOf(f, prefix+"reasoning_summary", m.ReasoningSummary)
	oneOf(f, prefix+"verbosity", m.Verbosity)
	if tc := m.ToolChoice; tc != "" && tc != "auto" && tc != "required" && tc != "none" && !ValidToolName(tc) {
		f.Add(prefix+"tool_choice", "must be auto, required, none or a tool name")
	}
}

// ErrorHandlerKeys are the failures an error handler can answer.
var ErrorHandlerKeys = []string{"max_turns", "model_refusal", "invalid_final_output"}

// All returns the handlers that are set, by key.
func (h ErrorHandlers) All() map[string]ErrorHandler {
	out := map[string]ErrorHandler{}
	for key, p := range map[string]*ErrorHandler{"max_turns": h.MaxTurns, "model_refusal": h.ModelRefusal, "invalid_final_output": h.InvalidFinalOutput} {
		if p != nil {
			out[key] = *p
		}
	}
	return out
}

func bound(f *errs.FieldErrors, field string, v, lo, hi int) {
	if v < lo || v > hi {
		f.Add(field, "must be between %d and %d", lo, hi)
	}
}

func oneOf[T Enum](f *errs.FieldErrors, field string, v T) {
	if !Known(v) {
		shown := slices.DeleteFunc(slices.Clone(v.Values()), func(s string) bool { return s == "" })
		f.Add(field, "must be one of %s (or empty)", strings.Join(shown, ", "))
	}
}

// uniqueNames checks a list has no empty, duplicate or (with valid) badly
// formed entry, and is not absurdly long.
func uniqueNames(f *errs.FieldErrors, field string, list []string, valid func(string) bool) {
	if len(list) > MaxListLen {
		f.Add(field, "at most %d entries", MaxListLen)
		return
	}
	for i, v := range list {
		switch {
		case strings.TrimSpace(v) == "":
			f.Add(fmt.Sprintf("%s[%d]", field, i), "is empty")
		case slices.Index(list, v) != i:
			f.Add(fmt.Sprintf("%s[%d]", field, i), "%q is listed twice", v)
		case valid != nil && !valid(v):
			f.Add(fmt.Sprintf("%s[%d]", field, i), "%q is not a valid name", v)
		}
	}
}

// HandoffToolName is the tool a handoff to an agent named name becomes:
// lowercased, every run of non-alphanumerics replaced by "_", so "Code
// Reviewer" and "code-reviewer" both give transfer_to_code_reviewer.
func HandoffToolName(name string) string {
	var b strings.Builder
	b.WriteString("transfer_to_")
	gap := false
	for _, r := range strings.ToLower(name) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			if gap && b.Len() > len("transfer_to_") {
				b.WriteByte('_')
			}
			gap = false
			b.WriteRune(r)
		} else {
			gap = true
		}
	}
	out := b.String()
	if len(out) > 64 {
		out = out[:64]
	}
	return out
}

// CheckRunModel refuses, as a validation error on model, a model chosen
// for one run that cannot be a model's name: longer than MaxModelName, or
// with spaces or control characters. Empty (the agent's own) passes.
func CheckRunModel(model string) error {
	if utf8.RuneCountInString(model) > MaxModelName || strings.ContainsFunc(model, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) {
		return errs.Field("model", "must be one model's name: at most %d characters, no spaces", MaxModelName)
	}
	return nil
}
