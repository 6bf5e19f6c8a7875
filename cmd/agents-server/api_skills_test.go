package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/agents-server/agents-server/adapters/httpapi"
	"github.com/agents-server/agents-server/adapters/llm/scripted"
)

func skillDoc(name, desc string) string {
	return "---\nname: " + name + "\ndescription: " + desc + "\n---\n# " + name + "\nDo it well.\n"
}

func TestSkillsCRUDAndTheAgentSelection(t *testing.T) {
	t.Parallel()
	h := startServer(t, testConfig(t))
	ann, bob := h.member("ann"), h.member("bob")

	var k httpapi.SkillView
	h.call("POST", "/api/v1/skills", ann, map[string]any{"content": skillDoc("release", "How we cut a release")}).
		want(t, 201).decode(t, &k)
	if k.Name != "release" || k.ModelName != "release" || k.Description != "How we cut a release" || k.Scope != "private" || k.Detached {
		t.Fatalf("created %+v", k)
	}
	d := h.call("POST", "/api/v1/skills", ann, map[string]any{"content": "# no frontmatter"}).wantErr(t, 400, "validation")
	if !strings.Contains(d.Fields["content"], "no frontmatter") {
		t.Fatalf("fields %v", d.Fields)
	}
	h.call("POST", "/api/v1/skills", ann, map[string]any{"content": skillDoc("RELEASE", "dup")}).wantErr(t, 409, "conflict")
	h.call("POST", "/api/v1/skills", ann, map[string]any{"content": skillDoc("x", "y"), "scope": "global"}).wantErr(t, 403, "forbidden")
	h.call("GET", "/api/v1/skills/"+k.ID, bob, nil).wantErr(t, 404, "not_found")

	h.call("PUT", "/api/v1/skills/"+k.ID, ann, map[string]any{"content": skillDoc("release", "Cutting a release, revised")}).
		want(t, 200).decode(t, &k)
	if k.Description != "Cutting a release, revised" {
		t.Fatalf("updated %+v", k)
	}

	// An agent selects it; while it does, the skill stays.
	agent := h.createAgent(ann, map[string]any{"name": "releaser", "model": "m", "skills": []string{k.ID}})
	if len(agent.Skills) != 1 || agent.Skills[0] != k.ID {
		t.Fatalf("agent skills %v", agent.Skills)
	}
	h.call("POST", "/api/v1/agents", bob, map[string]any{"name": "thief", "model": "m", "skills": []string{k.ID}}).
		wantErr(t, 400, "validation")
	d = h.call("DELETE", "/api/v1/skills/"+k.ID, ann, nil).wantErr(t, 409, "conflict")
	if !strings.Contains(d.Message, `"releaser"`) {
		t.Fatalf("delete refusal %q", d.Message)
	}
	h.call("DELETE", "/api/v1/agents/"+agent.ID, ann, nil).want(t, 204)

	// Published by an admin, everyone sees it.
	h.call("POST", "/api/v1/skills/"+k.ID+"/scope", h.admin, map[string]any{"scope": "global"}).want(t, 200).decode(t, &k)
	var seen []httpapi.SkillView
	h.call("GET", "/api/v1/skills", bob, nil).want(t, 200).decode(t, &seen)
	if len(seen) != 1 || seen[0].ID != k.ID || seen[0].Scope != "global" {
		t.Fatalf("bob sees %+v", seen)
	}
	h.call("DELETE", "/api/v1/skills/"+k.ID, bob, nil).wantErr(t, 403, "forbidden")
	h.call("DELETE", "/api/v1/skills/"+k.ID, ann, nil).want(t, 204)
}

func TestAnAgentReadsASkillThroughReadSkill(t *testing.T) {
	t.Parallel()
	h := startServer(t, testConfig(t))
	model, url := startScripted(t)
	tok := h.member("sk")
	p := h.createProvider(tok, protocols(url)["openai-responses"])
	var release, style httpapi.SkillView
	h.call("POST", "/api/v1/skills", tok, map[string]any{"content": skillDoc("release", "How we cut a release")}).want(t, 201).decode(t, &release)
	h.call("POST", "/api/v1/skills", tok, map[string]any{"content": skillDoc("house-style", "Our prose rules")}).want(t, 201).decode(t, &style)
	model.SetScript("sk", scripted.Script{Exchanges: []scripted.Exchange{{Steps: []scripted.Step{
		{ToolCalls: []scripted.ToolCall{{Name: "read_skill", Arguments: `{"name":"release"}`}}},
		{Text: "Following the release skill."},
	}}}})
	agent := h.createAgent(tok, map[string]any{"name": "releaser", "model": "sk", "provider_id": p.ID})
	s := h.createSession(tok, map[string]any{"agent_config_id": agent.ID})
	var run httpapi.RunView
	h.call("POST", "/api/v1/sessions/"+s.ID+"/runs", tok, map[string]any{"input": "cut 1.2"}, "Prefer", "wait=30").want(t, 200).decode(t, &run)
	if run.Status != "completed" {
		t.Fatalf("run %+v", run)
	}
	var card *httpapi.EntryView
	for _, e := range h.messages(tok, s.ID, "") {
		if e.Display != nil && e.Display.Kind == "skill" {
			card = &e
		}
	}
	if card == nil || card.Display.Title != "release" || card.Display.Extra["skill_id"] != release.ID {
		t.Fatalf("the read_skill result's card: %+v", card)
	}
	// The model's turns, not the conversation's title request.
	turns := func() []string {
		var out []string
		for _, r := range model.Requests() {
			if !strings.Contains(string(r.Body), "Title this conversation") {
				out = append(out, string(r.Body))
			}
		}
		return out
	}
	reqs := turns()
	first, second := reqs[0], reqs[1]
	// Every skill it may read is indexed (null selection), and read_skill offered.
	for _, want := range []string{"- house-style: Our prose rules", "- release: How we cut a release", `"read_skill"`} {
		if !strings.Contains(first, want) {
			t.Fatalf("the first request lacks %q: %s", want, first)
		}
	}
	if !strings.Contains(second, "Do it well.") {
		t.Fatalf("the skill's document did not reach the model: %s", second)
	}
	var ctx struct {
		Prompt struct {
			Layers map[string]int `json:"layers"`
			Tools  map[string]int `json:"tools"`
		} `json:"prompt"`
	}
	h.call("GET", "/api/v1/sessions/"+s.ID+"/context", tok, nil).want(t, 200).decode(t, &ctx)
	if ctx.Prompt.Layers["skills_index"] == 0 || ctx.Prompt.Tools["skills"] == 0 {
		t.Fatalf("context report %+v", ctx.Prompt)
	}

	// A selection narrows the index; an empty one offers no skills at all.
	h.call("PUT", "/api/v1/agents/"+agent.ID, tok, map[string]any{"name": "releaser", "model": "sk", "provider_id": p.ID,
		"skills": []string{style.ID}}).want(t, 200)
	model.SetScript("sk", scripted.Script{Exchanges: []scripted.Exchange{{Steps: []scripted.Step{{Text: "ok"}}}}})
	h.call("POST", "/api/v1/sessions/"+s.ID+"/runs", tok, map[string]any{"input": "again"}, "Prefer", "wait=30").want(t, 200)
	reqs = turns()
	last := reqs[len(reqs)-1]
	if !strings.Contains(last, "- house-style: Our prose rules") || strings.Contains(last, "- release: How we cut") {
		t.Fatalf("the selection did not narrow the index")
	}
	h.call("PUT", "/api/v1/agents/"+agent.ID, tok, map[string]any{"name": "releaser", "model": "sk", "provider_id": p.ID,
		"skills": []string{}}).want(t, 200)
	h.call("POST", "/api/v1/sessions/"+s.ID+"/runs", tok, map[string]any{"input": "once more"}, "Prefer", "wait=30").want(t, 200)
	reqs = turns()
	var offered struct {
		Instructions string
		Tools        []struct{ Name string }
	}
	if err := json.Unmarshal([]byte(reqs[len(reqs)-1]), &offered); err != nil || !strings.Contains(reqs[len(reqs)-1], "once more") {
		t.Fatalf("the last turn's request (%v): %s", err, reqs[len(reqs)-1])
	}
	if strings.Contains(offered.Instructions, "house-style") || slices.ContainsFunc(offered.Tools, func(t struct{ Name string }) bool {
		return t.Name == "read_skill"
	}) {
		t.Fatalf("an empty selection still offers skills: %+v", offered)
	}
	h.call("GET", "/api/v1/sessions/"+s.ID+"/context", tok, nil).want(t, 200).decode(t, &ctx)
	if ctx.Prompt.Layers["skills_index"] != 0 {
		t.Fatalf("context report after an empty selection %+v", ctx.Prompt)
	}
}
