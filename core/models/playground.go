package models

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// PlaygroundRequest replays a stored generation span, optionally edited.
type PlaygroundRequest struct {
	SpanID       string
	Model        *string
	Instructions *string
	Input        []json.RawMessage
	Tools        []ports.ToolDef
	Settings     *domain.ModelSettings
}

// generationData is the request part of a generation span's payload.
type generationData struct {
	Model              string               `json:"model"`
	SystemInstructions string               `json:"system_instructions"`
	Input              []json.RawMessage    `json:"input"`
	Tools              []ports.ToolDef      `json:"tools"`
	ModelSettings      domain.ModelSettings `json:"model_settings"`
	OutputSchema       json.RawMessage      `json:"output_schema"`
	Truncated          bool                 `json:"truncated"`
}

// Playground sends a stored model call again — as it was, or with the
// caller's edits — to the provider that answered it, and returns the
// answer. Returns not_found (a span of someone else's session), validation
// (not a generation, its request was not stored whole, or edits an agent
// could not hold: a tool without a valid name, model settings out of
// range), or the model's failure.
func (s *Service) Playground(ctx context.Context, p domain.Principal, req PlaygroundRequest) (ports.ModelResponse, error) {
	// Edits would otherwise reach the provider and come back as its 400
	// (or not at all): refuse them here by the agents' rules, naming the
	// field.
	var f errs.FieldErrors
	for i, t := range req.Tools {
		if !domain.ValidToolName(t.Name) {
			f.Add(fmt.Sprintf("tools[%d].name", i), "must be a tool name: 1 to 64 letters, digits, _ or -")
		}
	}
	if req.Settings != nil {
		if err := f.Merge("", req.Settings.Validate()); err != nil {
			return ports.ModelResponse{}, err
		}
	}
	if err := f.Err(); err != nil {
		return ports.ModelResponse{}, err
	}
	span, err := s.d.Traces.FindSpanByID(ctx, req.SpanID)
	if errs.Is(err, errs.NotFound) {
		return ports.ModelResponse{}, errs.Field("span_id", "no such span")
	}
	if err != nil {
		return ports.ModelResponse{}, err
	}
	sess, err := s.d.Sessions.Get(ctx, p, span.SessionID)
	if err != nil {
		return ports.ModelResponse{}, errs.Field("span_id", "no such span")
	}
	if span.Kind != domain.SpanGeneration {
		return ports.ModelResponse{}, errs.Field("span_id", "is a %s span; only a generation can be replayed", span.Kind)
	}
	var data generationData
	if len(span.Data) == 0 || json.Unmarshal(span.Data, &data) != nil || data.Truncated {
		return ports.ModelResponse{}, errs.Field("span_id", "the span's request was not stored whole (truncated, or recorded without sensitive data)")
	}
	if data.Input == nil && req.Input == nil {
		return ports.ModelResponse{}, errs.Field("input", "the span holds no input (trace_include_sensitive_data was off): send one")
	}
	providerID, _ := span.Meta["provider_id"].(string)
	ep, err := s.Endpoint(ctx, providerID, "playground")
	if err != nil {
		var ce *ConfigError
		if errors.As(err, &ce) {
			return ports.ModelResponse{}, errs.Field("span_id", "%s", ce.Msg)
		}
		return ports.ModelResponse{}, err
	}
	call := ports.ModelRequest{Endpoint: ep, Model: data.Model, Instructions: data.SystemInstructions, Input: data.Input,
		Tools: data.Tools, Settings: data.ModelSettings, ToolChoice: data.ModelSettings.ToolChoice, OutputSchema: data.OutputSchema}
	if req.Model != nil {
		call.Model = *req.Model
	}
	if req.Instructions != nil {
		call.Instructions = *req.Instructions
	}
	if req.Input != nil {
		call.Input = req.Input
	}
	if req.Tools != nil {
		call.Tools = req.Tools
	}
	if req.Settings != nil {
		call.Settings, call.ToolChoice = *req.Settings, req.Settings.ToolChoice
	}
	charged := ports.WithUsageCall(ctx, ports.UsageCall{Kind: domain.UsagePlayground, UserID: p.User.ID, AgentID: sess.AgentConfigID, SessionID: span.SessionID})
	resp, err := s.d.LLM.Generate(charged, call, nil)
	var me *ports.ModelError
	if errors.As(err, &me) {
		return resp, me.Coded()
	}
	return resp, err
}
