package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agents-server/agents-server/adapters/httpapi"
	"github.com/agents-server/agents-server/adapters/llm/scripted"
	"github.com/agents-server/agents-server/core/skills"
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

// fakeGitHub serves the GitHub REST API's shapes for one repository,
// acme/tools, at a commit the test moves.
type fakeGitHub struct {
	mu        sync.Mutex
	commit    string
	files     map[string]string // path → content, at the current commit
	truncated bool
}

func (g *fakeGitHub) set(commit string, truncated bool, files map[string]string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.commit, g.truncated, g.files = commit, truncated, files
}

func (g *fakeGitHub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	defer g.mu.Unlock()
	const repo = "/repos/acme/tools"
	switch {
	case r.URL.Path == repo+"/commits/HEAD":
		json.NewEncoder(w).Encode(map[string]string{"sha": g.commit})
	case r.URL.Path == repo+"/git/trees/"+g.commit && r.URL.Query().Get("recursive") == "1":
		type entry struct {
			Path string `json:"path"`
			Type string `json:"type"`
			Size int    `json:"size"`
		}
		tree := []entry{{Path: "skills", Type: "tree"}, {Path: "README.md", Type: "blob", Size: 10}}
		for p, c := range g.files {
			tree = append(tree, entry{Path: p, Type: "blob", Size: len(c)})
		}
		json.NewEncoder(w).Encode(map[string]any{"sha": g.commit, "tree": tree, "truncated": g.truncated})
	case strings.HasPrefix(r.URL.Path, repo+"/contents/") && r.URL.Query().Get("ref") == g.commit &&
		r.Header.Get("Accept") == "application/vnd.github.raw":
		c, ok := g.files[strings.TrimPrefix(r.URL.Path, repo+"/contents/")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, c)
	case r.URL.Path == "/raw/one/SKILL.md":
		io.WriteString(w, skillDoc("one", "A single raw skill"))
	default:
		http.NotFound(w, r)
	}
}

func TestSkillImportsFromAGitHubRepository(t *testing.T) {
	t.Parallel()
	h := startServer(t, testConfig(t))
	gh := &fakeGitHub{}
	srv := httptest.NewServer(gh)
	t.Cleanup(srv.Close)
	tok := h.member("imp")
	var me httpapi.UserView
	h.call("GET", "/api/v1/auth/me", tok, nil).want(t, 200).decode(t, &me)
	h.call("PUT", "/api/v1/settings/skills_github_api_url", h.admin, map[string]string{"value": srv.URL}).want(t, 200)
	gh.set("c1", true, map[string]string{
		"skills/release/SKILL.md":    skillDoc("release", "How we cut a release"),
		"deep/nested/style/SKILL.md": skillDoc("house-style", "Our prose rules"),
		"bad/SKILL.md":               "# no frontmatter here",
		"dup/SKILL.md":               skillDoc("release", "A second release skill"),
		"big/SKILL.md":               "---\nname: big\ndescription: too big\n---\n" + strings.Repeat("x", 256<<10),
	})
	imp := func(url string) (r skills.ImportResult) {
		t.Helper()
		h.call("POST", "/api/v1/skill-imports", tok, map[string]any{"url": url}).want(t, 200).decode(t, &r)
		return r
	}
	names := func(files []skills.ImportedFile) string {
		var out []string
		for _, f := range files {
			out = append(out, f.ModelName)
		}
		slices.Sort(out)
		return strings.Join(out, ",")
	}

	// A member's own URL may not reach the server's network; the GitHub
	// API an admin configured (here on loopback) may.
	h.setOutboundAllowPrivate(false)
	d := h.call("POST", "/api/v1/skill-imports", tok, map[string]any{"url": srv.URL + "/raw/one/SKILL.md"}).wantErr(t, 400, "validation")
	if !strings.Contains(d.Message, "outbound policy refuses 127.0.0.1") || !strings.Contains(d.Message, "outbound_allow_private") {
		t.Fatalf("private address: %s", d.Message)
	}

	r := imp("https://github.com/acme/tools")
	if r.Repo != "acme/tools" || r.Commit != "c1" || !r.Truncated || names(r.Created) != "acme/tools:house-style,acme/tools:release" {
		t.Fatalf("first import %+v", r)
	}
	reasons := map[string]string{}
	for _, s := range r.Skipped {
		reasons[s.Path] = s.Reason
	}
	// The duplicate is whichever of the two came second in the tree.
	dupPath := "dup/SKILL.md"
	if _, ok := reasons["skills/release/SKILL.md"]; ok {
		dupPath = "skills/release/SKILL.md"
	}
	if len(r.Skipped) != 3 || !strings.Contains(reasons["bad/SKILL.md"], "no frontmatter") ||
		!strings.Contains(reasons["big/SKILL.md"], "256 KiB") || !strings.Contains(reasons[dupPath], `a second skill named "release"`) {
		t.Fatalf("skipped %+v", r.Skipped)
	}

	// Again, unchanged; then upstream moves on.
	if r := imp("https://github.com/acme/tools/"); len(r.Created)+len(r.Updated) != 0 || len(r.Unchanged) != 2 {
		t.Fatalf("re-import %+v", r)
	}
	gh.set("c2", false, map[string]string{
		"skills/release/SKILL.md":    skillDoc("release", "How we cut a release, v2"),
		"deep/nested/style/SKILL.md": skillDoc("house-style", "Our prose rules"),
		"new/SKILL.md":               skillDoc("triage", "Sorting incoming bugs"),
	})
	r = imp("https://github.com/acme/tools")
	if names(r.Updated) != "acme/tools:release" || names(r.Created) != "acme/tools:triage" || names(r.Unchanged) != "acme/tools:house-style" || r.Truncated {
		t.Fatalf("after an upstream change %+v", r)
	}

	// An edit here detaches the skill: the next import leaves it.
	var list []httpapi.SkillView
	h.call("GET", "/api/v1/skills", tok, nil).want(t, 200).decode(t, &list)
	var style httpapi.SkillView
	for _, k := range list {
		if k.Name == "house-style" {
			style = k
		}
	}
	if style.SourceCommit != "c2" || style.SourcePath != "deep/nested/style/SKILL.md" || style.Detached {
		t.Fatalf("imported skill %+v", style)
	}
	h.call("PUT", "/api/v1/skills/"+style.ID, tok, map[string]any{"content": skillDoc("house-style", "Our own rules")}).
		want(t, 200).decode(t, &style)
	if !style.Detached || style.ModelName != "acme/tools:house-style" {
		t.Fatalf("edited import %+v", style)
	}
	gh.set("c3", false, map[string]string{
		"skills/release/SKILL.md":    skillDoc("release", "How we cut a release, v2"),
		"deep/nested/style/SKILL.md": skillDoc("house-style", "Upstream's newer rules"),
		"new/SKILL.md":               skillDoc("triage", "Sorting incoming bugs"),
	})
	r = imp("https://github.com/acme/tools")
	if len(r.Skipped) != 1 || !strings.Contains(r.Skipped[0].Reason, "detached") {
		t.Fatalf("import over a detached skill %+v", r)
	}
	h.call("GET", "/api/v1/skills/"+style.ID, tok, nil).want(t, 200).decode(t, &style)
	if style.Description != "Our own rules" {
		t.Fatalf("the import overwrote a detached skill: %+v", style)
	}

	// The repository's skills move scope as one group; new files follow it.
	h.call("POST", "/api/v1/skills/"+style.ID+"/scope", h.admin, map[string]any{"scope": "global"}).wantErr(t, 400, "validation")
	h.call("POST", "/api/v1/skill-repos/scope", tok, map[string]any{"source_repo": "https://github.com/acme/tools", "scope": "global"}).
		wantErr(t, 403, "forbidden")
	var moved []httpapi.SkillView
	h.call("POST", "/api/v1/skill-repos/scope", h.admin, map[string]any{"source_repo": "https://github.com/acme/tools",
		"owner_id": me.ID, "scope": "global"}).want(t, 200).decode(t, &moved)
	if len(moved) != 3 || moved[0].Scope != "global" || moved[2].Scope != "global" {
		t.Fatalf("moved %+v", moved)
	}
	gh.set("c4", false, map[string]string{
		"skills/release/SKILL.md": skillDoc("release", "How we cut a release, v2"),
		"later/SKILL.md":          skillDoc("oncall", "Being on call"),
	})
	r = imp("https://github.com/acme/tools")
	var oncall httpapi.SkillView
	h.call("GET", "/api/v1/skills/"+r.Created[0].ID, tok, nil).want(t, 200).decode(t, &oncall)
	if names(r.Created) != "acme/tools:oncall" || oncall.Scope != "global" {
		t.Fatalf("a new file after publishing %+v → %+v", r, oncall)
	}
	h.call("POST", "/api/v1/skill-repos/scope", tok, map[string]any{"source_repo": "https://github.com/nobody/none", "scope": "private"}).
		wantErr(t, 404, "not_found")

	// One raw SKILL.md is named by its host; a failing fetch is a 502.
	h.setOutboundAllowPrivate(true)
	raw := imp(srv.URL + "/raw/one/SKILL.md")
	if names(raw.Created) != "127.0.0.1:one" || raw.Commit != "" {
		t.Fatalf("raw import %+v", raw)
	}
	d = h.call("POST", "/api/v1/skill-imports", tok, map[string]any{"url": "https://github.com/acme/missing"}).wantErr(t, 502, "upstream")
	if !strings.Contains(d.Message, "404") {
		t.Fatalf("a missing repository: %s", d.Message)
	}
	h.call("POST", "/api/v1/skill-imports", tok, map[string]any{"url": "ftp://example.com/SKILL.md"}).wantErr(t, 400, "validation")
}
