package main

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/agents-server/agents-server/adapters/httpapi"
	"github.com/agents-server/agents-server/adapters/llm/scripted"
	"github.com/agents-server/agents-server/core/domain"
)

// bodyCase is a minimal body the server accepts, probed field by field.
type bodyCase struct {
	method, path, token string
	// at names the object probed inside the body: "" for the body itself,
	// else a dotted path of properties and array indexes ("env.0").
	at string
	// body returns the nth body; a field that must be unique (a name)
	// takes n so that every accepted body is new.
	body func(n int) map[string]any
	// conditional lists fields the server demands only in the situation
	// this body is in (a regex guardrail's pattern): not required by the
	// document, yet refused when left out here.
	conditional []string
}

// TestRequiredFieldsAreWhatTheServerDemands proves the request schemas'
// `required` lists in both directions, for every body that has one: the
// minimal body is accepted (and, through the harness, valid); leaving out a
// field the document requires is refused; leaving out any other field is
// accepted — so the document neither demands what the server does without
// nor lets a client omit what the server refuses to go without.
func TestRequiredFieldsAreWhatTheServerDemands(t *testing.T) {
	t.Parallel()
	model, url := startScripted(t)
	model.SetScript("m", scripted.Script{Exchanges: []scripted.Exchange{{Steps: []scripted.Step{{Text: "hello"}}}}})
	h := startServer(t, testConfig(t))
	h.createUser("keeper", "password-of-keeper", "member")
	prov := h.createProvider(h.admin, protocols(url)["openai-responses"])
	agent := h.createAgent(h.admin, map[string]any{"name": "base", "model": "m", "provider_id": prov.ID})
	// The update probes change these; the run and the playground keep the above.
	prov2 := h.createProvider(h.admin, map[string]any{"name": "edited"})
	agent2 := h.createAgent(h.admin, map[string]any{"name": "edited", "model": "m"})
	var mem httpapi.MemoryView
	h.call("POST", "/api/v1/memories", h.admin, map[string]any{"key": "base"}).want(t, 201).decode(t, &mem)
	var guard httpapi.GuardrailView
	h.call("POST", "/api/v1/guardrails", h.admin, map[string]any{"name": "base", "stages": []string{"input"}, "mode": "max_length",
		"max_chars": 10}).want(t, 201).decode(t, &guard)
	sb := h.createSandbox(map[string]any{"name": "base", "type": "docker", "config": map[string]any{"image": "x"}})
	proj := h.createProject(h.admin, map[string]any{"name": "base", "sandbox_id": sb.ID})
	sess := h.createSession(h.admin, map[string]any{"agent_config_id": agent.ID})
	_, events := h.runEvents(h.admin, sess.ID, map[string]any{"input": "hi"})
	if last := lastEvent(events); last.Type != domain.EventOutput {
		t.Fatalf("the run ended with %s", last.Type)
	}
	var entries []httpapi.EntryView
	h.call("GET", "/api/v1/sessions/"+sess.ID+"/messages", h.admin, nil).want(t, 200).decode(t, &entries)
	spanID := ""
	for _, sp := range h.traces(h.admin, sess.ID, "?summary=true") {
		if sp.Kind == domain.SpanGeneration {
			spanID = sp.SpanID
		}
	}
	if len(entries) == 0 || spanID == "" {
		t.Fatalf("no entry or generation span to point at: %d entries", len(entries))
	}

	named := func(fields ...any) func(int) map[string]any {
		return func(n int) map[string]any {
			out := map[string]any{}
			for i := 0; i+1 < len(fields); i += 2 {
				v := fields[i+1]
				if s, ok := v.(string); ok && strings.Contains(s, "%d") {
					v = fmt.Sprintf(s, n)
				}
				out[fields[i].(string)] = v
			}
			return out
		}
	}
	nest := func(key string, inner func(int) map[string]any, outer ...any) func(int) map[string]any {
		return func(n int) map[string]any {
			b := named(outer...)(n)
			b[key] = inner(n)
			return b
		}
	}
	cases := []bodyCase{
		{method: "POST", path: "/api/v1/auth/login", body: named("username", "keeper", "password", "password-of-keeper")},
		{method: "POST", path: "/api/v1/auth/tokens", token: h.admin, body: named("name", "t%d")},
		{method: "POST", path: "/api/v1/auth/users", token: h.admin, body: named("username", "u%d", "password", "long-enough")},
		{method: "PUT", path: "/api/v1/settings/system_prompt", token: h.admin, body: named()},
		{method: "POST", path: "/api/v1/providers", token: h.admin, body: named("name", "p%d")},
		{method: "PUT", path: "/api/v1/providers/" + prov2.ID, token: h.admin, body: named("name", "edited-%d", "base_url", "http://localhost:1/v1")},
		{method: "POST", path: "/api/v1/providers/" + prov2.ID + "/scope", token: h.admin, body: named("scope", "global")},
		{method: "POST", path: "/api/v1/agents", token: h.admin, body: named("name", "a%d", "model", "m")},
		{method: "POST", path: "/api/v1/agents", token: h.admin, at: "resilience.fallback_models.0",
			body: func(n int) map[string]any {
				return map[string]any{"name": fmt.Sprintf("fb%d", n), "model": "m", "resilience": map[string]any{
					"fallback_models": []any{map[string]any{"provider_id": prov.ID, "model": "m"}}}}
			}},
		{method: "POST", path: "/api/v1/agents", token: h.admin, at: "error_handlers.max_turns",
			body: nest("error_handlers", func(int) map[string]any {
				return map[string]any{"max_turns": map[string]any{"final_output": "gave up"}}
			}, "name", "eh%d", "model", "m")},
		{method: "PUT", path: "/api/v1/agents/" + agent2.ID, token: h.admin, body: named("name", "edited-%d", "model", "m")},
		{method: "POST", path: "/api/v1/agents/" + agent2.ID + "/scope", token: h.admin, body: named("scope", "global")},
		{method: "POST", path: "/api/v1/memories", token: h.admin, body: named("key", "k%d")},
		{method: "PUT", path: "/api/v1/memories/" + mem.ID, token: h.admin, body: named("key", "base-%d")},
		{method: "POST", path: "/api/v1/guardrails", token: h.admin, conditional: []string{"pattern"},
			body: named("name", "g%d", "stages", []string{"input"}, "mode", "regex", "pattern", "x")},
		{method: "PUT", path: "/api/v1/guardrails/" + guard.ID, token: h.admin, conditional: []string{"max_chars"},
			body: named("name", "base-%d", "stages", []string{"input"}, "mode", "max_length", "max_chars", 10)},
		{method: "POST", path: "/api/v1/sandboxes", token: h.admin,
			body: named("name", "s%d", "type", "docker", "config", map[string]any{"image": "x"})},
		{method: "PUT", path: "/api/v1/sandboxes/" + sb.ID, token: h.admin, body: named("name", "base-%d", "config", map[string]any{"image": "x"})},
		{method: "POST", path: "/api/v1/projects", token: h.admin, body: named("name", "pr%d", "sandbox_id", sb.ID)},
		{method: "POST", path: "/api/v1/projects", token: h.admin, at: "env.0",
			body: func(n int) map[string]any {
				return map[string]any{"name": fmt.Sprintf("env%d", n), "sandbox_id": sb.ID, "env": []any{map[string]any{"name": "FOO", "value": "bar"}}}
			}},
		{method: "PUT", path: "/api/v1/projects/" + proj.ID, token: h.admin, body: named("name", "base-%d")},
		{method: "POST", path: "/api/v1/sessions/" + sess.ID + "/branch", token: h.admin, body: named("entry_id", entries[0].ID)},
		{method: "POST", path: "/api/v1/playground/generate", token: h.admin, body: named("span_id", spanID)},
		{method: "POST", path: "/api/v1/playground/generate", token: h.admin, at: "tools.0",
			body: func(int) map[string]any {
				return map[string]any{"span_id": spanID, "tools": []any{map[string]any{"name": "lookup", "description": "d"}}}
			}},
	}
	// Workflows, their executions, triggers and skills: each operation's
	// body, and a step inside a definition.
	step := func() []any { return []any{map[string]any{"name": "one", "agent": agent.ID, "prompt": "go"}} }
	var wf httpapi.WorkflowView
	h.call("POST", "/api/v1/workflows", h.admin, map[string]any{"name": "base", "description": "d", "steps": step()}).
		want(t, 201).decode(t, &wf)
	var trig httpapi.TriggerSecretView
	h.call("POST", "/api/v1/triggers", h.admin, map[string]any{"kind": "webhook", "target": "agent", "agent_config_id": agent.ID,
		"session_id": sess.ID, "brief": "b"}).want(t, 201).decode(t, &trig)
	var skill httpapi.SkillView
	h.call("POST", "/api/v1/skills", h.admin, map[string]any{"content": "---\nname: base\ndescription: d\n---\nbody"}).
		want(t, 201).decode(t, &skill)
	workflowBody := func(prefix string) func(int) map[string]any {
		return func(n int) map[string]any {
			return map[string]any{"name": fmt.Sprintf("%s%d", prefix, n), "description": "d", "steps": step()}
		}
	}
	cases = append(cases,
		bodyCase{method: "POST", path: "/api/v1/workflows", token: h.admin, body: workflowBody("w")},
		bodyCase{method: "POST", path: "/api/v1/workflows", token: h.admin, at: "steps.0", body: workflowBody("ws")},
		bodyCase{method: "PUT", path: "/api/v1/workflows/" + wf.ID, token: h.admin, body: workflowBody("base-")},
		bodyCase{method: "PUT", path: "/api/v1/workflows/" + wf.ID, token: h.admin, at: "steps.0", body: workflowBody("base-s")},
		bodyCase{method: "POST", path: "/api/v1/workflows/" + wf.ID + "/runs", token: h.admin, body: named("session_id", sess.ID, "input", "go")},
		bodyCase{method: "POST", path: "/api/v1/triggers", token: h.admin, conditional: []string{"agent_config_id"},
			body: named("kind", "webhook", "target", "agent", "agent_config_id", agent.ID, "session_id", sess.ID, "brief", "b")},
		bodyCase{method: "PUT", path: "/api/v1/triggers/" + trig.ID, token: h.admin, conditional: []string{"agent_config_id"},
			body: named("target", "agent", "agent_config_id", agent.ID, "session_id", sess.ID, "brief", "b")},
		bodyCase{method: "POST", path: "/api/v1/skills", token: h.admin, body: named("content", "---\nname: s%d\ndescription: d\n---\nbody")},
		bodyCase{method: "PUT", path: "/api/v1/skills/" + skill.ID, token: h.admin, body: named("content", "---\nname: base\ndescription: d\n---\nbody")},
	)
	for _, c := range cases {
		h.probeRequired(c)
	}
}

// probeRequired runs one bodyCase (see TestRequiredFieldsAreWhatTheServerDemands).
func (h *harness) probeRequired(c bodyCase) {
	t := h.t
	t.Helper()
	where := c.method + " " + c.path
	if c.at != "" {
		where += " at " + c.at
	}
	schema := schemaAt(t, h.requestSchema(c.method, c.path).Value, c.at)
	required := requiredOf(schema)
	probed := objectAt(t, c.body(0), c.at)
	for _, r := range required {
		if _, ok := probed[r]; !ok {
			t.Fatalf("%s: the minimal body lacks %q, which the document requires", where, r)
		}
	}
	accepted := func(r reply) bool { return r.Status >= 200 && r.Status < 300 }
	if r := h.call(c.method, c.path, c.token, c.body(0)); !accepted(r) {
		t.Fatalf("%s: the minimal body was refused: %d %s", where, r.Status, r.Body)
	}
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range probed {
			if !yield(k) {
				return
			}
		}
	})
	for i, k := range keys {
		body := c.body(i + 1)
		delete(objectAt(t, body, c.at), k)
		r := h.call(c.method, c.path, c.token, body)
		demanded := slices.Contains(required, k) || slices.Contains(c.conditional, k)
		switch {
		case demanded && (r.Status < 400 || r.Status >= 500):
			t.Fatalf("%s: without %q the server answered %d, yet the document requires it", where, k, r.Status)
		case !demanded && !accepted(r):
			t.Fatalf("%s: without %q the server answered %d %s, yet the document does not require it", where, k, r.Status, r.Body)
		}
	}
}

// operation returns the documented operation of a request.
func (h *harness) operation(method, path string) *openapi3.Operation {
	h.t.Helper()
	req, _ := http.NewRequest(method, h.base+path, nil)
	route, _, err := h.router.FindRoute(req)
	if err != nil {
		h.t.Fatalf("%s %s is not documented: %v", method, path, err)
	}
	return route.Operation
}

// requestSchema returns the JSON body schema the document gives a request
// (a reference to its component, where it has one).
func (h *harness) requestSchema(method, path string) *openapi3.SchemaRef {
	h.t.Helper()
	op := h.operation(method, path)
	if op.RequestBody == nil {
		h.t.Fatalf("%s %s: no documented request body", method, path)
	}
	return op.RequestBody.Value.Content.Get("application/json").Schema
}

// schemaAt walks a schema down a dotted path of properties and array
// indexes, through allOf.
func schemaAt(t *testing.T, s *openapi3.Schema, path string) *openapi3.Schema {
	t.Helper()
	if path == "" {
		return s
	}
	for _, step := range strings.Split(path, ".") {
		if _, err := strconv.Atoi(step); err == nil {
			s = s.Items.Value
			continue
		}
		next := propertyOf(s, step)
		if next == nil {
			t.Fatalf("the schema has no property %q on the way to %s", step, path)
		}
		s = next
	}
	return s
}

func propertyOf(s *openapi3.Schema, name string) *openapi3.Schema {
	if p := s.Properties[name]; p != nil {
		return p.Value
	}
	for _, part := range s.AllOf {
		if p := propertyOf(part.Value, name); p != nil {
			return p
		}
	}
	return nil
}

// requiredOf lists what a schema requires, allOf parts included.
func requiredOf(s *openapi3.Schema) []string {
	out := slices.Clone(s.Required)
	for _, part := range s.AllOf {
		out = append(out, requiredOf(part.Value)...)
	}
	return out
}

// objectAt returns the object at a dotted path inside a body.
func objectAt(t *testing.T, body map[string]any, path string) map[string]any {
	t.Helper()
	var cur any = body
	if path != "" {
		for _, step := range strings.Split(path, ".") {
			switch v := cur.(type) {
			case map[string]any:
				cur = v[step]
			case []any:
				i, _ := strconv.Atoi(step)
				cur = v[i]
			}
		}
	}
	obj, ok := cur.(map[string]any)
	if !ok {
		t.Fatalf("no object at %q in %v", path, body)
	}
	return obj
}
