package main

import (
	"context"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agents-server/agents-server/adapters/httpapi"
	"github.com/agents-server/agents-server/adapters/llm/scripted"
	"github.com/agents-server/agents-server/core/domain"
)

// TestBackgroundWorkIsChargedToItsOwner: a trigger's workflow — its steps
// and the wake-up reading its result — and an /mcp ask are charged to the
// person they run for, the steps as task calls; and a budget refuses them
// the same way, the refusal recorded as the task's last error.
func TestBackgroundWorkIsChargedToItsOwner(t *testing.T) {
	t.Parallel()
	ws := newWorkflowSetup(t, testConfig(t))
	h, tok := ws.h, ws.token
	var me httpapi.UserView
	h.call("GET", "/api/v1/auth/me", tok, nil).want(t, 200).decode(t, &me)
	w := ws.create("ship", []map[string]any{ws.step("plan", "plan", "Plan it."), ws.step("build", "build", "Build it.")}, nil)
	var tr httpapi.TriggerSecretView
	h.call("POST", "/api/v1/triggers", tok, map[string]any{"name": "nightly", "kind": "cron", "schedule": "@daily", "target": "workflow",
		"workflow_id": w.ID, "session_id": ws.session, "brief": "Ship it."}).want(t, 201).decode(t, &tr)
	var fired httpapi.FireView
	h.call("POST", "/api/v1/triggers/"+tr.ID+"/fire", tok, nil).want(t, 201).decode(t, &fired)
	if task, _ := ws.ended(fired.Task.TaskID); task.Status != domain.TaskCompleted {
		t.Fatalf("the execution ended %s", task.Status)
	}
	byAgent := map[string]usageRow{}
	waitFor(t, func() bool {
		for _, c := range h.usageCalls(h.admin, "/usage/export") {
			byAgent[c["agent_id"]+"/"+c["kind"]] = c
		}
		return byAgent[ws.agents["chat"]+"/chat"] != nil // the wake-up that reads the result
	})
	for _, key := range []string{ws.agents["plan"] + "/task", ws.agents["build"] + "/task", ws.agents["chat"] + "/chat"} {
		c := byAgent[key]
		if c == nil || c["user_id"] != me.ID {
			t.Errorf("call %s: %v, want one charged to the workflow's owner %s", key, c, me.ID)
		}
	}
	if c := byAgent[ws.agents["plan"]+"/task"]; c != nil && c["task_id"] == "" {
		t.Errorf("a step's call without its task: %v", c)
	}

	// An /mcp ask is the asker's.
	ws.model.SetScript("mcp-ask", scripted.Script{Exchanges: []scripted.Exchange{{Steps: []scripted.Step{{Text: "asked"}}}}})
	h.agentOn(tok, protocols(ws.url)["openai-chat"], map[string]any{"name": "Asked", "model": "mcp-ask"})
	cs, err := h.mcpClient(tok)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "ask_asked", Arguments: map[string]any{"prompt": "hi"}})
	if err != nil || res.IsError {
		t.Fatalf("ask = %+v, %v", res, err)
	}
	found := false
	for _, c := range h.usageCalls(tok, "/usage/me/export") {
		found = found || c["model"] == "mcp-ask" && c["kind"] == "chat"
	}
	if !found {
		t.Error("the /mcp ask's call is not the asker's")
	}

	// Used up, the owner's trigger fires nothing, the refusal its last
	// error; an execution the owner starts fails at its first step with
	// the budget's reason.
	h.call("POST", "/api/v1/budgets", h.admin, map[string]any{"scope": "person", "subject_id": me.ID, "period": "month", "unit": "tokens", "limit": 1}).want(t, 201)
	h.call("POST", "/api/v1/triggers/"+tr.ID+"/fire", tok, nil).wantErr(t, 429, "budget_exceeded")
	var after httpapi.TriggerView
	h.call("GET", "/api/v1/triggers/"+tr.ID, tok, nil).want(t, 200).decode(t, &after)
	if !strings.Contains(after.LastError, "budget is used up") {
		t.Errorf("the refused fire's last_error %q", after.LastError)
	}
	var started httpapi.TaskView
	h.call("POST", "/api/v1/workflows/"+w.ID+"/runs", tok, map[string]any{"session_id": ws.session, "input": "go"}).want(t, 201).decode(t, &started)
	task, _ := ws.ended(started.TaskID)
	if task.Status != domain.TaskFailed || !strings.Contains(task.Result+task.Summary, "budget_exceeded") {
		t.Errorf("the refused execution: %s %q %q", task.Status, task.Result, task.Summary)
	}
}
