package main

import (
	"context"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agents-server/agents-server/adapters/httpapi"
	"github.com/agents-server/agents-server/adapters/llm/scripted"
	"github.com/agents-server/agents-server/core/domain"
)

// max_runs_per_user: a user's live runs are counted across sessions and
// every way a run starts; past the cap a start is refused as rate_limited.

// capScript is the capped member's model: a slow answer by default (the
// run stays live), a spawn for "delegate", a quick one for "quick" and for
// a wake-up.
func capScript() scripted.Script {
	return scripted.Script{Exchanges: []scripted.Exchange{
		{When: "[task-notification]", Steps: []scripted.Step{{Text: "Noted."}}},
		{When: "delegate", Steps: []scripted.Step{{ToolCalls: []scripted.ToolCall{spawnCall("TASK-JOB: do it", "job")}}, {Text: "Asked."}}},
		{When: "quick", Steps: []scripted.Step{{Text: "done"}}},
		{Steps: []scripted.Step{{Text: strings.Repeat("still talking ", 1000), ChunkSize: 1, DelayMS: 20}}},
	}}
}

// capSetup is a member whose agent talks for minutes, with the server's
// max_runs_per_user set to limit.
type capSetup struct {
	h     *harness
	url   string
	token string
	agent string
}

func newCapSetup(t *testing.T, limit string) capSetup {
	h := startServer(t, testConfig(t))
	model, url := startScripted(t)
	model.SetScript("capped", capScript())
	h.call("PUT", "/api/v1/settings/max_runs_per_user", h.admin, map[string]string{"value": limit}).want(t, 200)
	tok := h.member("capped")
	agent := h.agentOn(tok, protocols(url)["openai-responses"], map[string]any{"name": "Capped", "model": "capped"})
	return capSetup{h: h, url: url, token: tok, agent: agent}
}

// session makes a named conversation (a name: no title call) on the agent.
func (s capSetup) session(name string) string {
	return s.h.createSession(s.token, map[string]any{"agent_config_id": s.agent, "name": name}).ID
}

// refused asserts a 429 rate_limited naming the setting, with Retry-After.
func refused(t *testing.T, r reply) {
	t.Helper()
	d := r.wantErr(t, 429, "rate_limited")
	if !strings.Contains(d.Message, "max_runs_per_user") || r.Header.Get("Retry-After") == "" {
		t.Fatalf("refusal = %+v, Retry-After %q", d, r.Header.Get("Retry-After"))
	}
}

// stopRun cancels a run and waits until its row says it ended.
func (s capSetup) stopRun(runID string) {
	s.h.t.Helper()
	s.h.call("POST", "/api/v1/runs/"+runID+"/cancel", s.token, nil).want(s.h.t, 200)
	s.waitEnded(runID)
}

func (s capSetup) waitEnded(runID string) {
	s.h.t.Helper()
	waitFor(s.h.t, func() bool {
		var r httpapi.RunView
		s.h.call("GET", "/api/v1/runs/"+runID, s.token, nil).want(s.h.t, 200).decode(s.h.t, &r)
		return domain.RunStatus(r.Status).Final()
	})
}

// The cap counts a user's runs across sessions: REST, the WebSocket and
// /mcp past it are refused (429 + Retry-After, an error frame, a tool
// error) without touching anyone else's; a run's end frees its slot.
func TestRunCapRefusesPastTheLimitAndFreesWhenARunEnds(t *testing.T) {
	t.Parallel()
	s := newCapSetup(t, "2")
	h, tok := s.h, s.token
	a, b, c := s.session("a"), s.session("b"), s.session("c")
	runA := h.startRun(tok, a, map[string]any{"input": "talk"})
	runB := h.startRun(tok, b, map[string]any{"input": "talk"})

	refused(t, h.call("POST", "/api/v1/sessions/"+c+"/runs", tok, map[string]any{"input": "talk"}))
	if msgs := h.messages(tok, c, ""); len(msgs) != 0 {
		t.Fatalf("a refused start left %d entries", len(msgs))
	}
	ws := h.dialWS(tok)
	ws.send(domain.CommandRunCreate, map[string]any{"session_id": c, "input": "talk"})
	for {
		ev := ws.read()
		if ev.Type != domain.EventError {
			continue // the bus attaches the user's live runs
		}
		if p := payload[domain.ErrorPayload](t, ev); p.Code != "rate_limited" || p.SessionID != c {
			t.Fatalf("run.error = %+v", p)
		}
		break
	}
	cs, err := h.mcpClient(tok)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "ask_capped", Arguments: map[string]any{"prompt": "talk"}})
	if err != nil || !res.IsError || !strings.Contains(textOf(t, res), "max_runs_per_user") {
		t.Fatalf("ask past the cap = %+v, %v", res, err)
	}
	var listed []httpapi.SessionView
	h.call("GET", "/api/v1/sessions", tok, nil).want(t, 200).decode(t, &listed)
	if len(listed) != 3 {
		t.Fatalf("a refused ask left a conversation behind: %d sessions", len(listed))
	}

	// Someone else's runs are theirs to count.
	other := h.member("other")
	otherAgent := h.agentOn(other, protocols(s.url)["openai-responses"], map[string]any{"name": "Other", "model": "capped"})
	otherRun := h.startRun(other, h.createSession(other, map[string]any{"agent_config_id": otherAgent, "name": "o"}).ID,
		map[string]any{"input": "quick"})

	s.stopRun(runA)
	runC := h.startRun(tok, c, map[string]any{"input": "talk"})
	s.stopRun(runB)
	s.stopRun(runC)
	waitFor(t, func() bool {
		var r httpapi.RunView
		h.call("GET", "/api/v1/runs/"+otherRun, other, nil).want(t, 200).decode(t, &r)
		return r.Status == "completed"
	})
}

// A paused run holds no slot while it waits; the decision that would
// resume it past the cap is refused and the approval stays pending, to be
// decided once a run ends.
func TestRunCapHoldsAResumeAndKeepsTheApproval(t *testing.T) {
	t.Parallel()
	s := newCapSetup(t, "1")
	h, tok := s.h, s.token
	model, url := startScripted(t)
	model.SetScript("gated", gatedScript())
	provider := protocols(url)["openai-responses"]
	provider["name"] = "gated-model"
	agent := h.agentOn(tok, provider, map[string]any{"name": "careful", "model": "gated",
		"approval": map[string]any{"approve_tools": []string{"todo_write"}}})
	gated := h.createSession(tok, map[string]any{"agent_config_id": agent, "name": "gated"})
	paused := h.startRun(tok, gated.ID, map[string]any{"input": "note it"})
	var pending []httpapi.ApprovalView
	waitFor(t, func() bool { pending = h.approvals(tok, gated.ID); return len(pending) == 1 })

	busy := h.startRun(tok, s.session("busy"), map[string]any{"input": "talk"})
	refused(t, h.call("POST", "/api/v1/approvals/"+pending[0].ID+"/approve", tok, nil))
	ws := h.dialWS(tok)
	ws.send(domain.CommandToolApprove, map[string]any{"tool_call_id": pending[0].ToolCallID})
	for {
		if ev := ws.read(); ev.Type == domain.EventError {
			if p := payload[domain.ErrorPayload](t, ev); p.Code != "rate_limited" || p.RunID != paused {
				t.Fatalf("tool.approve past the cap answered %+v", p)
			}
			break
		}
	}
	if left := h.approvals(tok, gated.ID); len(left) != 1 || left[0].ID != pending[0].ID {
		t.Fatalf("after the refusal the approvals are %+v", left)
	}
	var r httpapi.RunView
	h.call("GET", "/api/v1/runs/"+paused, tok, nil).want(t, 200).decode(t, &r)
	if r.Status != "interrupted" {
		t.Fatalf("the paused run is %s", r.Status)
	}

	s.stopRun(busy)
	var d httpapi.DecisionView
	h.call("POST", "/api/v1/approvals/"+pending[0].ID+"/approve", tok, nil).want(t, 200).decode(t, &d)
	if d.RunID != paused || d.Status != "running" {
		t.Fatalf("decision = %+v", d)
	}
	s.waitEnded(paused)
}

// A trigger's fire and a background task's start past the cap are refused,
// and the refusal is what the trigger and the task show.
func TestRunCapIsRecordedOnTriggersAndTasks(t *testing.T) {
	t.Parallel()
	s := newCapSetup(t, "1")
	h, tok := s.h, s.token

	// The chat run holds the only slot: the task it spawns cannot start.
	chat := s.session("chat")
	run := h.startRun(tok, chat, map[string]any{"input": "delegate"})
	var tasks []httpapi.TaskView
	waitFor(t, func() bool {
		h.call("GET", "/api/v1/sessions/"+chat+"/tasks", tok, nil).want(t, 200).decode(t, &tasks)
		return len(tasks) == 1 && tasks[0].Status == domain.TaskFailed
	})
	if !strings.Contains(tasks[0].Result, "max_runs_per_user") {
		t.Fatalf("the failed task says %q", tasks[0].Result)
	}
	s.waitEnded(run)
	// The failure is reported back: a wake-up run reads it, then ends.
	waitFor(t, func() bool {
		var list []httpapi.RunSummaryView
		h.call("GET", "/api/v1/sessions/"+chat+"/runs", tok, nil).want(t, 200).decode(t, &list)
		return len(list) == 2 && !slices.ContainsFunc(list, func(r httpapi.RunSummaryView) bool { return !domain.RunStatus(r.Status).Final() })
	})
	// Refused before it costs an attempt, while another run holds the slot.
	busy := h.startRun(tok, s.session("busy"), map[string]any{"input": "talk"})
	refused(t, h.call("POST", "/api/v1/tasks/"+tasks[0].TaskID+"/retry", tok, nil))
	var again httpapi.TaskView
	h.call("GET", "/api/v1/tasks/"+tasks[0].TaskID, tok, nil).want(t, 200).decode(t, &again)
	if again.Attempt != 1 || again.Status != domain.TaskFailed {
		t.Fatalf("after a refused retry the task is %+v", again)
	}

	var tr httpapi.TriggerSecretView
	h.call("POST", "/api/v1/triggers", tok, map[string]any{"kind": "webhook", "target": "agent", "agent_config_id": s.agent,
		"session_id": s.session("reports"), "brief": "Report."}).want(t, 201).decode(t, &tr)
	refused(t, h.call("POST", "/api/v1/triggers/"+tr.ID+"/fire", tok, nil))
	var got httpapi.TriggerView
	h.call("GET", "/api/v1/triggers/"+tr.ID, tok, nil).want(t, 200).decode(t, &got)
	if !strings.Contains(got.LastError, "max_runs_per_user") || got.LastStartedID != "" {
		t.Fatalf("the trigger records %+v", got)
	}
	s.stopRun(busy)
}
