package runs_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/runs"
	"github.com/agents-server/agents-server/ports/porttest"
)

func TestPlanMode(t *testing.T) {
	t.Parallel()
	const plan = `{"plan":"# Tidy up\n- sort the list"}`
	for _, c := range []struct {
		name     string
		args     string // submit_plan's arguments
		approve  bool
		output   string // the plan call's result
		planning bool   // the session plans on afterwards
	}{
		{name: "an approved plan ends planning", args: plan, approve: true,
			output: "The person approved the plan. Planning mode is over and every tool is available: carry the plan out now."},
		{name: "a rejected plan keeps planning", args: plan, planning: true,
			output: "The person did not accept the plan; planning mode goes on. Revise the plan and submit it again. Their reason: too vague"},
		{name: "an approved empty plan is refused", args: `{"plan":" "}`, approve: true, planning: true,
			output: `Error: submit_plan takes {"plan": "<the plan in Markdown>"}.`},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			ctx := t.Context()
			bea := h.agent(domain.AgentSpec{Name: "Bea"})
			a := h.agent(domain.AgentSpec{Handoffs: []string{bea.ID}})
			s := h.session(a.ID)
			// Planning refuses what is not read-only (a handoff too), then
			// the plan always waits for the person.
			h.llm.Queue(porttest.Reply{Calls: []porttest.Call{call("todo_write", todo("a")), call("transfer_to_bea", "{}")}},
				porttest.Reply{Calls: []porttest.Call{{ID: "plan", Name: "submit_plan", Arguments: c.args}}})
			run, err := h.svc.Start(ctx, h.user, s.ID, runs.StartRequest{Input: "tidy", Plan: ptr(true)})
			if err != nil {
				t.Fatal(err)
			}
			events := h.events(run.ID, 0)
			if last(events).Type != domain.EventInterrupted {
				t.Fatalf("ended with %s", ending(t, events))
			}
			calls := ofType(events, domain.EventToolCall)
			if p := payload[domain.ToolCallPayload](t, calls[len(calls)-1]); p.ToolName != "submit_plan" || !p.NeedsApproval {
				t.Fatalf("the plan's call = %+v", p)
			}
			var refused []string
			for _, ev := range ofType(events, domain.EventToolResult) {
				if p := payload[domain.ToolResultPayload](t, ev); strings.HasPrefix(p.Output, "Refused: this session is in planning mode") {
					refused = append(refused, p.ToolCallID)
				}
			}
			if len(refused) != 2 {
				t.Fatalf("planning refused %v", refused)
			}
			reqs := h.llm.Requests()
			if got := toolNames(reqs[0]); !slices.Equal(got, []string{"todo_write", "submit_plan"}) {
				t.Fatalf("a planning run is offered %v: submit_plan, and no handoff", got)
			}
			approvals, err := h.svc.Approvals(ctx, h.user, s.ID)
			if err != nil || len(approvals) != 1 {
				t.Fatalf("approvals = %+v, %v", approvals, err)
			}

			h.llm.Queue(porttest.Reply{Text: "done"})
			reason := ""
			if !c.approve {
				reason = "too vague"
			}
			if _, err := h.svc.Decide(ctx, h.user, approvals[0].ID, c.approve, "", reason); err != nil {
				t.Fatal(err)
			}
			rest := h.events(run.ID, last(events).Seq)
			if got := payload[domain.ToolResultPayload](t, ofType(rest, domain.EventToolResult)[0]); got.Output != c.output {
				t.Fatalf("the plan's result = %q, want %q", got.Output, c.output)
			}
			if ending(t, rest) != "run.output done" {
				t.Fatalf("ending = %s", ending(t, rest))
			}
			sess, err := h.sessions.Get(ctx, h.user, s.ID)
			if err != nil || sess.Planning != c.planning {
				t.Fatalf("session planning = %v, want %v (%v)", sess.Planning, c.planning, err)
			}
			reqs = h.llm.Requests()
			if offered := slices.Contains(toolNames(reqs[len(reqs)-1]), "submit_plan"); offered != c.planning {
				t.Fatalf("after the decision submit_plan offered = %v", offered)
			}
		})
	}
}

func TestSubmitPlanOutsidePlanning(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	_, events := h.run(domain.AgentSpec{}, "go", porttest.Reply{Calls: []porttest.Call{call("submit_plan", `{"plan":"x"}`)}},
		porttest.Reply{Text: "ok"})
	calls := ofType(events, domain.EventToolCall)
	if len(calls) != 1 || payload[domain.ToolCallPayload](t, calls[0]).NeedsApproval {
		t.Fatalf("calls = %v: nothing to approve outside planning", calls)
	}
	res := payload[domain.ToolResultPayload](t, ofType(events, domain.EventToolResult)[0])
	if !res.IsError || !strings.HasPrefix(res.Output, "Error: this session is not in planning mode") {
		t.Fatalf("result = %+v", res)
	}
	if ending(t, events) != "run.output ok" {
		t.Fatalf("ending = %s", ending(t, events))
	}
}
