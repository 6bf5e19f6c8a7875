package runs

import (
	"context"
	"encoding/json"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/settings"
	"github.com/agents-server/agents-server/ports"
)

// titleBudget bounds the title call; a slow title never delays a run's end
// by more than this.
const titleBudget = 15 * time.Second

// maxTitle bounds a generated title.
const maxTitle = 60

const titleInstructions = "You name conversations. The user's message below opens a conversation; do not answer it " +
	"and do not repeat it. Reply with only a short title for it, three to six words in the message's language, " +
	"naming its topic: no quotes, no trailing punctuation, no preamble."

// TitlePrefix starts the title call's input, so a scripted model can tell
// it apart from the conversation.
const TitlePrefix = "Title this conversation: "

// titleSession names an untitled session from its first message, with the
// agent's own provider, in parallel with the run; the run waits for it
// (within titleBudget) before its final event, so session.title_updated
// reaches its watchers.
func (s *Service) titleSession(rc *runCtx) <-chan struct{} {
	done := make(chan struct{})
	// Read the agent now: a handoff replaces rc.agent while this runs.
	endpoint, model := rc.agent.endpoint, rc.agent.agent.Model
	if m, err := s.d.Settings.String(rc.lr.ctx, settings.KeyTitleModel); err == nil && strings.TrimSpace(m) != "" {
		model = strings.TrimSpace(m)
	}
	// A cancelled run does not wait for its title, so the call is counted
	// with the runs: Shutdown waits for it, and a forced stop ends it,
	// before the store it writes to closes.
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer close(done)
		// A cancelled run still gets its title; a run stopped because its
		// session or owner is going away does not (liveRun.stop).
		ctx, cancel := context.WithTimeout(rc.lr.gone, titleBudget)
		defer cancel()
		defer context.AfterFunc(s.root, cancel)()
		sp := rc.tr.span(domain.SpanTitle, "title", "").meta("model", model)
		resp, err := s.d.LLM.Generate(ctx, ports.ModelRequest{
			Endpoint: endpoint, Model: model, Instructions: titleInstructions,
			Input:    []json.RawMessage{domain.TextMessage("user", "input_text", TitlePrefix+rc.lr.run.Input)},
			Settings: domain.ModelSettings{MaxOutputTokens: ptr(40)}, ConversationID: rc.lr.run.SessionID,
		}, nil)
		title := titleFrom(finalText(resp.Output), rc.lr.run.Input)
		if err == nil && title == "" {
			err = errEmptyTitle
		}
		sp.set("title", title, true)
		sp.finish(err)
		if err != nil {
			s.d.Log.Debug("titling a session failed", "session_id", rc.lr.run.SessionID, "err", err)
			return
		}
		ok, err := s.d.Sessions.SetTitle(ctx, rc.lr.run.SessionID, title)
		if err != nil || !ok {
			return // renamed meanwhile: the person's name wins
		}
		s.publish(rc.lr, domain.EventTitleUpdated, domain.TitleUpdatedPayload{SessionID: rc.lr.run.SessionID, RunID: rc.lr.run.ID, Title: title})
	}()
	return done
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

// ptr is a pointer to a copy of v.
func ptr[T any](v T) *T { return &v }
