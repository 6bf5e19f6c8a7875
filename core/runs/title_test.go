package runs_test

import (
	"context"
	"slices"
	"testing"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/models"
	"github.com/agents-server/agents-server/core/runs"
	"github.com/agents-server/agents-server/ports"
	"github.com/agents-server/agents-server/ports/porttest"
)

// titlePayload is session.title_updated's payload.
type titlePayload struct {
	SessionID string `json:"session_id"`
	RunID     string `json:"run_id"`
	Title     string `json:"title"`
}

func TestTitles(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name     string
		session  string // the session's name at the start
		title    porttest.Reply
		rename   string // a name the person gives while the title call is open
		want     string // the session's name afterwards
		titled   bool   // session.title_updated went out
		titleCal bool   // a title call was made
	}{
		{name: "an untitled session is named from its first message", title: porttest.Reply{Text: `"Planning a trip."`},
			want: "Planning a trip", titled: true, titleCal: true},
		{name: "a failed title leaves it untitled", title: porttest.Fail(ports.ModelUnavailable, "down"), titleCal: true},
		{name: "an empty title is none", title: porttest.Reply{Text: "  "}, titleCal: true},
		{name: "a name given meanwhile wins", title: porttest.Reply{Text: "Machine name"}, rename: "Mine", want: "Mine", titleCal: true},
		{name: "an echo of the message is not taken as its title", title: porttest.Reply{Text: "You said: " + models.TitlePrefix + "plan a trip"},
			want: "plan a trip", titled: true, titleCal: true},
		{name: "a named session is left alone", session: "Named", title: porttest.Reply{Text: "never"}, want: "Named"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			ctx := t.Context()
			a := h.agent(domain.AgentSpec{Model: "chat"})
			s, err := h.sessions.Create(ctx, h.user, c.session, a.ID)
			if err != nil {
				t.Fatal(err)
			}
			hold := make(chan struct{})
			c.title.Hold = hold
			h.llm.Route(isTitle, c.title)
			h.llm.Queue(porttest.Reply{Text: "sure"})
			run, err := h.svc.Start(ctx, h.user, s.ID, runs.StartRequest{Input: "plan a trip"})
			if err != nil {
				t.Fatal(err)
			}
			if c.titleCal {
				wctx, cancel := context.WithTimeout(ctx, wait)
				defer cancel()
				reqs, err := h.llm.Await(wctx, 1, isTitle)
				if err != nil {
					t.Fatal(err)
				}
				r := reqs[0]
				if r.Model != "chat" || r.Endpoint.Name != "fake" || porttest.InputText(r) != models.TitlePrefix+"plan a trip\n" ||
					*r.Settings.MaxOutputTokens != 40 || len(r.Tools) != 0 {
					t.Fatalf("title request = %+v", r)
				}
			}
			if c.rename != "" {
				if _, err := h.sessions.Patch(ctx, h.user, s.ID, ptr(c.rename), nil); err != nil {
					t.Fatal(err)
				}
			}
			close(hold)
			events := h.events(run.ID, 0)
			// The title and the answer race; the run's end waits for the title.
			want := []string{"run.started run.agent_start run.message run.output"}
			if c.titled {
				want = []string{"run.started run.agent_start run.message session.title_updated run.output",
					"run.started run.agent_start session.title_updated run.message run.output"}
			}
			if got := story(events); !slices.Contains(want, got) {
				t.Fatalf("story = %s, want one of %q", got, want)
			}
			if c.titled {
				p := payload[titlePayload](t, ofType(events, domain.EventTitleUpdated)[0])
				if p.Title != c.want || p.SessionID != s.ID || p.RunID != run.ID {
					t.Fatalf("title event = %+v", p)
				}
			}
			got, err := h.sessions.Get(ctx, h.user, s.ID)
			if err != nil || got.Name != c.want {
				t.Fatalf("session name = %q, want %q (%v)", got.Name, c.want, err)
			}
			if n := len(h.llm.Requests()) - len(conversation(h.llm.Requests())); (n == 1) != c.titleCal || n > 1 {
				t.Fatalf("%d title calls", n)
			}
			spans := h.spans(run.ID, domain.SpanTitle)
			if c.titleCal && (len(spans) != 1 || (spans[0].Error != "") != (c.want == "")) || !c.titleCal && len(spans) != 0 {
				t.Fatalf("title spans = %+v", spans)
			}
		})
	}
}

// The title model setting names conversations with another model on the
// agent's provider.
func TestTitleModelSetting(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := t.Context()
	if _, err := h.settings.Put(ctx, h.admin, "title_model", " tiny-namer "); err != nil {
		t.Fatal(err)
	}
	a := h.agent(domain.AgentSpec{Model: "chat"})
	s, err := h.sessions.Create(ctx, h.user, "", a.ID)
	if err != nil {
		t.Fatal(err)
	}
	h.llm.Route(isTitle, porttest.Reply{Text: "Trip planning"})
	h.llm.Queue(porttest.Reply{Text: "sure"})
	run, err := h.svc.Start(ctx, h.user, s.ID, runs.StartRequest{Input: "plan a trip"})
	if err != nil {
		t.Fatal(err)
	}
	h.events(run.ID, 0)
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	reqs, err := h.llm.Await(wctx, 1, isTitle)
	if err != nil {
		t.Fatal(err)
	}
	if reqs[0].Model != "tiny-namer" || reqs[0].Endpoint.Name != "fake" {
		t.Fatalf("title request went to %s on %s", reqs[0].Model, reqs[0].Endpoint.Name)
	}
	if conv := conversation(h.llm.Requests()); len(conv) != 1 || conv[0].Model != "chat" {
		t.Fatalf("the conversation's own call = %+v", conv)
	}
	if got, _ := h.sessions.Get(ctx, h.user, s.ID); got.Name != "Trip planning" {
		t.Fatalf("name = %q", got.Name)
	}
}
