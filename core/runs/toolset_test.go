package runs_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/runs"
	"github.com/agents-server/agents-server/core/tools"
	"github.com/agents-server/agents-server/ports/porttest"
)

// almanac is a tool origin the run engine has never heard of: today
// (read-only) and set_alarm (always asks; an alarm with no time is refused
// outright). What it offers an agent is kept per agent (its name).
type almanac struct{}

var (
	today    = tools.Spec{Name: "today", Description: "The date.", Parameters: json.RawMessage(`{"type":"object"}`), Origin: "almanac", ReadOnly: true}
	setAlarm = tools.Spec{Name: "set_alarm", Description: "Set an alarm.", Parameters: json.RawMessage(`{"type":"object"}`), Origin: "almanac",
		AlwaysAsks: true}
)

func (almanac) Offer(_ context.Context, r tools.Request) (tools.Offer, error) {
	return tools.Offer{Specs: []tools.Spec{today, setAlarm}, Instructions: "The almanac knows the date.", Layer: "almanac",
		State: r.Agent.Name}, nil
}

func (almanac) Call(_ context.Context, rc tools.RunCall, call domain.Item) tools.Answer {
	return tools.Answer{Output: call.Name + " for " + rc.State.(string) + " on run " + rc.Run.ID}
}

func (almanac) Refuses(_ context.Context, _ tools.RunCall, call domain.Item) bool {
	return call.Name == setAlarm.Name && !strings.Contains(call.Arguments, "at")
}

// TestANewToolOriginIsOneToolset registers a toolset and nothing else: its
// tools are offered after the built-ins with its instructions, its calls
// reach it with what its offer kept, and its traits hold — the read-only
// tool works while planning and the other is refused, the always-asking
// one waits for a person unless the toolset refuses the call anyway.
func TestANewToolOriginIsOneToolset(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.toolsets = []tools.Toolset{almanac{}}
	h.newService()

	run, events := h.run(domain.AgentSpec{Name: "Al", Instructions: "I am Al."}, "what day is it",
		porttest.Reply{Calls: []porttest.Call{{ID: "d", Name: "today", Arguments: "{}"}, {ID: "a", Name: "set_alarm", Arguments: "{}"}}},
		porttest.Reply{Text: "Tuesday"})
	req := h.llm.Requests()[0]
	if got := toolNames(req); !slices.Equal(got, []string{"todo_write", "today", "set_alarm"}) {
		t.Fatalf("offered %v", got)
	}
	if req.Instructions != "I am Al.\n\nThe almanac knows the date." {
		t.Fatalf("instructions = %q", req.Instructions)
	}
	for _, ev := range ofType(events, domain.EventToolCall) {
		if p := payload[domain.ToolCallPayload](t, ev); p.NeedsApproval {
			t.Fatalf("%s waits for a person, though the toolset refuses it", p.ToolName)
		}
	}
	results := ofType(events, domain.EventToolResult)
	if got := payload[domain.ToolResultPayload](t, results[0]).Output; got != "today for Al on run "+run.ID {
		t.Fatalf("today answered %q", got)
	}
	if ending(t, events) != "run.output Tuesday" {
		t.Fatalf("ending = %s", ending(t, events))
	}

	// An alarm with a time waits for the person.
	_, events = h.run(domain.AgentSpec{}, "wake me", porttest.Reply{Calls: []porttest.Call{call("set_alarm", `{"at":"7:00"}`)}})
	if last(events).Type != domain.EventInterrupted ||
		!payload[domain.ToolCallPayload](t, ofType(events, domain.EventToolCall)[0]).NeedsApproval {
		t.Fatalf("an alarm did not wait for a decision: %s", story(events))
	}

	// Planning: the read-only tool answers, the other is refused.
	s := h.session(h.agent(domain.AgentSpec{Name: "Pat"}).ID)
	h.llm.Queue(porttest.Reply{Calls: []porttest.Call{{ID: "d", Name: "today", Arguments: "{}"}, {ID: "a", Name: "set_alarm", Arguments: "{}"}}},
		porttest.Reply{Text: "planned"})
	planned, err := h.svc.Start(t.Context(), h.user, s.ID, runs.StartRequest{Input: "plan", Plan: ptr(true)})
	if err != nil {
		t.Fatal(err)
	}
	results = ofType(h.events(planned.ID, 0), domain.EventToolResult)
	if got := payload[domain.ToolResultPayload](t, results[0]).Output; got != "today for Pat on run "+planned.ID {
		t.Fatalf("planning: today answered %q", got)
	}
	if got := payload[domain.ToolResultPayload](t, results[1]).Output; !strings.HasPrefix(got, "Refused: this session is in planning mode") {
		t.Fatalf("planning: set_alarm answered %q", got)
	}
}
