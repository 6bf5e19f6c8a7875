// Package llmtest holds what the model adapters' tests share: a delta
// collector and readers of the Responses items an adapter returns.
package llmtest

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/ports"
)

// User is a user message item.
func User(text string) json.RawMessage { return domain.TextMessage("user", "input_text", text) }

// Collector records the deltas a Generate call streams.
type Collector struct{ Deltas []ports.ModelDelta }

// Sink is the callback to hand to Generate.
func (c *Collector) Sink(d ports.ModelDelta) { c.Deltas = append(c.Deltas, d) }

// Joined concatenates the deltas of one kind and counts them.
func (c *Collector) Joined(kind ports.DeltaKind) (string, int) {
	var b strings.Builder
	n := 0
	for _, d := range c.Deltas {
		if d.Kind == kind {
			b.WriteString(d.Text)
			n++
		}
	}
	return b.String(), n
}

// Decode parses an output item.
func Decode(t *testing.T, raw json.RawMessage) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("output item %s: %v", raw, err)
	}
	return m
}

// MessageText is the first text of an assistant message item.
func MessageText(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	m := Decode(t, raw)
	if m["type"] != "message" || m["role"] != "assistant" {
		t.Fatalf("not an assistant message: %s", raw)
	}
	return m["content"].([]any)[0].(map[string]any)["text"].(string)
}

// ModelError asserts err is a *ports.ModelError of kind and status from
// provider, with a message.
func ModelError(t *testing.T, provider string, err error, kind ports.ModelErrorKind, status int) *ports.ModelError {
	t.Helper()
	var me *ports.ModelError
	if !errors.As(err, &me) {
		t.Fatalf("error %T %v is not a *ports.ModelError", err, err)
	}
	if me.Kind != kind || me.Status != status || me.Provider != provider || me.Message == "" {
		t.Fatalf("model error = %+v, want kind %s status %d from %s", me, kind, status, provider)
	}
	return me
}

// Cancelled fails t unless err is the caller's own cancellation, never
// dressed up as a *ports.ModelError.
func Cancelled(t *testing.T, err error) {
	t.Helper()
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	var me *ports.ModelError
	if errors.As(err, &me) {
		t.Fatalf("a cancelled call became a ModelError: %v", err)
	}
}
