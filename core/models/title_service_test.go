package models_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/models"
	"github.com/agents-server/agents-server/core/settings"
	"github.com/agents-server/agents-server/ports"
	"github.com/agents-server/agents-server/ports/porttest"
)

func TestTitleModelIsTheSettingElseTheAgentsModel(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := t.Context()
	if got := f.svc.TitleModel(ctx, "agent-model"); got != "agent-model" {
		t.Fatalf("without the setting: %q", got)
	}
	if _, err := f.settings.Put(ctx, f.admin, settings.KeyTitleModel, "  small  "); err != nil {
		t.Fatal(err)
	}
	if got := f.svc.TitleModel(ctx, "agent-model"); got != "small" {
		t.Fatalf("with the setting: %q", got)
	}
}

func TestTitleNamesAConversationFromItsFirstMessage(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := t.Context()
	ep := f.endpoint(t)
	const msg = "how do I parse a TOML file in Go without any dependency at all"
	for _, c := range []struct {
		name, want, fails string
		reply             porttest.Reply
	}{
		{name: "a title, cleaned", reply: porttest.Reply{Text: "\"Parsing TOML in Go.\"\nsecond line"}, want: "Parsing TOML in Go"},
		{name: "an echo of the request", reply: porttest.Reply{Text: models.TitlePrefix + msg}, want: "how do I parse a TOML…"},
		{name: "nothing named", reply: porttest.Reply{Text: "\"...\""}, fails: "the model returned no title"},
		{name: "no message at all", reply: porttest.Reply{Reasoning: "thinking"}, fails: "the model returned no title"},
		{name: "the call fails", reply: porttest.Fail(ports.ModelUnavailable, "down"), fails: "down"},
	} {
		f.llm.Queue(c.reply)
		sess, _ := f.sessions.Create(ctx, f.user, "", "")
		got, named, err := f.svc.Title(ctx, ep, "small", msg, sess.ID)
		if got != c.want || (c.fails == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.fails)) || named != (err == nil) {
			t.Errorf("%s: %q named %v, %v; want %q failing with %q", c.name, got, named, err, c.want, c.fails)
		}
		if stored, _ := f.sessions.Find(ctx, sess.ID); named && stored.Name != c.want {
			t.Errorf("%s: the session is named %q", c.name, stored.Name)
		}
		reqs := f.llm.Requests()
		r := reqs[len(reqs)-1]
		if r.Model != "small" || r.ConversationID != sess.ID || porttest.InputText(r) != models.TitlePrefix+msg+"\n" ||
			r.Settings.MaxOutputTokens == nil || *r.Settings.MaxOutputTokens != 40 || !strings.HasPrefix(r.Instructions, "You name conversations") {
			t.Errorf("%s: the title call = %+v", c.name, r)
		}
	}
}

func TestFinalTextIsTheLastAssistantMessage(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		output []json.RawMessage
		want   string
	}{
		{name: "none", want: ""},
		{name: "one", output: []json.RawMessage{domain.AssistantMessage("m1", "hello")}, want: "hello"},
		{name: "the last of two, past a call", output: []json.RawMessage{domain.AssistantMessage("m1", "first"),
			domain.AssistantMessage("m2", "second"), domain.FunctionCall("fc", "c1", "t", "{}")}, want: "second"},
		{name: "only reasoning and calls", output: []json.RawMessage{domain.Reasoning("rs", "think", "", ""),
			domain.FunctionCall("fc", "c1", "t", "{}")}, want: ""},
	} {
		if got := models.FinalText(c.output); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// TestATitleNeverRenamesWhatAPersonNamed: a session named meanwhile keeps
// its name; the title is returned, not stored.
func TestATitleNeverRenamesWhatAPersonNamed(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := t.Context()
	sess, _ := f.sessions.Create(ctx, f.user, "", "")
	if ok, err := f.sessions.SetTitle(ctx, sess.ID, "Mine"); !ok || err != nil {
		t.Fatalf("naming it: %v %v", ok, err)
	}
	f.llm.Queue(porttest.Reply{Text: "A model's title"})
	title, named, err := f.svc.Title(ctx, f.endpoint(t), "small", "hello there", sess.ID)
	if err != nil || named || title != "A model's title" {
		t.Fatalf("title %q named %v, %v", title, named, err)
	}
	if stored, _ := f.sessions.Find(ctx, sess.ID); stored.Name != "Mine" {
		t.Fatalf("the session is named %q", stored.Name)
	}
}
