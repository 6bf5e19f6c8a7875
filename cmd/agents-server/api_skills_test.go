package main

import (
	"strings"
	"testing"

	"github.com/agents-server/agents-server/adapters/httpapi"
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
