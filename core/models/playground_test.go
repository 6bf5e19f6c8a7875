package models_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/models"
	"github.com/agents-server/agents-server/ports"
	"github.com/agents-server/agents-server/ports/porttest"
)

// span stores a span of kind in sessionID, recorded as answered by
// providerID with data as its payload, and returns its id.
func (f *fixture) span(t *testing.T, sessionID, kind, providerID, data string) string {
	t.Helper()
	sp := domain.Span{ID: f.ids.NewID(), SessionID: sessionID, RunID: "run-1", Kind: kind, Name: kind,
		StartedAt: f.clock.Now(), EndedAt: f.clock.Now(), Meta: map[string]any{"provider_id": providerID, "model": "m"}}
	if data != "" {
		sp.Data = json.RawMessage(data)
	}
	if err := f.traces.SaveSpan(t.Context(), sp); err != nil {
		t.Fatal(err)
	}
	return sp.ID
}

func TestPlaygroundReplaysAStoredGenerationAsItWasOrEdited(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := t.Context()
	s := f.session(t, "")
	gen := f.span(t, s.ID, domain.SpanGeneration, f.provider.ID, `{"model":"m","system_instructions":"Be kind.",
		"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"hello"}]}],
		"tools":[{"name":"lookup"}],"model_settings":{"temperature":0.3,"tool_choice":"auto"},
		"output_schema":{"type":"object"}}`)
	for _, c := range []struct {
		name  string
		req   models.PlaygroundRequest
		check func(r ports.ModelRequest) bool
	}{
		{name: "as it was", req: models.PlaygroundRequest{SpanID: gen}, check: func(r ports.ModelRequest) bool {
			return r.Model == "m" && r.Instructions == "Be kind." && porttest.InputText(r) == "hello\n" && *r.Settings.Temperature == 0.3 &&
				r.ToolChoice == "auto" && slices.Equal(toolNames(r), []string{"lookup"}) && string(r.OutputSchema) == `{"type":"object"}` &&
				r.Endpoint.APIKey == "sk-p" && r.Endpoint.ProviderID == f.provider.ID
		}},
		{name: "edited", req: models.PlaygroundRequest{SpanID: gen, Model: ptr("other"), Instructions: ptr("Be terse."),
			Input: []json.RawMessage{domain.TextMessage("user", "input_text", "edited")}, Tools: []ports.ToolDef{{Name: "search"}, {Name: "fetch"}},
			Settings: &domain.ModelSettings{ToolChoice: "none"}}, check: func(r ports.ModelRequest) bool {
			return r.Model == "other" && r.Instructions == "Be terse." && porttest.InputText(r) == "edited\n" && r.ToolChoice == "none" &&
				r.Settings.Temperature == nil && slices.Equal(toolNames(r), []string{"search", "fetch"})
		}},
	} {
		f.llm.Queue(porttest.Reply{Text: "again"})
		resp, err := f.svc.Playground(ctx, f.user, c.req)
		if err != nil || models.FinalText(resp.Output) != "again" {
			t.Fatalf("%s: %+v, %v", c.name, resp, err)
		}
		reqs := f.llm.Requests()
		if r := reqs[len(reqs)-1]; !c.check(r) {
			t.Fatalf("%s: replayed %+v", c.name, r)
		}
	}
}

func toolNames(r ports.ModelRequest) []string {
	var out []string
	for _, t := range r.Tools {
		out = append(out, t.Name)
	}
	return out
}

func TestPlaygroundRefusesWhatItCannotReplay(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := t.Context()
	s := f.session(t, "")
	const whole = `{"model":"m","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}]}`
	gen := f.span(t, s.ID, domain.SpanGeneration, f.provider.ID, whole)
	agentSpan := f.span(t, s.ID, domain.SpanAgent, f.provider.ID, `{}`)
	cut := f.span(t, s.ID, domain.SpanGeneration, f.provider.ID, `{"truncated":true,"limit_bytes":1024}`)
	bare := f.span(t, s.ID, domain.SpanGeneration, f.provider.ID, "")
	noInput := f.span(t, s.ID, domain.SpanGeneration, f.provider.ID, `{"model":"m"}`)
	noProvider := f.span(t, s.ID, domain.SpanGeneration, "", whole)
	goneProvider := f.span(t, s.ID, domain.SpanGeneration, "gone", whole)
	input := []json.RawMessage{domain.TextMessage("user", "input_text", "now")}

	for _, c := range []struct {
		name  string
		who   domain.Principal
		req   models.PlaygroundRequest
		reply *porttest.Reply
		code  errs.Code
		says  string // what the error says: the offending field first
	}{
		{name: "a tool without a valid name", who: f.user, req: models.PlaygroundRequest{SpanID: gen, Tools: []ports.ToolDef{{Name: "ok"}, {Name: "bad name"}}},
			code: errs.Validation, says: "tools[1].name: must be a tool name"},
		{name: "settings out of range", who: f.user, req: models.PlaygroundRequest{SpanID: gen, Settings: &domain.ModelSettings{Temperature: ptr(9.0)}},
			code: errs.Validation, says: "model_settings.temperature: must be between"},
		{name: "an unknown span", who: f.user, req: models.PlaygroundRequest{SpanID: "nope"}, code: errs.Validation, says: "span_id: no such span"},
		{name: "another member's span", who: f.other, req: models.PlaygroundRequest{SpanID: gen}, code: errs.Validation, says: "span_id: no such span"},
		{name: "not a generation", who: f.user, req: models.PlaygroundRequest{SpanID: agentSpan}, code: errs.Validation, says: "only a generation can be replayed"},
		{name: "a truncated payload", who: f.user, req: models.PlaygroundRequest{SpanID: cut, Input: input}, code: errs.Validation, says: "span_id: the span's request was not stored whole"},
		{name: "no payload", who: f.user, req: models.PlaygroundRequest{SpanID: bare, Input: input}, code: errs.Validation, says: "span_id: the span's request was not stored whole"},
		{name: "no input stored nor sent", who: f.user, req: models.PlaygroundRequest{SpanID: noInput}, code: errs.Validation, says: "input: the span holds no input"},
		{name: "a span without a provider", who: f.user, req: models.PlaygroundRequest{SpanID: noProvider}, code: errs.Validation, says: "span_id: agent \"playground\" names no provider"},
		{name: "a provider since deleted", who: f.user, req: models.PlaygroundRequest{SpanID: goneProvider}, code: errs.Validation, says: "span_id: agent \"playground\" names a provider that no longer exists"},
		{name: "a provider refusing the credential", who: f.user, req: models.PlaygroundRequest{SpanID: gen},
			reply: ptr(porttest.Fail(ports.ModelAuth, "bad key")), code: errs.Validation, says: "provider p: auth (HTTP 401): bad key"},
		{name: "a provider down", who: f.user, req: models.PlaygroundRequest{SpanID: gen},
			reply: ptr(porttest.Fail(ports.ModelUnavailable, "down")), code: errs.Upstream, says: "provider p: unavailable (HTTP 503): down"},
	} {
		before := len(f.llm.Requests())
		if c.reply != nil {
			f.llm.Queue(*c.reply)
		}
		_, err := f.svc.Playground(ctx, c.who, c.req)
		if errs.CodeOf(err) != c.code || !strings.Contains(errs.MessageOf(err), c.says) {
			t.Errorf("%s: %v, want %s saying %q", c.name, err, c.code, c.says)
		}
		if sent := len(f.llm.Requests()) - before; (sent == 1) != (c.reply != nil) {
			t.Errorf("%s: %d model calls", c.name, sent)
		}
	}
	// A span stored without its input replays with one supplied.
	f.llm.Queue(porttest.Reply{Text: "ok"})
	if _, err := f.svc.Playground(ctx, f.user, models.PlaygroundRequest{SpanID: noInput, Input: input}); err != nil {
		t.Fatal(err)
	}
}
