// Package llmtest holds what the model adapters' tests share: Contract, the
// model port's promises as one suite every ports.LLM adapter runs against
// the scripted model server over real HTTP, and the small helpers it and
// the adapters' own tests use (a delta collector, readers of the items an
// adapter returns).
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

// MessageText is the text of an assistant message item, failing t when the
// item is something else.
func MessageText(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	it := domain.ParseItem(raw)
	if it.Kind() != "message" || it.Role != "assistant" {
		t.Fatalf("not an assistant message: %s", raw)
	}
	return it.Text()
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
