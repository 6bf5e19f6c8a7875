package httpapi

import (
	"reflect"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/providers"
	"github.com/agents-server/agents-server/core/sandboxes"
)

// Bound is a limit the server enforces on one value a client sends, as the
// document states it: numbers inclusive (unless ExclusiveMin), lengths in
// characters, sizes in entries. The zero value states nothing.
type Bound struct {
	Min, Max           *float64
	ExclusiveMin       bool
	MinLength          uint64
	MaxLength          uint64
	MinItems, MaxItems uint64
	Pattern            string
}

func between(lo, hi float64) Bound { return Bound{Min: &lo, Max: &hi} }
func atLeast(lo float64) Bound     { return Bound{Min: &lo} }
func maxChars(n int) Bound         { return Bound{MaxLength: uint64(n)} }
func minChars(n int) Bound         { return Bound{MinLength: uint64(n)} }
func maxItems(n int) Bound         { return Bound{MaxItems: uint64(n)} }
func minItems(n int) Bound         { return Bound{MinItems: uint64(n)} }
func matching(re string) Bound     { return Bound{Pattern: re} }

// apply writes the bound into a schema.
func (b Bound) apply(s *openapi3.Schema) {
	if b.Min != nil {
		s.Min = b.Min
		if b.ExclusiveMin {
			// OpenAPI 3.1 (JSON Schema 2020-12): the least refused value.
			s.ExclusiveMin = openapi3.ExclusiveBound{Value: b.Min}
			s.Min = nil
		}
	}
	if b.Max != nil {
		s.Max = b.Max
	}
	s.MinLength = b.MinLength
	if b.MaxLength > 0 {
		s.MaxLength = &b.MaxLength
	}
	s.MinItems = b.MinItems
	if b.MaxItems > 0 {
		s.MaxItems = &b.MaxItems
	}
	s.Pattern = b.Pattern
}

// requestBounds are the limits the server checks on request fields, keyed by
// the Go type that declares the field and its JSON name. Every number is the
// constant the validator itself compares with, so the document cannot drift
// from the server; TestDocumentedBoundsAreEnforced proves each one against
// the running server from both sides. Limits counted in bytes, and names
// the server trims before it counts them, are left to the descriptions: a
// character count would state something the server does not check.
var requestBounds = map[reflect.Type]map[string]Bound{
	reflect.TypeFor[domain.AgentSpec](): {
		"name":           maxChars(domain.MaxAgentName),
		"description":    maxChars(domain.MaxAgentDescription),
		"instructions":   maxChars(domain.MaxAgentInstructions),
		"context_window": between(0, domain.MaxContextWindow),
		"tools":          maxItems(domain.MaxListLen),
		"skills":         maxItems(domain.MaxListLen),
		"handoffs":       maxItems(domain.MaxListLen),
	},
	reflect.TypeFor[domain.AgentBehavior](): {
		"max_turns":            between(0, domain.MaxTurnsLimit),
		"max_tool_concurrency": between(0, domain.MaxToolConcurrency),
	},
	reflect.TypeFor[domain.RetryPolicy](): {
		"max_retries":        between(0, domain.MaxRetries),
		"initial_backoff_ms": between(0, domain.MaxBackoffMS),
		"max_backoff_ms":     between(0, domain.MaxBackoffMS),
	},
	reflect.TypeFor[domain.AgentResilience](): {"fallback_models": maxItems(domain.MaxFallbacks)},
	reflect.TypeFor[domain.AgentGuardrails](): {"guardrails": maxItems(domain.MaxListLen)},
	reflect.TypeFor[domain.AgentSession]():    {"history_limit": between(0, domain.MaxHistoryLimit)},
	reflect.TypeFor[domain.AgentApproval]():   {"approve_tools": maxItems(domain.MaxListLen)},
	reflect.TypeFor[domain.AgentCompaction](): {
		"compaction_threshold_tokens": between(0, domain.MaxContextWindow),
		"compaction_window":           between(0, domain.MaxCompactionWindow),
	},
	reflect.TypeFor[domain.ModelSettings](): {
		"temperature":       between(0, domain.MaxTemperature),
		"top_p":             {Min: ptr(0.0), ExclusiveMin: true, Max: ptr(domain.MaxTopP)},
		"max_output_tokens": atLeast(domain.MinOutputTokens),
	},
	reflect.TypeFor[CreateUserRequest]():  {"username": maxChars(domain.MaxUsernameLen), "password": minChars(domain.MinPasswordLen)},
	reflect.TypeFor[UpdateUserRequest]():  {"password": minChars(domain.MinPasswordLen)},
	reflect.TypeFor[CreateTokenRequest](): {"expires_in_days": between(0, domain.MaxPersonalTokenDays)},
	reflect.TypeFor[ProviderInput]():      {"name": maxChars(providers.MaxName)},
	reflect.TypeFor[MemoryInput]():        {"key": maxChars(domain.MaxMemoryKeyLen)},
	reflect.TypeFor[GuardrailInput]():     {"name": maxChars(domain.MaxGuardrailName), "stages": minItems(1)},
	reflect.TypeFor[SandboxInput]():       {"prompt": maxChars(sandboxes.MaxPrompt)},
	reflect.TypeFor[ProjectInput]():       {"env": maxItems(domain.MaxProjectEnv)},
	reflect.TypeFor[EnvVar]():             {"name": matching(domain.EnvNamePattern)},
}

// applyBounds writes the bounds of t's fields (embedded structs' included)
// into its schema's properties.
func applyBounds(t reflect.Type, s *openapi3.Schema) {
	for name, declaring := range declaringTypes(t) {
		b, ok := requestBounds[declaring][name]
		if p := s.Properties[name]; ok && p != nil && p.Value != nil {
			b.apply(p.Value)
		}
	}
}

// declaringTypes maps each JSON field of t to the struct type that declares
// it, following embedded structs as encoding/json does.
func declaringTypes(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous && name == "" {
			for k, v := range declaringTypes(f.Type) {
				out[k] = v
			}
			continue
		}
		if name != "" && name != "-" && f.IsExported() {
			out[name] = t
		}
	}
	return out
}
