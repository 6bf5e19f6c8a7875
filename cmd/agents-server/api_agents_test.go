package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agents-server/agents-server/adapters/httpapi"
)

func (h *harness) createAgent(token string, body any) httpapi.AgentView {
	h.t.Helper()
	var a httpapi.AgentView
	h.call("POST", "/api/v1/agents", token, body).want(h.t, 201).decode(h.t, &a)
	return a
}

// fullAgent is an agent body using every group of the config shape.
func fullAgent(providerID string) map[string]any {
	return map[string]any{
		"name": "coder", "avatar": "/avatars/robot.svg", "description": "Writes and reviews Go.",
		"instructions": "Be terse.", "model": "gpt-5.2", "provider_id": providerID, "context_window": 200000,
		"behavior": map[string]any{"max_turns": 20, "handoff_description": "for code", "disable_tool_choice_reset": true,
			"stop_at_tools": "submit", "handoff_input_filter": "remove_all_tools", "max_tool_concurrency": 4,
			"tool_not_found_behavior": "error", "reasoning_item_id_policy": "omit", "workflow_authoring": true, "subagents": false},
		"resilience": map[string]any{"retry_enabled": true,
			"retry_policy":    map[string]any{"max_retries": 3, "initial_backoff_ms": 200, "max_backoff_ms": 5000},
			"fallback_models": []any{map[string]any{"provider_id": providerID, "model": "gpt-5-mini"}}},
		"guardrails": map[string]any{"guardrails": []string{"content_filter", "max_output_length"},
			"output_schema": map[string]any{"type": "object", "properties": map[string]any{"answer": map[string]any{"type": "string"}}, "required": []string{"answer"}}},
		"session":        map[string]any{"prompt_id": "pmpt_1", "prompt_version": "2", "history_limit": 50},
		"approval":       map[string]any{"approve_tools": []string{"exec_command"}},
		"compaction":     map[string]any{"compaction_enabled": true, "compaction_threshold_tokens": 80000, "compaction_window": 12, "compaction_model": "gpt-5-mini", "compaction_prompt": "Summarize.", "compaction_mode": "hybrid"},
		"model_settings": map[string]any{"temperature": 0.2, "top_p": 0.9, "max_output_tokens": 4000, "reasoning_effort": "high", "reasoning_summary": "auto", "tool_choice": "auto", "parallel_tool_calls": true, "verbosity": "low"},
		"tools":          []string{},
		"skills":         []string{},
		"handoffs":       []string{},
		"error_handlers": map[string]any{"max_turns": map[string]any{"final_output": map[string]any{"answer": "ran out of turns"}, "exclude_from_history": true}},
	}
}

func TestAgentFullShapeRoundTrips(t *testing.T) {
	t.Parallel()
	h := startServer(t, testConfig(t))
	p := h.createProvider(h.admin, map[string]any{"name": "openai", "api_key": "sk"})
	created := h.call("POST", "/api/v1/agents", h.admin, fullAgent(p.ID)).want(t, 201)
	var a httpapi.AgentView
	created.decode(t, &a)
	if a.Behavior.MaxTurns != 20 || a.Behavior.Subagents == nil || *a.Behavior.Subagents || a.Resilience.FallbackModels[0].Model != "gpt-5-mini" ||
		a.Compaction.Mode != "hybrid" || *a.ModelSettings.Temperature != 0.2 || a.Skills == nil || len(a.Skills) != 0 ||
		a.ErrorHandlers.MaxTurns == nil || !a.ErrorHandlers.MaxTurns.ExcludeFromHistory {
		t.Fatalf("created = %s", created.Body)
	}
	// GET returns exactly what was stored; PUT of the read object changes nothing but updated_at.
	read := h.call("GET", "/api/v1/agents/"+a.ID, h.admin, nil).want(t, 200)
	var again httpapi.AgentView
	h.call("PUT", "/api/v1/agents/"+a.ID, h.admin, read.Body).want(t, 200).decode(t, &again)
	again.UpdatedAt = a.UpdatedAt
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(again)
	if string(x) != string(y) {
		t.Fatalf("round trip changed the agent:\n%s\n%s", x, y)
	}

	// PUT is a full replace: omitted fields become zero values.
	var bare httpapi.AgentView
	h.call("PUT", "/api/v1/agents/"+a.ID, h.admin, map[string]any{"name": "coder", "model": "gpt-5.2"}).want(t, 200).decode(t, &bare)
	if bare.Behavior.MaxTurns != 0 || bare.ProviderID != "" || len(bare.Guardrails.Guardrails) != 0 || bare.Skills != nil ||
		bare.Tools == nil || bare.Handoffs == nil || bare.ErrorHandlers.MaxTurns != nil || bare.Guardrails.OutputSchema != nil {
		t.Fatalf("full replace kept fields: %+v", bare)
	}
	// An agent body carries no model key anywhere.
	if strings.Contains(string(read.Body), "api_key") {
		t.Fatalf("agent carries a key field: %s", read.Body)
	}
	h.call("DELETE", "/api/v1/agents/"+a.ID, h.admin, nil).want(t, 204)
	for _, m := range []string{"GET", "PUT", "DELETE"} {
		h.call(m, "/api/v1/agents/"+a.ID, h.admin, map[string]any{"name": "x", "model": "m"}).wantErr(t, 404, "not_found")
	}
}

func TestAgentValidationNamesEveryField(t *testing.T) {
	t.Parallel()
	h := startServer(t, testConfig(t))
	member := h.member("val")
	claude := h.createProvider(h.admin, map[string]any{"name": "claude", "type": "anthropic"})
	h.call("POST", "/api/v1/providers/"+claude.ID+"/scope", h.admin, map[string]string{"scope": "global"}).want(t, 200)
	foreign := h.createProvider(h.member("other"), map[string]any{"name": "theirs"})
	base := func(extra map[string]any) map[string]any {
		b := map[string]any{"name": "a", "model": "m"}
		for k, v := range extra {
			b[k] = v
		}
		return b
	}
	cases := []struct {
		body  map[string]any
		field string
	}{
		{base(map[string]any{"avatar": "https://evil.example/me.svg"}), "avatar"},
		{base(map[string]any{"avatar": "/avatars/unicorn.svg"}), "avatar"},
		{base(map[string]any{"model": ""}), "model"},
		{base(map[string]any{"provider_id": foreign.ID}), "provider_id"},
		{base(map[string]any{"provider_id": "no-such-provider"}), "provider_id"},
		{base(map[string]any{"provider_id": claude.ID, "session": map[string]any{"prompt_id": "pmpt"}}), "session.prompt_id"},
		{base(map[string]any{"resilience": map[string]any{"fallback_models": []any{map[string]any{"provider_id": foreign.ID, "model": "m"}}}}), "resilience.fallback_models[0].provider_id"},
		{base(map[string]any{"guardrails": map[string]any{"guardrails": []string{"nope"}}}), "guardrails.guardrails[0]"},
		{base(map[string]any{"guardrails": map[string]any{"output_schema": map[string]any{"type": "nope"}}}), "guardrails.output_schema"},
		{base(map[string]any{"handoffs": []string{"no-such-agent"}}), "handoffs[0]"},
		{base(map[string]any{"skills": []string{"no-such-skill"}}), "skills[0]"},
		{base(map[string]any{"tools": []string{"made_up_tool"}}), "tools[0]"},
		{base(map[string]any{"approval": map[string]any{"approve_tools": []string{"*", "x"}}}), "approval.approve_tools"},
		{base(map[string]any{"behavior": map[string]any{"max_turns": 5000}}), "behavior.max_turns"},
		{base(map[string]any{"error_handlers": map[string]any{"max_turns": map[string]any{"final_output": 42}}}), "error_handlers.max_turns.final_output"},
		{base(map[string]any{"guardrails": map[string]any{"output_schema": map[string]any{"type": "object", "required": []string{"answer"}}},
			"error_handlers": map[string]any{"model_refusal": map[string]any{"final_output": map[string]any{"other": 1}}}}), "error_handlers.model_refusal.final_output"},
		// Wrong JSON types and unknown keys anywhere in the shape.
		{base(map[string]any{"tools": "exec_command"}), "tools"},
		{base(map[string]any{"resilience": map[string]any{"fallback_models": []any{map[string]any{"provider_id": claude.ID, "model": "m", "api_key": "sk"}}}}), "api_key"},
		{base(map[string]any{"error_handlers": map[string]any{"on_crash": map[string]any{"final_output": "x"}}}), "on_crash"},
		{base(map[string]any{"behavior": map[string]any{"turbo": true}}), "turbo"},
	}
	for _, c := range cases {
		d := h.call("POST", "/api/v1/agents", member, c.body).wantErr(t, 400, "validation")
		if d.Fields[c.field] == "" {
			t.Errorf("%v: error not on %s: %+v", c.body, c.field, d)
		}
	}
	// Several faults are reported together.
	d := h.call("POST", "/api/v1/agents", member, map[string]any{"name": "", "model": "", "avatar": "x"}).wantErr(t, 400, "validation")
	if len(d.Fields) != 3 {
		t.Fatalf("fields = %v", d.Fields)
	}
	var list []httpapi.AgentView
	h.call("GET", "/api/v1/agents", member, nil).want(t, 200).decode(t, &list)
	if len(list) != 0 {
		t.Fatalf("refused creates left rows: %+v", list)
	}
}

func TestAgentReferencesFollowScope(t *testing.T) {
	t.Parallel()
	h := startServer(t, testConfig(t))
	mona := h.member("mona")
	own := h.createProvider(mona, map[string]any{"name": "mine"})
	shared := h.createProvider(h.admin, map[string]any{"name": "shared", "scope": "global"})

	helper := h.createAgent(mona, map[string]any{"name": "Code Reviewer", "model": "m", "provider_id": own.ID,
		"behavior": map[string]any{"handoff_description": "Reviews diffs."}})
	lead := h.createAgent(mona, map[string]any{"name": "lead", "model": "m", "provider_id": own.ID, "handoffs": []string{helper.ID}})
	var tools []httpapi.ToolView
	h.call("GET", "/api/v1/agents/"+lead.ID+"/tools", mona, nil).want(t, 200).decode(t, &tools)
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Origin+":"+tl.Name)
	}
	handoff := tools[len(tools)-1]
	if strings.Join(names, " ") != "checklist:todo_write tasks:spawn_task tasks:task_status tasks:task_retry tasks:task_stop handoff:transfer_to_code_reviewer" ||
		!strings.Contains(handoff.Description, "Reviews diffs.") || len(handoff.Parameters) == 0 {
		t.Fatalf("tools = %v", names)
	}
	// An agent that turns subagents off gets no task verbs.
	solo := h.createAgent(mona, map[string]any{"name": "solo", "model": "m", "provider_id": own.ID,
		"behavior": map[string]any{"subagents": false}})
	h.call("GET", "/api/v1/agents/"+solo.ID+"/tools", mona, nil).want(t, 200).decode(t, &tools)
	if len(tools) != 1 || tools[0].Name != "todo_write" {
		t.Fatalf("tools without subagents = %+v", tools)
	}
	h.call("GET", "/api/v1/agents/"+lead.ID+"/tools", h.member("nosy"), nil).wantErr(t, 404, "not_found")

	// A handoff target cannot be deleted; a used provider neither.
	h.call("DELETE", "/api/v1/agents/"+helper.ID, mona, nil).wantErr(t, 409, "conflict")
	h.call("DELETE", "/api/v1/providers/"+own.ID, mona, nil).wantErr(t, 409, "conflict")
	// Publishing an agent that leans on private rows is refused.
	h.call("POST", "/api/v1/agents/"+lead.ID+"/scope", h.admin, map[string]string{"scope": "global"}).wantErr(t, 409, "conflict")
	// Once it leans only on shared rows, it can go global.
	h.call("PUT", "/api/v1/agents/"+helper.ID, mona, map[string]any{"name": "Code Reviewer", "model": "m", "provider_id": shared.ID}).want(t, 200)
	h.call("POST", "/api/v1/agents/"+helper.ID+"/scope", h.admin, map[string]string{"scope": "global"}).want(t, 200)
	// A global agent may not point at a private provider.
	d := h.call("PUT", "/api/v1/agents/"+helper.ID, mona, map[string]any{"name": "Code Reviewer", "model": "m", "provider_id": own.ID}).
		wantErr(t, 400, "validation")
	if d.Fields["provider_id"] == "" {
		t.Fatalf("%+v", d)
	}
	// Unpublishing a provider a shared agent uses is refused.
	h.call("POST", "/api/v1/providers/"+shared.ID+"/scope", h.admin, map[string]string{"scope": "private"}).wantErr(t, 409, "conflict")
	// A provider change that breaks an agent's knob is refused.
	h.call("PUT", "/api/v1/agents/"+lead.ID, mona, map[string]any{"name": "lead", "model": "m", "provider_id": own.ID,
		"handoffs": []string{helper.ID}, "session": map[string]any{"prompt_id": "pmpt"}}).want(t, 200)
	h.call("PUT", "/api/v1/providers/"+own.ID, mona, map[string]any{"name": "mine", "type": "anthropic"}).wantErr(t, 409, "conflict")
}
