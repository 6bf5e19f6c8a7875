package main

import (
	"context"

	"github.com/agents-server/agents-server/adapters/llm/anthropic"
	"github.com/agents-server/agents-server/adapters/llm/openai"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/ports"
)

// modelRouter sends each call to the adapter of its provider's type: the
// provider registry's types, each backed by its vendor's official SDK; a
// provider signed in with ChatGPT goes through the Codex bridge.
type modelRouter struct {
	byType map[string]ports.LLM
	codex  ports.LLM
}

func newModelRouter(codex ports.LLM) modelRouter {
	return modelRouter{codex: codex, byType: map[string]ports.LLM{
		"openai":    openai.New(openai.Options{}),
		"anthropic": anthropic.New(anthropic.Options{}),
	}}
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
