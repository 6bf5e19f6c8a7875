package runs_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/settings"
	"github.com/agents-server/agents-server/ports"
	"github.com/agents-server/agents-server/ports/porttest"
)

func TestARunStreamsRecordsAndEnds(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := t.Context()
	if _, err := h.settings.Put(ctx, h.admin, settings.KeySystemPrompt, "Be brief."); err != nil {
		t.Fatal(err)
	}
	a := h.agent(domain.AgentSpec{Instructions: "You are terse."})
	mem := domain.Memory{ID: h.ids.NewID(), Key: "tone", Content: "dry"}
	other := domain.Memory{ID: h.ids.NewID(), AgentID: h.agent(domain.AgentSpec{}).ID, Key: "secret", Content: "not for a"}
	if err := h.config.InConfigTx(ctx, func(tx ports.ConfigTx) error {
		return errors.Join(tx.InsertMemory(ctx, mem), tx.InsertMemory(ctx, other))
	}); err != nil {
		t.Fatal(err)
	}
	s := h.session(a.ID)
	usage := domain.Usage{InputTokens: 10, OutputTokens: 3, TotalTokens: 13}
	h.llm.Queue(porttest.Reply{Reasoning: "thinking", Text: "Hello there", Usage: usage})
	run := h.start(s.ID, "hi")
	events := h.events(run.ID, 0)

	if got, want := story(events), "run.started run.agent_start run.reasoning_item run.message run.output"; got != want {
		t.Fatalf("story = %s, want %s", got, want)
	}
	for i, ev := range events {
		if ev.Seq != int64(i+1) {
			t.Fatalf("event %d (%s) has seq %d", i, ev.Type, ev.Seq)
		}
	}
	var text strings.Builder
	for _, ev := range ofType(events, domain.EventStep) {
		text.WriteString(payload[domain.DeltaPayload](t, ev).Delta)
	}
	if text.String() != "Hello there" || len(ofType(events, domain.EventStep)) != 2 {
		t.Fatalf("text deltas = %q", text.String())
	}
	if r := ofType(events, domain.EventReasoning); len(r) != 1 || payload[domain.DeltaPayload](t, r[0]).Delta != "thinking" {
		t.Fatalf("reasoning deltas = %v", r)
	}
	if got := ending(t, events); got != "run.output Hello there" {
		t.Fatalf("ending = %s", got)
	}

	row := h.row(run.ID)
	if row.Status != domain.RunCompleted || row.FinalOutput != "Hello there" || row.LastSeq != last(events).Seq || row.EndedAt == nil ||
		row.AgentConfigID != a.ID || row.OwnerID != h.user.User.ID {
		t.Fatalf("row = %+v (last seq %d)", row, last(events).Seq)
	}
	entries := h.entries(s.ID)
	if got := describe(entries); !slices.Equal(got, []string{"item/user message: hi", "item/model reasoning", "item/model message: Hello there"}) {
		t.Fatalf("entries = %q", got)
	}
	for i, e := range entries {
		if e.RunID != run.ID || (e.Usage != nil) != (i == 2) {
			t.Fatalf("entry %d = %+v: every entry names the run, the turn's last carries its usage", i, e)
		}
	}
	if *entries[2].Usage != usage {
		t.Fatalf("usage = %+v", *entries[2].Usage)
	}

	reqs := h.llm.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d model calls", len(reqs))
	}
	req := reqs[0]
	if want := "Be brief.\n\nYou are terse.\n\nMemories:\n- tone: dry\n"; req.Instructions != want {
		t.Fatalf("instructions = %q, want %q", req.Instructions, want)
	}
	if req.Model != "m" || req.Endpoint.Name != "fake" || req.Endpoint.APIKey != "sk-fake" || porttest.InputText(req) != "hi\n" {
		t.Fatalf("request = %+v", req)
	}
	var tools []string
	for _, td := range req.Tools {
		tools = append(tools, td.Name)
	}
	if !slices.Equal(tools, []string{"todo_write"}) {
		t.Fatalf("tools offered = %v: todo_write, and submit_plan only while planning", tools)
	}

	agentSpans, gens := h.spans(run.ID, domain.SpanAgent), h.spans(run.ID, domain.SpanGeneration)
	if len(agentSpans) != 1 || len(gens) != 1 || gens[0].ParentID != agentSpans[0].ID || gens[0].Meta["provider_id"] != h.provider.ID {
		t.Fatalf("spans: agent %+v, generation %+v", agentSpans, gens)
	}
	var data struct {
		Input []json.RawMessage `json:"input"`
	}
	if err := json.Unmarshal(gens[0].Data, &data); err != nil || len(data.Input) != 1 {
		t.Fatalf("generation payload %s: %v", gens[0].Data, err)
	}
	if n := len(ofType(events, domain.EventTraceSpan)); n != 2 {
		t.Fatalf("%d trace.span events, want the agent's and the generation's", n)
	}

	got, err := h.svc.Get(ctx, h.user, run.ID)
	if err != nil || got.LastSeq != last(events).Seq || got.Status != domain.RunCompleted {
		t.Fatalf("Get = %+v, %v", got, err)
	}
	if _, err := h.svc.Get(ctx, h.other, run.ID); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("another member's Get: %v", err)
	}
	if _, err := h.svc.Subscribe(context.Background(), h.other, run.ID, 0); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("another member's Subscribe: %v", err)
	}
	// The session answers again from its history: an empty input regenerates.
	h.llm.Queue(porttest.Reply{Text: "Hello again"})
	again := h.start(s.ID, "")
	if got := ending(t, h.events(again.ID, 0)); got != "run.output Hello again" {
		t.Fatalf("regenerate: %s", got)
	}
	if got := porttest.InputText(h.llm.Requests()[1]); got != "hi\nreasoning\nHello there\n" {
		t.Fatalf("regenerate sent %q", got)
	}
}

// finalStatus is the run status each final event records.
var finalStatus = map[string]domain.RunStatus{domain.EventOutput: domain.RunCompleted, domain.EventError: domain.RunError,
	domain.EventCancelled: domain.RunCancelled}

// handler is a static final output.
func handler(output string, exclude bool) *domain.ErrorHandler {
	b, _ := json.Marshal(output)
	return &domain.ErrorHandler{FinalOutput: b, ExcludeFromHistory: exclude}
}

func TestHowALoopEnds(t *testing.T) {
	t.Parallel()
	loop := porttest.Reply{Calls: []porttest.Call{call("todo_write", todo("think"))}}
	schema := json.RawMessage(`{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]}`)
	for _, c := range []struct {
		name    string
		spec    domain.AgentSpec
		replies []porttest.Reply
		want    string   // the ending: final event type and code or output
		calls   int      // model calls made
		has     []string // entries that must be recorded (substrings of describe)
		hasNot  []string
	}{
		{name: "a final answer", replies: []porttest.Reply{{Text: "done"}}, want: "run.output done", calls: 1,
			has: []string{"item/model message: done"}},
		{name: "tools then an answer", replies: []porttest.Reply{loop, {Text: "done"}}, want: "run.output done", calls: 2,
			has: []string{"item/model call todo_write", "item/tool output: Checklist saved: 0 of 1 done.", "item/model message: done"}},
		{name: "max_turns without a handler", spec: domain.AgentSpec{Behavior: domain.AgentBehavior{MaxTurns: 2}},
			replies: []porttest.Reply{loop, loop, loop}, want: "run.error max_turns_exceeded", calls: 2,
			has: []string{"annotation/: the agent used all 2 turns without a final answer"}},
		{name: "the default max_turns", replies: slices.Repeat([]porttest.Reply{loop}, 11), want: "run.error max_turns_exceeded", calls: 10},
		{name: "max_turns with a handler", spec: domain.AgentSpec{Behavior: domain.AgentBehavior{MaxTurns: 1},
			ErrorHandlers: domain.ErrorHandlers{MaxTurns: handler("I ran out of turns.", false)}},
			replies: []porttest.Reply{loop, loop}, want: "run.output I ran out of turns.", calls: 1,
			has: []string{"item/error_handler message: I ran out of turns."}},
		{name: "max_turns with a handler left out of the history", spec: domain.AgentSpec{Behavior: domain.AgentBehavior{MaxTurns: 1},
			ErrorHandlers: domain.ErrorHandlers{MaxTurns: handler("Out of turns.", true)}},
			replies: []porttest.Reply{loop, loop}, want: "run.output Out of turns.", calls: 1, hasNot: []string{"error_handler"}},
		{name: "stop_at_tools", spec: domain.AgentSpec{Behavior: domain.AgentBehavior{StopAtTools: "lookup, todo_write"}},
			replies: []porttest.Reply{loop, {Text: "never read"}}, want: "run.output Checklist saved: 0 of 1 done.", calls: 1},
		{name: "an unknown tool is fed back", replies: []porttest.Reply{{Calls: []porttest.Call{call("nope", "{}")}}, {Text: "ok"}},
			want: "run.output ok", calls: 2, has: []string{`item/tool output: Error: there is no tool named "nope"`}},
		{name: "an unknown tool ends the run", spec: domain.AgentSpec{Behavior: domain.AgentBehavior{ToolNotFoundBehavior: "error"}},
			replies: []porttest.Reply{{Calls: []porttest.Call{call("nope", "{}")}}}, want: "run.error model_behavior", calls: 1,
			has: []string{`annotation/: the model called "nope", a tool this agent does not have`}},
		{name: "a malformed checklist is fed back", replies: []porttest.Reply{{Calls: []porttest.Call{call("todo_write", `{"todos":[{"content":"x","status":"later"}]}`)}},
			{Calls: []porttest.Call{call("todo_write", `{"items":[]}`)}}, {Text: "ok"}}, want: "run.output ok", calls: 3,
			has: []string{`output: Error: status "later" is not pending`, "output: Error: todo_write takes"}},
		{name: "a refusal", replies: []porttest.Reply{{Refusal: "I won't."}}, want: "run.error model_behavior", calls: 1,
			has: []string{"annotation/: the model refused: I won't."}},
		{name: "a refusal with a handler", spec: domain.AgentSpec{ErrorHandlers: domain.ErrorHandlers{ModelRefusal: handler("Sorry.", false)}},
			replies: []porttest.Reply{{Refusal: "I won't."}}, want: "run.output Sorry.", calls: 1, has: []string{"item/error_handler message: Sorry."}},
		{name: "output matching the schema", spec: domain.AgentSpec{Guardrails: domain.AgentGuardrails{OutputSchema: schema}},
			replies: []porttest.Reply{{Text: `{"a":1}`}}, want: `run.output {"a":1}`, calls: 1},
		{name: "output not matching the schema", spec: domain.AgentSpec{Guardrails: domain.AgentGuardrails{OutputSchema: schema}},
			replies: []porttest.Reply{{Text: `{"b":1}`}}, want: "run.error model_behavior", calls: 1,
			has: []string{"annotation/: the final output does not match output_schema"}},
		{name: "output not matching the schema, handled", spec: domain.AgentSpec{Guardrails: domain.AgentGuardrails{OutputSchema: schema},
			ErrorHandlers: domain.ErrorHandlers{InvalidFinalOutput: &domain.ErrorHandler{FinalOutput: json.RawMessage(`{"a":0}`)}}},
			replies: []porttest.Reply{{Text: "prose"}}, want: `run.output {"a":0}`, calls: 1},
		{name: "no output at all", replies: []porttest.Reply{{Usage: domain.Usage{InputTokens: 5, TotalTokens: 5}}}, want: "run.output ", calls: 1,
			has: []string{"annotation/: The model returned no output."}},
		{name: "a provider refusing the credential", replies: []porttest.Reply{porttest.Fail(ports.ModelAuth, "bad key")},
			want: "run.error config_error", calls: 1, has: []string{"provider fake: auth (HTTP 401): bad key"}},
		{name: "a provider refusing the request", replies: []porttest.Reply{porttest.Fail(ports.ModelInvalid, "no such model")},
			want: "run.error model_error", calls: 1},
		{name: "an error that is no model's", replies: []porttest.Reply{{Err: errors.New("disk on fire")}},
			want: "run.error persist_error", calls: 1},
		{name: "no provider", spec: domain.AgentSpec{ProviderID: "none"}, want: "run.error config_error",
			has: []string{"names no provider"}},
		{name: "a provider since deleted", spec: domain.AgentSpec{ProviderID: "00000000-0000-7000-8000-0000deadbeef"},
			want: "run.error config_error", has: []string{"names a provider that no longer exists"}},
		{name: "an unknown guardrail", spec: domain.AgentSpec{Guardrails: domain.AgentGuardrails{Guardrails: []string{"nope"}}},
			want: "run.error config_error", has: []string{`guardrail "nope", which does not exist`}},
		{name: "an unusable output schema", spec: domain.AgentSpec{Guardrails: domain.AgentGuardrails{OutputSchema: json.RawMessage(`{"type":"string"}`)}},
			want: "run.error config_error", has: []string{"unusable output_schema"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			run, events := h.run(c.spec, "go", c.replies...)
			if got := ending(t, events); got != c.want {
				t.Fatalf("ending = %q, want %q (story %s)", got, c.want, story(events))
			}
			if n := len(h.llm.Requests()); n != c.calls {
				t.Fatalf("%d model calls, want %d", n, c.calls)
			}
			row := h.row(run.ID)
			if row.Status != finalStatus[last(events).Type] || row.LastSeq != last(events).Seq {
				t.Fatalf("row = %+v after %s", row, last(events).Type)
			}
			if last(events).Type == domain.EventError && row.ErrorCode != payload[domain.ErrorPayload](t, last(events)).Code {
				t.Fatalf("row code %q", row.ErrorCode)
			}
			entries := h.entries(run.SessionID)
			for _, want := range c.has {
				if !hasEntry(entries, want) {
					t.Errorf("no entry has %q: %q", want, describe(entries))
				}
			}
			for _, not := range c.hasNot {
				if hasEntry(entries, not) {
					t.Errorf("an entry has %q: %q", not, describe(entries))
				}
			}
		})
	}
}
