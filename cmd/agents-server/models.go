package main

import (
	"context"

	"github.com/agents-server/agents-server/adapters/llm/anthropic"
	"github.com/agents-server/agents-server/adapters/llm/openai"
	"github.com/agents-server/agents-server/ports"
)

// modelRouter sends each call to the adapter of its provider's type: the
// provider registry's types, each backed by its vendor's official SDK.
type modelRouter map[string]ports.LLM

func newModelRouter() modelRouter {
	return modelRouter{
		"openai":    openai.New(openai.Options{}),
		"anthropic": anthropic.New(anthropic.Options{}),
	}
}

// Generate implements ports.LLM.
func (m modelRouter) Generate(ctx context.Context, req ports.ModelRequest, sink func(ports.ModelDelta)) (ports.ModelResponse, error) {
	llm, ok := m[req.Endpoint.Type]
	if !ok {
		return ports.ModelResponse{}, &ports.ModelError{Kind: ports.ModelInvalid, Provider: req.Endpoint.Name,
			Message: "no model adapter for provider type " + req.Endpoint.Type}
	}
	return llm.Generate(ctx, req, sink)
}

// Models implements ports.LLM.
func (m modelRouter) Models(ctx context.Context, ep ports.ProviderEndpoint) ([]ports.ModelInfo, error) {
	llm, ok := m[ep.Type]
	if !ok {
		return nil, &ports.ModelError{Kind: ports.ModelInvalid, Provider: ep.Name, Message: "no model adapter for provider type " + ep.Type}
	}
	return llm.Models(ctx, ep)
}
