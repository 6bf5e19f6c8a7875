package runs_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/ports"
	"github.com/agents-server/agents-server/ports/porttest"
)

// toolNames are the tools a request offered.
func toolNames(r ports.ModelRequest) []string {
	var out []string
	for _, td := range r.Tools {
		out = append(out, td.Name)
	}
	return out
}

func TestHandoffs(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name      string
		filter    domain.HandoffInputFilter // the target's handoff_input_filter
		calls     []string                  // what the first agent calls
		wantInput string                    // what the target is sent
		wantError string                    // a tool output that says a call was not taken
	}{
		{name: "the target sees the whole history", calls: []string{"transfer_to_bea"},
			wantInput: "go\ntransfer_to_bea {}\n{\"assistant\": \"Bea\"}\n"},
		{name: "remove_all_tools leaves the calls out", filter: "remove_all_tools", calls: []string{"transfer_to_bea"}, wantInput: "go\n"},
		{name: "one handoff per turn", calls: []string{"transfer_to_bea", "transfer_to_cy"},
			wantInput: "go\ntransfer_to_bea {}\ntransfer_to_cy {}\n{\"assistant\": \"Bea\"}\nOnly one handoff per turn: this one was not taken.\n",
			wantError: "Only one handoff per turn"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			bea := h.agent(domain.AgentSpec{Name: "Bea", Model: "bea", Instructions: "I am Bea.",
				Behavior: domain.AgentBehavior{HandoffInputFilter: c.filter, HandoffDescription: "knows everything"}})
			cy := h.agent(domain.AgentSpec{Name: "Cy", Model: "cy"})
			spec := domain.AgentSpec{Name: "Al", Model: "al", Handoffs: []string{bea.ID, cy.ID, "00000000-0000-7000-8000-00000000dead"}}
			var calls []porttest.Call
			for _, name := range c.calls {
				calls = append(calls, call(name, "{}"))
			}
			h.llm.Route(porttest.ForModel("al"), porttest.Reply{Calls: calls})
			h.llm.Route(porttest.ForModel("bea"), porttest.Reply{Text: "Bea here"})
			run, events := h.run(spec, "go")
			// The handoff is announced once the turn's results are out.
			if got, want := story(events), "run.started run.agent_start "+strings.Repeat("run.tool_call ", len(calls))+
				strings.Repeat("run.tool_result ", len(calls))+"run.handoff run.agent_start run.message run.output"; got != want {
				t.Fatalf("story = %s, want %s", got, want)
			}
			hp := payload[domain.HandoffPayload](t, ofType(events, domain.EventHandoff)[0])
			if hp.From != "Al" || hp.To != "Bea" || hp.ToID != bea.ID {
				t.Fatalf("handoff = %+v", hp)
			}
			starts := ofType(events, domain.EventAgentStart)
			if got := payload[domain.AgentStartPayload](t, starts[1]); got.AgentConfigID != bea.ID {
				t.Fatalf("second agent_start = %+v", got)
			}
			reqs := h.llm.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d calls", len(reqs))
			}
			if got := toolNames(reqs[0]); !slices.Equal(got, []string{"todo_write", "transfer_to_bea", "transfer_to_cy"}) {
				t.Fatalf("Al was offered %v: a deleted target is not offered", got)
			}
			if !strings.Contains(reqs[0].Tools[1].Description, "knows everything") {
				t.Fatalf("the transfer tool says %q", reqs[0].Tools[1].Description)
			}
			if reqs[1].Instructions != "I am Bea." || !slices.Equal(toolNames(reqs[1]), []string{"todo_write"}) {
				t.Fatalf("Bea was sent %q with %v", reqs[1].Instructions, toolNames(reqs[1]))
			}
			if got := porttest.InputText(reqs[1]); got != c.wantInput {
				t.Fatalf("Bea was sent %q, want %q", got, c.wantInput)
			}
			if got := ending(t, events); got != "run.output Bea here" {
				t.Fatalf("ending = %s", got)
			}
			if n := len(h.spans(run.ID, domain.SpanHandoff)); n != 1 {
				t.Fatalf("%d handoff spans", n)
			}
			if n := len(h.spans(run.ID, domain.SpanAgent)); n != 2 {
				t.Fatalf("%d agent spans", n)
			}
			if c.wantError != "" && !hasEntry(h.entries(run.SessionID), c.wantError) {
				t.Fatalf("no entry says %q", c.wantError)
			}
		})
	}
}

func TestRequestShaping(t *testing.T) {
	t.Parallel()
	loop := porttest.Reply{Calls: []porttest.Call{call("todo_write", todo("a"))}}
	for _, c := range []struct {
		name    string
		spec    domain.AgentSpec
		replies []porttest.Reply
		check   func(t *testing.T, reqs []ports.ModelRequest)
	}{
		{name: "a forcing tool_choice returns to auto after a tool turn",
			spec: domain.AgentSpec{ModelSettings: domain.ModelSettings{ToolChoice: "required"}}, replies: []porttest.Reply{loop, {Text: "ok"}},
			check: func(t *testing.T, reqs []ports.ModelRequest) {
				if reqs[0].ToolChoice != "required" || reqs[0].Settings.ToolChoice != "required" || reqs[1].ToolChoice != "auto" || reqs[1].Settings.ToolChoice != "auto" {
					t.Fatalf("tool choices %q then %q", reqs[0].ToolChoice, reqs[1].ToolChoice)
				}
			}},
		{name: "disable_tool_choice_reset keeps it",
			spec:    domain.AgentSpec{ModelSettings: domain.ModelSettings{ToolChoice: "required"}, Behavior: domain.AgentBehavior{DisableToolChoiceReset: true}},
			replies: []porttest.Reply{loop, {Text: "ok"}},
			check: func(t *testing.T, reqs []ports.ModelRequest) {
				if reqs[1].ToolChoice != "required" {
					t.Fatalf("tool choice after a tool turn = %q", reqs[1].ToolChoice)
				}
			}},
		{name: "history_limit sends the newest items",
			spec: domain.AgentSpec{Session: domain.AgentSession{HistoryLimit: 2}}, replies: []porttest.Reply{loop, {Text: "ok"}},
			check: func(t *testing.T, reqs []ports.ModelRequest) {
				if got := porttest.InputText(reqs[1]); got != "todo_write "+todo("a")+"\nChecklist saved: 0 of 1 done.\n" {
					t.Fatalf("second call sent %q", got)
				}
			}},
		{name: "history_limit never starts on an orphaned output",
			spec: domain.AgentSpec{Session: domain.AgentSession{HistoryLimit: 1}}, replies: []porttest.Reply{loop, {Text: "ok"}},
			check: func(t *testing.T, reqs []ports.ModelRequest) {
				if got := porttest.InputText(reqs[1]); got != "" {
					t.Fatalf("second call sent %q", got)
				}
			}},
		{name: "reasoning_item_id_policy omit strips reasoning ids",
			spec:    domain.AgentSpec{Behavior: domain.AgentBehavior{ReasoningItemIDPolicy: "omit"}},
			replies: []porttest.Reply{{Reasoning: "hm", Calls: []porttest.Call{call("todo_write", todo("a"))}}, {Text: "ok"}},
			check: func(t *testing.T, reqs []ports.ModelRequest) {
				it := domain.ParseItem(reqs[1].Input[1])
				if it.Kind() != "reasoning" || it.ID != "" || it.ReasoningText() != "hm" {
					t.Fatalf("reasoning item sent back = %s", reqs[1].Input[1])
				}
			}},
		{name: "reasoning ids are kept by default",
			replies: []porttest.Reply{{Reasoning: "hm", Calls: []porttest.Call{call("todo_write", todo("a"))}}, {Text: "ok"}},
			check: func(t *testing.T, reqs []ports.ModelRequest) {
				if it := domain.ParseItem(reqs[1].Input[1]); it.ID == "" {
					t.Fatalf("reasoning item sent back = %s", reqs[1].Input[1])
				}
			}},
		{name: "the agent's settings, schema and stored prompt travel",
			spec: domain.AgentSpec{ModelSettings: domain.ModelSettings{Temperature: ptr(0.5), MaxOutputTokens: ptr(99)},
				Guardrails: domain.AgentGuardrails{OutputSchema: json.RawMessage(`{"type":"object"}`)},
				Session:    domain.AgentSession{PromptID: "pmpt_1", PromptVersion: "3"}},
			replies: []porttest.Reply{{Text: `{}`}},
			check: func(t *testing.T, reqs []ports.ModelRequest) {
				r := reqs[0]
				if *r.Settings.Temperature != 0.5 || *r.Settings.MaxOutputTokens != 99 || string(r.OutputSchema) != `{"type":"object"}` ||
					r.PromptID != "pmpt_1" || r.PromptVersion != "3" {
					t.Fatalf("request = %+v", r)
				}
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			_, events := h.run(c.spec, "go", c.replies...)
			if last(events).Type != domain.EventOutput {
				t.Fatalf("ended with %s", ending(t, events))
			}
			c.check(t, h.llm.Requests())
		})
	}
}

func TestToolCallsRunConcurrentlyAndAnswerInOrder(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var calls []porttest.Call
	for i := range 7 {
		items := make([]string, i)
		for j := range items {
			items[j] = fmt.Sprint(j)
		}
		calls = append(calls, porttest.Call{ID: fmt.Sprintf("c%d", i), Name: "todo_write", Arguments: todo(items...)})
	}
	run, events := h.run(domain.AgentSpec{Behavior: domain.AgentBehavior{MaxToolConcurrency: 2}}, "go",
		porttest.Reply{Calls: calls}, porttest.Reply{Text: "done"})
	results := ofType(events, domain.EventToolResult)
	if len(results) != len(calls) {
		t.Fatalf("%d results for %d calls", len(results), len(calls))
	}
	for i, ev := range results {
		p := payload[domain.ToolResultPayload](t, ev)
		if want := fmt.Sprintf("Checklist saved: 0 of %d done.", i); p.ToolCallID != calls[i].ID || p.Output != want || p.Renderer != "todo" {
			t.Fatalf("result %d = %+v, want %s for %s", i, p, want, calls[i].ID)
		}
	}
	var outputs []string
	for _, e := range h.entries(run.SessionID) {
		if it := domain.ParseItem(e.Item); it.Kind() == "function_call_output" {
			outputs = append(outputs, it.CallID)
			if e.Display == nil || e.Display.Kind != "todo" {
				t.Fatalf("a checklist output's display = %+v", e.Display)
			}
		}
	}
	if !slices.Equal(outputs, []string{"c0", "c1", "c2", "c3", "c4", "c5", "c6"}) {
		t.Fatalf("outputs recorded in order %v", outputs)
	}
	if n := len(h.spans(run.ID, domain.SpanFunction)); n != len(calls) {
		t.Fatalf("%d function spans", n)
	}
	second := h.llm.Requests()[1]
	if n := strings.Count(porttest.InputText(second), "Checklist saved"); n != len(calls) {
		t.Fatalf("the model read %d outputs", n)
	}
}
