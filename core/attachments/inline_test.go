package attachments

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// countedURLs serves one image and counts the reads.
type countedURLs struct{ reads int }

func (c *countedURLs) DataURL(_ context.Context, id string) (string, error) {
	c.reads++
	if id != "att_1" {
		return "", errs.E(errs.NotFound, "attachment not found")
	}
	return "data:image/png;base64,AAAA", nil
}

func TestARunInlinesEachImageOnceAndSaysSoOfAMissingOne(t *testing.T) {
	img := domain.Attachment{ID: "att_1", Mime: "image/png", Name: "chart.png"}
	gone := domain.Attachment{ID: "att_2", Mime: "image/png", Name: "old.png"}
	text := domain.UserMessage("no pictures", nil)
	input := []json.RawMessage{text, domain.UserMessage("look", []domain.Attachment{img}), domain.UserMessage("again", []domain.Attachment{img, gone})}
	src := &countedURLs{}
	in := NewInliner(src, slog.New(slog.NewTextHandler(io.Discard, nil)))
	out := in.Inline(context.Background(), input)
	if string(out[0]) != string(text) || strings.Contains(string(input[1]), "data:") {
		t.Fatalf("inlining changed what it should not: %s / %s", out[0], input[1])
	}
	if !strings.Contains(string(out[1]), "data:image/png;base64,AAAA") || !strings.Contains(string(out[2]), "old.png) is no longer available") {
		t.Fatalf("inlined = %s", out)
	}
	if src.reads != 2 {
		t.Fatalf("%d reads, want one per image", src.reads)
	}
	if plain := []json.RawMessage{text}; &in.Inline(context.Background(), plain)[0] != &plain[0] {
		t.Fatal("an input without images was copied")
	}
	refused := &ports.ModelError{Kind: ports.ModelInvalid, Message: "bad request"}
	var said *ports.ModelError
	if err := Refusal(refused, input); !errors.As(err, &said) || !strings.Contains(said.Message, "carrying images") {
		t.Fatalf("Refusal = %v", err)
	}
	if err := Refusal(refused, []json.RawMessage{text}); err != error(refused) {
		t.Fatalf("a refusal without images was reworded: %v", err)
	}
}
