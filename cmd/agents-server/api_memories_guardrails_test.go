package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/agents-server/agents-server/adapters/httpapi"
	"github.com/agents-server/agents-server/core/domain"
)

func TestMemories(t *testing.T) {
	t.Parallel()
	h := startServer(t, testConfig(t))
	mona, ned := h.member("mona"), h.member("ned")
	agent := h.createAgent(mona, map[string]any{"name": "mine", "model": "m"})

	var global, own httpapi.MemoryView
	h.call("POST", "/api/v1/memories", h.admin, map[string]any{"key": "style", "content": "Prefer tables."}).want(t, 201).decode(t, &global)
	if global.AgentConfigID != "" || global.Key != "style" {
		t.Fatalf("global = %+v", global)
	}
	h.call("POST", "/api/v1/memories", mona, map[string]any{"key": "x", "content": "y"}).wantErr(t, 403, "forbidden")
	h.call("POST", "/api/v1/memories", mona, map[string]any{"key": "repo", "content": "uses Go 1.26", "agent_config_id": agent.ID}).
		want(t, 201).decode(t, &own)
	d := h.call("POST", "/api/v1/memories", ned, map[string]any{"key": "x", "content": "y", "agent_config_id": agent.ID}).wantErr(t, 400, "validation")
	if d.Fields["agent_config_id"] == "" {
		t.Fatalf("%+v", d)
	}
	h.call("POST", "/api/v1/memories", mona, map[string]any{"key": "REPO", "content": "dup", "agent_config_id": agent.ID}).wantErr(t, 409, "conflict")
	h.call("POST", "/api/v1/memories", mona, map[string]any{"key": "", "content": "y", "agent_config_id": agent.ID}).wantErr(t, 400, "validation")
	h.call("POST", "/api/v1/memories", mona, map[string]any{"key": strings.Repeat("k", 201), "content": "y", "agent_config_id": agent.ID}).
		wantErr(t, 400, "validation")

	count := func(token, query string) int {
		var list []httpapi.MemoryView
		h.call("GET", "/api/v1/memories"+query, token, nil).want(t, 200).decode(t, &list)
		return len(list)
	}
	if count(mona, "") != 2 || count(ned, "") != 1 || count(mona, "?agent_config_id="+agent.ID) != 1 {
		t.Fatalf("listings: mona %d, ned %d", count(mona, ""), count(ned, ""))
	}
	h.call("GET", "/api/v1/memories?agent_config_id="+agent.ID, ned, nil).wantErr(t, 404, "not_found")
	h.call("GET", "/api/v1/memories/"+own.ID, ned, nil).wantErr(t, 404, "not_found")
	h.call("PUT", "/api/v1/memories/"+own.ID, ned, map[string]any{"key": "repo", "content": "z", "agent_config_id": agent.ID}).wantErr(t, 404, "not_found")
	h.call("PUT", "/api/v1/memories/"+global.ID, mona, map[string]any{"key": "style", "content": "z"}).wantErr(t, 403, "forbidden")

	var upd httpapi.MemoryView
	h.call("PUT", "/api/v1/memories/"+own.ID, mona, map[string]any{"key": "repo", "content": "uses Go 1.27", "agent_config_id": agent.ID}).
		want(t, 200).decode(t, &upd)
	if upd.Content != "uses Go 1.27" {
		t.Fatalf("update = %+v", upd)
	}
	h.call("PUT", "/api/v1/memories/"+own.ID, mona, map[string]any{"key": "repo", "content": "moved"}).wantErr(t, 400, "validation")

	// A scope holds at most 100 memories.
	for i := 1; i < domain.MaxMemoriesPerScope; i++ {
		h.call("POST", "/api/v1/memories", mona, map[string]any{"key": fmt.Sprintf("k%d", i), "content": "c", "agent_config_id": agent.ID}).want(t, 201)
	}
	h.call("POST", "/api/v1/memories", mona, map[string]any{"key": "one-too-many", "content": "c", "agent_config_id": agent.ID}).wantErr(t, 409, "conflict")

	// Deleting the agent takes its memories with it.
	h.call("DELETE", "/api/v1/agents/"+agent.ID, mona, nil).want(t, 204)
	if count(mona, "") != 1 {
		t.Fatalf("agent memories survived its deletion")
	}
	h.call("GET", "/api/v1/memories/"+own.ID, mona, nil).wantErr(t, 404, "not_found")
	h.call("DELETE", "/api/v1/memories/"+global.ID, h.admin, nil).want(t, 204)
	h.call("DELETE", "/api/v1/memories/"+global.ID, h.admin, nil).wantErr(t, 404, "not_found")
	h.call("PUT", "/api/v1/memories/"+global.ID, h.admin, map[string]any{"key": "k", "content": "c"}).wantErr(t, 404, "not_found")
}

func TestGuardrails(t *testing.T) {
	t.Parallel()
	h := startServer(t, testConfig(t))
	member := h.member("gus")

	var list []httpapi.GuardrailView
	h.call("GET", "/api/v1/guardrails", member, nil).want(t, 200).decode(t, &list)
	builtins := map[string]httpapi.GuardrailView{}
	for _, g := range list {
		if g.Builtin {
			builtins[g.Name] = g
		}
	}
	if len(builtins) != 3 || builtins["max_input_length"].MaxChars != 50000 || builtins["max_output_length"].Stages[0] != "output" ||
		strings.Join(builtins["content_filter"].Stages, ",") != "input,tool_input" {
		t.Fatalf("built-ins = %+v", builtins)
	}

	body := map[string]any{"name": "no-secrets", "stages": []string{"tool_output", "output"}, "mode": "regex", "pattern": `sk-[A-Za-z0-9]{8,}`}
	h.call("POST", "/api/v1/guardrails", member, body).wantErr(t, 403, "forbidden")
	var g httpapi.GuardrailView
	h.call("POST", "/api/v1/guardrails", h.admin, body).want(t, 201).decode(t, &g)
	h.call("POST", "/api/v1/guardrails", h.admin, map[string]any{"name": "NO-SECRETS", "stages": []string{"input"}, "mode": "max_length", "max_chars": 5}).
		wantErr(t, 409, "conflict")
	d := h.call("POST", "/api/v1/guardrails", h.admin, map[string]any{"name": "bad", "stages": []string{"input"}, "mode": "regex", "pattern": "(open"}).
		wantErr(t, 400, "validation")
	if d.Fields["pattern"] == "" {
		t.Fatalf("%+v", d)
	}
	h.call("POST", "/api/v1/guardrails", h.admin, map[string]any{"name": "bad", "stages": []string{"later"}, "mode": "regex", "pattern": "x"}).
		wantErr(t, 400, "validation")

	// Referenced by an agent: no rename, no delete; other edits are fine.
	h.createAgent(member, map[string]any{"name": "careful", "model": "m", "guardrails": map[string]any{"guardrails": []string{"no-secrets"}}})
	renamed := map[string]any{"name": "renamed", "stages": []string{"output"}, "mode": "regex", "pattern": "x"}
	h.call("PUT", "/api/v1/guardrails/"+g.ID, h.admin, renamed).wantErr(t, 409, "conflict")
	h.call("DELETE", "/api/v1/guardrails/"+g.ID, h.admin, nil).wantErr(t, 409, "conflict")
	renamed["name"] = "no-secrets"
	var upd httpapi.GuardrailView
	h.call("PUT", "/api/v1/guardrails/"+g.ID, h.admin, renamed).want(t, 200).decode(t, &upd)
	if upd.Pattern != "x" || upd.CreatedAt != g.CreatedAt {
		t.Fatalf("update = %+v", upd)
	}
	h.call("PUT", "/api/v1/guardrails/"+g.ID, member, renamed).wantErr(t, 403, "forbidden")
	h.call("DELETE", "/api/v1/guardrails/"+builtins["max_input_length"].ID, member, nil).wantErr(t, 403, "forbidden")
	h.call("DELETE", "/api/v1/guardrails/"+builtins["max_input_length"].ID, h.admin, nil).want(t, 204)
	h.call("GET", "/api/v1/guardrails/"+builtins["max_input_length"].ID, member, nil).wantErr(t, 404, "not_found")
	h.call("PUT", "/api/v1/guardrails/"+builtins["max_input_length"].ID, h.admin, renamed).wantErr(t, 404, "not_found")
	h.call("DELETE", "/api/v1/guardrails/"+builtins["max_input_length"].ID, h.admin, nil).wantErr(t, 404, "not_found")
}
