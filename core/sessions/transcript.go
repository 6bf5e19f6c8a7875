package sessions

import (
	"context"

	"github.com/agents-server/agents-server/core/domain"
)

// Line is one turn of a transcript: who spoke (user, assistant, tool) and
// what, as text.
type Line struct {
	Role string
	Text string
}

// Transcript is the active branch of a session as plain text lines — the
// messages, the tool calls and their outputs — newest last, at most limit
// entries (the newest ones). Returns not_found.
func (s *Journal) Transcript(ctx context.Context, p domain.Principal, id string, limit int) ([]Line, error) {
	listed, err := s.Messages(ctx, p, id, Page{Limit: limit})
	if err != nil {
		return nil, err
	}
	out := []Line{}
	for _, l := range listed {
		if !l.OnPath {
			continue
		}
		e, err := l.Decode()
		if err != nil || e.Kind != domain.KindItem {
			continue
		}
		it := domain.ParseItem(e.Item)
		switch it.Kind() {
		case domain.ItemMessage:
			if text := it.Text(); text != "" {
				out = append(out, Line{Role: it.Role, Text: text})
			}
		case domain.ItemFunctionCall:
			out = append(out, Line{Role: "tool", Text: "called " + it.Name + " " + it.Arguments})
		case domain.ItemFunctionCallOutput:
			out = append(out, Line{Role: "tool", Text: it.OutputText()})
		}
	}
	return out, nil
}
