package workbench

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/agents-server/agents-server/core/tools"
)

// Tool is a Go function offered to agents as a tool. Make one with NewTool
// and list it in Options.Tools; an agent is given it by naming it in its
// tools list. A call of it passes the same approval gate (the agent's
// approve_tools), guardrails and traces as any tool.
type Tool struct {
	native tools.Native
}

// Name is the tool's name, as agents select it and models call it.
func (t Tool) Name() string { return t.native.Spec.Name }

// Schema is the JSON Schema of the tool's arguments, derived from its
// argument struct.
func (t Tool) Schema() json.RawMessage { return t.native.Spec.Parameters }

// Call says where a call of a Go tool comes from.
type Call struct {
	CallID    string // the model's id for this call
	RunID     string
	SessionID string
	AgentID   string
	UserID    string // whose run it is
}

// NewTool makes a tool of fn, which takes arguments of type Args (a
// struct). The arguments' JSON Schema is derived from Args: json tags name
// the properties, a field without omitempty is required, and a
// `jsonschema:"…"` tag describes a field to the model. A call's arguments
// are checked against the schema before fn runs; an error fn returns is
// shown to the model as the call's failure, so it can correct itself.
func NewTool[Args any](name, description string, fn func(ctx context.Context, call Call, args Args) (string, error)) (Tool, error) {
	schema, err := jsonschema.For[Args](nil)
	if err != nil {
		return Tool{}, fmt.Errorf("tool %s: derive the arguments' schema: %w", name, err)
	}
	if schema.Type != "object" {
		return Tool{}, fmt.Errorf("tool %s: the arguments must be a struct, not %s", name, schema.Type)
	}
	resolved, err := schema.Resolve(nil)
	if err != nil {
		return Tool{}, fmt.Errorf("tool %s: resolve the arguments' schema: %w", name, err)
	}
	params, err := json.Marshal(schema)
	if err != nil {
		return Tool{}, fmt.Errorf("tool %s: encode the arguments' schema: %w", name, err)
	}
	run := func(ctx context.Context, c tools.Call) (string, error) {
		text := strings.TrimSpace(c.Arguments)
		if text == "" {
			text = "{}"
		}
		var instance any
		if err := json.Unmarshal([]byte(text), &instance); err != nil {
			return "", fmt.Errorf("the arguments are not JSON: %v", err)
		}
		if err := resolved.Validate(instance); err != nil {
			return "", fmt.Errorf("the arguments do not match the tool's schema: %v", err)
		}
		var args Args
		if err := json.Unmarshal([]byte(text), &args); err != nil {
			return "", fmt.Errorf("the arguments do not fit: %v", err)
		}
		return fn(ctx, Call{CallID: c.CallID, RunID: c.RunID, SessionID: c.SessionID, AgentID: c.AgentID, UserID: c.UserID}, args)
	}
	return Tool{native: tools.Native{Spec: tools.Spec{Name: name, Description: description, Parameters: params}, Run: run}}, nil
}

// MustTool is NewTool for tools declared at package level: it panics where
// NewTool returns an error (an Args type no schema describes).
func MustTool[Args any](name, description string, fn func(ctx context.Context, call Call, args Args) (string, error)) Tool {
	t, err := NewTool(name, description, fn)
	if err != nil {
		panic(err)
	}
	return t
}
