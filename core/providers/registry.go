// Package providers manages model providers: the one place a model-API
// credential is stored, the registry of provider types that validation, the
// API and (later) construction all read, and the sealed key.
package providers

import (
	"net/url"
	"slices"
	"strings"

	"github.com/agents-server/agents-server/core/domain"
)

// Request features an API may not support; agent validation refuses a knob
// whose feature the agent's provider lacks.
const (
	FeatureStoredPrompts    = "stored_prompts"     // session.prompt_id
	FeatureReasoningItemIDs = "reasoning_item_ids" // behavior.reasoning_item_id_policy
	FeatureReasoningSummary = "reasoning_summary"  // model_settings.reasoning_summary
	FeatureVerbosity        = "verbosity"          // model_settings.verbosity
)

// API is one wire protocol a provider type speaks.
type API struct {
	Name        string
	Unsupported []string
}

// TypeInfo is one row of the provider registry.
type TypeInfo struct {
	Type           string
	AuthModes      []string
	APIs           []API
	DefaultBaseURL string
	// defaultAPI picks the protocol for a provider that names none.
	defaultAPI func(baseURL string) string
}

// Registry is every provider type. Adding a backend is one row here (plus
// its adapter).
var Registry = []TypeInfo{
	{
		Type:           "openai",
		AuthModes:      []string{domain.AuthAPIKey, domain.AuthChatGPTLogin},
		APIs:           []API{{Name: "responses"}, {Name: "chat_completions", Unsupported: []string{FeatureStoredPrompts, FeatureReasoningItemIDs, FeatureReasoningSummary}}},
		DefaultBaseURL: "https://api.openai.com/v1",
		// Most self-hosted OpenAI-compatible servers (Ollama, vLLM,
		// llama.cpp, LM Studio) speak only Chat Completions.
		defaultAPI: func(baseURL string) string {
			if baseURL == "" || isOfficialOpenAI(baseURL) {
				return "responses"
			}
			return "chat_completions"
		},
	},
	{
		Type:           "anthropic",
		AuthModes:      []string{domain.AuthAPIKey},
		APIs:           []API{{Name: "messages", Unsupported: []string{FeatureStoredPrompts, FeatureReasoningItemIDs, FeatureReasoningSummary, FeatureVerbosity}}},
		DefaultBaseURL: "https://api.anthropic.com",
		defaultAPI:     func(string) string { return "messages" },
	},
}

// NativeAPI is the one API of a native provider type: the embedding
// program's model is called in-process, through the model port.
const NativeAPI = "native"

// NativeType is the registry row of a provider type the embedding program
// serves in Go (see Deps.NativeTypes). Its providers take an
// optional key and base URL, handed to the program's model as they are,
// and none of the vendor-specific request features.
func NativeType(name string) TypeInfo {
	return TypeInfo{
		Type:       name,
		AuthModes:  []string{domain.AuthAPIKey},
		APIs:       []API{{Name: NativeAPI, Unsupported: []string{FeatureStoredPrompts, FeatureReasoningItemIDs, FeatureReasoningSummary, FeatureVerbosity}}},
		defaultAPI: func(string) string { return NativeAPI },
	}
}

// DefaultType is the type of a provider that names none.
const DefaultType = "openai"

func isOfficialOpenAI(baseURL string) bool {
	u, err := url.Parse(baseURL)
	return err == nil && strings.EqualFold(u.Hostname(), "api.openai.com")
}

// Types is a table of provider types.
type Types []TypeInfo

// Lookup returns the table's row of type t.
func (ts Types) Lookup(t string) (TypeInfo, bool) {
	i := slices.IndexFunc(ts, func(ti TypeInfo) bool { return ti.Type == t })
	if i < 0 {
		return TypeInfo{}, false
	}
	return ts[i], true
}

// LookupType returns the registry row of a type.
func LookupType(t string) (TypeInfo, bool) { return Types(Registry).Lookup(t) }

// API returns the type's API of that name.
func (t TypeInfo) API(name string) (API, bool) {
	i := slices.IndexFunc(t.APIs, func(a API) bool { return a.Name == name })
	if i < 0 {
		return API{}, false
	}
	return t.APIs[i], true
}

// Supports reports whether a provider of this type, on api, accepts feature.
func (t TypeInfo) Supports(api, feature string) bool {
	a, ok := t.API(api)
	return ok && !slices.Contains(a.Unsupported, feature)
}

// APINames lists the type's API names.
func (t TypeInfo) APINames() []string {
	out := make([]string, len(t.APIs))
	for i, a := range t.APIs {
		out[i] = a.Name
	}
	return out
}
