package workbench

import (
	"context"

	"github.com/agents-server/agents-server/adapters/llm/anthropic"
	"github.com/agents-server/agents-server/adapters/llm/openai"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/ports"
)

// Model is a provider type the program serves in Go: an in-house gateway,
// a local model runtime, a test double. Providers of type Name can then be
// added like any other (a key and a base URL are optional and handed to
// LLM as they are), and every model call of an agent on one goes to LLM.
type Model struct {
	// Name is the provider type, e.g. "gateway"; it must not be a built-in
	// type (openai, anthropic).
	Name string
	// LLM answers the calls: Generate streams one model call, Models lists
	// the models a provider offers. Errors should be *ports.ModelError, so
	// runs report and retry them as they do a vendor's.
	LLM ports.LLM
}

// modelRouter sends each call to the adapter of its provider's type: the
// built-in types, each backed by its vendor's official SDK, then the
// program's own; a provider signed in with ChatGPT goes through the Codex
// bridge.
type modelRouter struct {
	byType map[string]ports.LLM
	codex  ports.LLM
}

func newModelRouter(codex ports.LLM, own []Model) modelRouter {
	m := modelRouter{codex: codex, byType: map[string]ports.LLM{
		"openai":    openai.New(openai.Options{}),
		"anthropic": anthropic.New(anthropic.Options{}),
	}}
	for _, o := range own {
		m.byType[o.Name] = o.LLM
	}
	return m
}

func (m modelRouter) adapter(ep ports.ProviderEndpoint) (ports.LLM, bool) {
	if ep.AuthMode == domain.AuthChatGPTLogin {
		return m.codex, m.codex != nil
	}
	llm, ok := m.byType[ep.Type]
	return llm, ok
}

// Generate implements ports.LLM.
func (m modelRouter) Generate(ctx context.Context, req ports.ModelRequest, sink func(ports.ModelDelta)) (ports.ModelResponse, error) {
	llm, ok := m.adapter(req.Endpoint)
	if !ok {
		return ports.ModelResponse{}, &ports.ModelError{Kind: ports.ModelInvalid, Provider: req.Endpoint.Name,
			Message: "no model adapter for provider type " + req.Endpoint.Type}
	}
	return llm.Generate(ctx, req, sink)
}

// Models implements ports.LLM.
func (m modelRouter) Models(ctx context.Context, ep ports.ProviderEndpoint) ([]ports.ModelInfo, error) {
	llm, ok := m.adapter(ep)
	if !ok {
		return nil, &ports.ModelError{Kind: ports.ModelInvalid, Provider: ep.Name, Message: "no model adapter for provider type " + ep.Type}
	}
	return llm.Models(ctx, ep)
}
