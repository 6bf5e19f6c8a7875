package models

import (
	"context"
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/settings"
	"github.com/agents-server/agents-server/ports"
)

// maxTitle bounds a generated title.
const maxTitle = 60

const titleInstructions = "You name conversations. The user's message below opens a conversation; do not answer it " +
	"and do not repeat it. Reply with only a short title for it, three to six words in the message's language, " +
	"naming its topic: no quotes, no trailing punctuation, no preamble."

// TitlePrefix starts the title call's input, so a scripted model can tell
// it apart from the conversation.
const TitlePrefix = "Title this conversation: "

// TitleModel is the model that names sessions: the title_model setting,
// or else the agent's own model.
func (s *Service) TitleModel(ctx context.Context, agentModel string) string {
	if m, err := s.d.Settings.String(ctx, settings.KeyTitleModel); err == nil && strings.TrimSpace(m) != "" {
		return strings.TrimSpace(m)
	}
	return agentModel
}

// Title asks model at ep to name the conversation sessionID from its
// first message (input) and names it so, unless a person named it
// meanwhile (named false: their name wins). It returns the title — also
// when the call failed or named nothing, for the trace, with the error.
func (s *Service) Title(ctx context.Context, ep ports.ProviderEndpoint, model, input, sessionID string) (title string, named bool, err error) {
	maxTokens := 40
	resp, err := s.d.LLM.Generate(ctx, ports.ModelRequest{
		Endpoint: ep, Model: model, Instructions: titleInstructions,
		Input:    []json.RawMessage{domain.TextMessage("user", "input_text", TitlePrefix+input)},
		Settings: domain.ModelSettings{MaxOutputTokens: &maxTokens}, ConversationID: sessionID,
	}, nil)
	title = titleFrom(FinalText(resp.Output), input)
	if err == nil && title == "" {
		err = errEmptyTitle
	}
	if err != nil {
		return title, false, err
	}
	named, err = s.d.Sessions.SetTitle(ctx, sessionID, title)
	return title, named, err
}

type titleError string

func (e titleError) Error() string { return string(e) }

const errEmptyTitle = titleError("the model returned no title")

// titleFrom is the model's title, unless the model echoed the message (or
// the request) back instead of naming it: then the message's first words.
func titleFrom(answer, input string) string {
	title := cleanTitle(answer)
	if title == "" {
		return ""
	}
	said, asked := fold(title), fold(input)
	if strings.Contains(said, fold(TitlePrefix)) || (len(asked) > len(said)/2 && strings.Contains(said, asked)) ||
		(utf8.RuneCountInString(said) >= maxTitle-1 && strings.HasPrefix(asked, strings.TrimSuffix(said, "…"))) {
		return headline(input)
	}
	return title
}

// fold lowers s and collapses its spaces, for comparing texts.
func fold(s string) string { return strings.Join(strings.Fields(strings.ToLower(s)), " ") }

// headline is a message's first words as a title: at most six, within
// maxTitle.
func headline(input string) string {
	words := strings.Fields(input)
	cut := len(words) > 6
	if cut {
		words = words[:6]
	}
	t := cleanTitle(strings.Join(words, " "))
	if cut && !strings.HasSuffix(t, "…") {
		t += "…"
	}
	return t
}

// cleanTitle keeps the first line, without quotes or a trailing period,
// within maxTitle characters.
func cleanTitle(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	s = strings.Trim(strings.TrimSpace(s), `"'“”‘’*#`)
	s = strings.TrimRight(s, ".!?:;")
	if utf8.RuneCountInString(s) > maxTitle {
		s = string([]rune(s)[:maxTitle-1]) + "…"
	}
	return strings.TrimSpace(s)
}

// FinalText is the text of a model answer's last assistant message.
func FinalText(output []json.RawMessage) string {
	for i := len(output) - 1; i >= 0; i-- {
		if it := domain.ParseItem(output[i]); it.Kind() == domain.ItemMessage {
			return it.Text()
		}
	}
	return ""
}
