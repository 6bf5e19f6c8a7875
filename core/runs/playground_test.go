package runs_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/models"
	"github.com/agents-server/agents-server/core/settings"
	"github.com/agents-server/agents-server/core/traces"
	"github.com/agents-server/agents-server/ports"
	"github.com/agents-server/agents-server/ports/porttest"
)

// generation runs an agent once and returns its generation span.
func (h *harness) generation(spec domain.AgentSpec) domain.Span {
	h.t.Helper()
	run, events := h.run(spec, "hello", porttest.Reply{Text: "hi back"})
	if last(events).Type != domain.EventOutput {
		h.t.Fatalf("ended with %s", ending(h.t, events))
	}
	gens := h.spans(run.ID, domain.SpanGeneration)
	if len(gens) != 1 {
		h.t.Fatalf("%d generation spans", len(gens))
	}
	return gens[0]
}

func TestPlaygroundReplaysAGeneration(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := t.Context()
	span := h.generation(domain.AgentSpec{Instructions: "Be kind.", ModelSettings: domain.ModelSettings{Temperature: ptr(0.3)}})
	for _, c := range []struct {
		name  string
		req   models.PlaygroundRequest
		check func(t *testing.T, r ports.ModelRequest)
	}{
		{name: "as it was", req: models.PlaygroundRequest{SpanID: span.ID}, check: func(t *testing.T, r ports.ModelRequest) {
			if r.Model != "m" || r.Instructions != "Be kind." || porttest.InputText(r) != "hello\n" || *r.Settings.Temperature != 0.3 ||
				!slices.Equal(toolNames(r), []string{"todo_write"}) || r.Endpoint.APIKey != "sk-fake" {
				t.Fatalf("replayed %+v", r)
			}
		}},
		{name: "edited", req: models.PlaygroundRequest{SpanID: span.ID, Model: ptr("other"), Instructions: ptr("Be terse."),
			Input: []json.RawMessage{domain.TextMessage("user", "input_text", "edited")}, Tools: []ports.ToolDef{{Name: "lookup"}},
			Settings: &domain.ModelSettings{ToolChoice: "none"}}, check: func(t *testing.T, r ports.ModelRequest) {
			if r.Model != "other" || r.Instructions != "Be terse." || porttest.InputText(r) != "edited\n" || r.ToolChoice != "none" ||
				r.Settings.Temperature != nil || !slices.Equal(toolNames(r), []string{"lookup"}) {
				t.Fatalf("replayed %+v", r)
			}
		}},
	} {
		h.llm.Queue(porttest.Reply{Text: "again"})
		resp, err := h.models.Playground(ctx, h.user, c.req)
		if err != nil || len(resp.Output) != 1 {
			t.Fatalf("%s: %+v, %v", c.name, resp, err)
		}
		reqs := h.llm.Requests()
		c.check(t, reqs[len(reqs)-1])
	}

	agentSpan := h.spans(span.RunID, domain.SpanAgent)[0]
	for _, c := range []struct {
		name  string
		who   domain.Principal
		req   models.PlaygroundRequest
		reply *porttest.Reply
		code  errs.Code
	}{
		{name: "a tool without a valid name", who: h.user, req: models.PlaygroundRequest{SpanID: span.ID, Tools: []ports.ToolDef{{Name: "bad name"}}},
			code: errs.Validation},
		{name: "settings out of range", who: h.user, req: models.PlaygroundRequest{SpanID: span.ID, Settings: &domain.ModelSettings{Temperature: ptr(9.0)}},
			code: errs.Validation},
		{name: "an unknown span", who: h.user, req: models.PlaygroundRequest{SpanID: "nope"}, code: errs.Validation},
		{name: "another member's span", who: h.other, req: models.PlaygroundRequest{SpanID: span.ID}, code: errs.Validation},
		{name: "not a generation", who: h.user, req: models.PlaygroundRequest{SpanID: agentSpan.ID}, code: errs.Validation},
		{name: "a provider refusing the credential", who: h.user, req: models.PlaygroundRequest{SpanID: span.ID},
			reply: ptr(porttest.Fail(ports.ModelAuth, "bad key")), code: errs.Validation},
		{name: "a provider down", who: h.user, req: models.PlaygroundRequest{SpanID: span.ID},
			reply: ptr(porttest.Fail(ports.ModelUnavailable, "down")), code: errs.Upstream},
	} {
		before := len(h.llm.Requests())
		if c.reply != nil {
			h.llm.Queue(*c.reply)
		}
		_, err := h.models.Playground(ctx, c.who, c.req)
		if errs.CodeOf(err) != c.code {
			t.Errorf("%s: %v, want %s", c.name, err, c.code)
		}
		if sent := len(h.llm.Requests()) - before; (sent == 1) != (c.reply != nil) {
			t.Errorf("%s: %d model calls", c.name, sent)
		}
	}

	// A provider since deleted cannot answer.
	if err := h.config.InConfigTx(ctx, func(tx ports.ConfigTx) error { return tx.DeleteProvider(ctx, h.provider.ID) }); err != nil {
		t.Fatal(err)
	}
	_, err := h.models.Playground(ctx, h.user, models.PlaygroundRequest{SpanID: span.ID})
	if errs.CodeOf(err) != errs.Validation || !strings.Contains(errs.MessageOf(err), "no longer exists") {
		t.Fatalf("deleted provider: %v", err)
	}
}

func TestTracesFollowTheirSettings(t *testing.T) {
	t.Parallel()
	t.Run("without conversation content", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := t.Context()
		if _, err := h.settings.Put(ctx, h.admin, settings.KeyTraceIncludeSensitiveData, "false"); err != nil {
			t.Fatal(err)
		}
		span := h.generation(domain.AgentSpec{Instructions: "secret instructions"})
		var data map[string]json.RawMessage
		if err := json.Unmarshal(span.Data, &data); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"input", "system_instructions", "output"} {
			if _, ok := data[k]; ok {
				t.Errorf("the payload keeps %s: %s", k, span.Data)
			}
		}
		if _, ok := data["model"]; !ok || strings.Contains(string(span.Data), "secret") {
			t.Fatalf("payload = %s", span.Data)
		}
		// Such a span replays only with an input supplied.
		_, err := h.models.Playground(ctx, h.user, models.PlaygroundRequest{SpanID: span.ID})
		wantCode(t, err, errs.Validation)
		h.llm.Queue(porttest.Reply{Text: "ok"})
		if _, err := h.models.Playground(ctx, h.user, models.PlaygroundRequest{SpanID: span.ID,
			Input: []json.RawMessage{domain.TextMessage("user", "input_text", "again")}}); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("cut at the payload budget", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := t.Context()
		if _, err := h.settings.Put(ctx, h.admin, settings.KeyTraceSpanDataKB, "1"); err != nil {
			t.Fatal(err)
		}
		span := h.generation(domain.AgentSpec{Instructions: strings.Repeat("long ", 500)})
		var marker struct {
			Truncated bool `json:"truncated"`
			Limit     int  `json:"limit_bytes"`
		}
		if err := json.Unmarshal(span.Data, &marker); err != nil || !marker.Truncated || marker.Limit != 1024 {
			t.Fatalf("payload = %s", span.Data)
		}
		_, err := h.models.Playground(ctx, h.user, models.PlaygroundRequest{SpanID: span.ID})
		wantCode(t, err, errs.Validation)
	})
	t.Run("a payload past the live cap stays out of the event", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		run, events := h.run(domain.AgentSpec{}, strings.Repeat("x", traces.LiveSpanCap), porttest.Reply{Text: "ok"})
		gen := h.spans(run.ID, domain.SpanGeneration)[0]
		if len(gen.Data) <= traces.LiveSpanCap {
			t.Fatalf("stored payload is %d bytes", len(gen.Data))
		}
		seen := 0
		for _, ev := range ofType(events, domain.EventTraceSpan) {
			if p := payload[traces.SpanPayload](t, ev); p.SpanID == gen.ID {
				seen++
				if !p.PayloadOmitted || p.Data != nil || p.DataBytes != len(gen.Data) {
					t.Fatalf("live span = %+v", p)
				}
			}
		}
		if seen != 1 {
			t.Fatalf("the generation span went out %d times", seen)
		}
	})
}
