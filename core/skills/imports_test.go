package skills_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/outbound"
	"github.com/agents-server/agents-server/core/secrets"
	"github.com/agents-server/agents-server/core/settings"
	"github.com/agents-server/agents-server/core/skills"
	"github.com/agents-server/agents-server/ports"
	"github.com/agents-server/agents-server/ports/porttest"
)

// web is a scripted ports.Fetcher: each URL answers with its page, or
// (for the GitHub contents API) with serve; an unknown URL is upstream,
// as a 404 is. It records every request.
type web struct {
	mu       sync.Mutex
	pages    map[string]ports.FetchResponse
	fail     map[string]error
	serve    func(ctx context.Context, url string) (ports.FetchResponse, error)
	requests []ports.FetchRequest
}

func (w *web) Fetch(ctx context.Context, req ports.FetchRequest) (ports.FetchResponse, error) {
	w.mu.Lock()
	w.requests = append(w.requests, req)
	page, ok := w.pages[req.URL]
	err := w.fail[req.URL]
	serve := w.serve
	w.mu.Unlock()
	switch {
	case err != nil:
		return ports.FetchResponse{}, err
	case ok:
		return page, nil
	case serve != nil:
		return serve(ctx, req.URL)
	}
	return ports.FetchResponse{}, errs.E(errs.Upstream, "GET %s: 404 Not Found", req.URL)
}

func (w *web) page(url, body string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.pages == nil {
		w.pages = map[string]ports.FetchResponse{}
	}
	w.pages[url] = ports.FetchResponse{Body: []byte(body)}
}

func (w *web) requested(url string) (ports.FetchRequest, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	i := slices.IndexFunc(w.requests, func(r ports.FetchRequest) bool { return r.URL == url })
	if i < 0 {
		return ports.FetchRequest{}, false
	}
	return w.requests[i], true
}

const api = "https://api.github.com/repos/acme/tools"

// repo serves acme/tools at commit sha: its tree, and each file's text
// from the contents API.
func (w *web) repo(t *testing.T, sha string, files map[string]string, extra ...map[string]any) {
	t.Helper()
	w.page(api+"/commits/HEAD", `{"sha":"`+sha+`"}`)
	tree := []map[string]any{}
	for p, body := range files {
		tree = append(tree, map[string]any{"path": p, "type": "blob", "size": len(body)})
		w.page(api+"/contents/"+strings.ReplaceAll(p, " ", "%20")+"?ref="+sha, body)
	}
	tree = append(tree, extra...)
	b, _ := json.Marshal(map[string]any{"sha": sha, "tree": tree})
	w.page(api+"/git/trees/"+sha+"?recursive=1", string(b))
}

// importWorld is an importer over in-memory stores, the real settings and
// outbound policies, and a scripted web.
type importWorld struct {
	svc      *skills.Service
	store    *porttest.ConfigStore
	im       *skills.Importer
	web      *web
	settings *settings.Service
}

func newImportWorld(t *testing.T) *importWorld {
	t.Helper()
	svc, store := setup(t)
	box, _ := secrets.NewBox(nil)
	clock := porttest.NewClock(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	st := settings.New(&porttest.SettingStore{}, box, clock)
	if _, err := st.Put(context.Background(), admin, settings.KeyOutboundAllowedHosts, "ann.lan"); err != nil {
		t.Fatal(err)
	}
	w := &importWorld{svc: svc, store: store, web: &web{}, settings: st}
	w.im = skills.NewImporter(svc, w.web, st, outbound.New(st, nil))
	return w
}

func paths(files []skills.ImportedFile) []string {
	out := []string{}
	for _, f := range files {
		out = append(out, f.Path)
	}
	return out
}

func skipped(res skills.ImportResult) map[string]string {
	out := map[string]string{}
	for _, s := range res.Skipped {
		out[s.Path] = s.Reason
	}
	return out
}

// TestAGitHubImportWalksTheRepositoryAtItsHeadCommit holds the walk: the
// HEAD commit, its whole tree, and every SKILL.md blob read through the
// API pinned to that commit, with open outbound (the GitHub API is an
// admin's setting); what cannot be a skill is skipped with the reason.
func TestAGitHubImportWalksTheRepositoryAtItsHeadCommit(t *testing.T) {
	w := newImportWorld(t)
	ctx := context.Background()
	w.web.repo(t, "c1", map[string]string{
		"SKILL.md":              doc("root", "At the top"),
		"review/SKILL.md":       doc("review", "Code review"),
		"with space/SKILL.md":   doc("spaced", "A path to escape"),
		"again/review/SKILL.md": doc("Review", "The same name again"),
		"broken/SKILL.md":       "# no frontmatter",
		"docs/README.md":        "not a skill",
	},
		map[string]any{"path": "dir/SKILL.md", "type": "tree"},
		map[string]any{"path": "big/SKILL.md", "type": "blob", "size": skills.MaxDocument + 1},
		map[string]any{"path": "cut/SKILL.md", "type": "blob", "size": 10},
	)
	w.web.pages[api+"/contents/cut/SKILL.md?ref=c1"] = ports.FetchResponse{Body: []byte("---"), Truncated: true}

	res, err := w.im.Import(ctx, ann, " https://www.github.com/acme/tools.git/ ")
	if err != nil {
		t.Fatal(err)
	}
	if res.Repo != "acme/tools" || res.SourceRepo != "https://github.com/acme/tools" || res.Commit != "c1" || res.Truncated {
		t.Fatalf("import %+v", res)
	}
	if got := paths(res.Created); !slices.Equal(got, []string{"SKILL.md", "again/review/SKILL.md", "with space/SKILL.md"}) {
		t.Fatalf("created %v (in path order, the first of a name kept)", got)
	}
	why := skipped(res)
	for p, says := range map[string]string{
		"big/SKILL.md":    "a skill holds at most 256 KiB",
		"broken/SKILL.md": "has no frontmatter",
		"cut/SKILL.md":    "larger than 256 KiB",
		"review/SKILL.md": `a second skill named "review" in this source (again/review/SKILL.md has it)`,
	} {
		if !strings.Contains(why[p], says) {
			t.Errorf("%s skipped for %q, want %q", p, why[p], says)
		}
	}
	if len(why) != 4 {
		t.Errorf("skipped %v, want only the four", why)
	}
	for _, tc := range []struct{ url, accept string }{
		{api + "/commits/HEAD", "application/vnd.github+json"},
		{api + "/git/trees/c1?recursive=1", "application/vnd.github+json"},
		{api + "/contents/with%20space/SKILL.md?ref=c1", "application/vnd.github.raw"},
	} {
		req, ok := w.web.requested(tc.url)
		if !ok || req.Headers["Accept"] != tc.accept || !req.Outbound.Open {
			t.Errorf("GET %s: %+v, %v; want Accept %s with open outbound", tc.url, req, ok, tc.accept)
		}
	}
	if req, _ := w.web.requested(api + "/contents/SKILL.md?ref=c1"); req.MaxBytes != skills.MaxDocument {
		t.Errorf("a file is read up to %d bytes, want %d", req.MaxBytes, skills.MaxDocument)
	}
	if _, ok := w.web.requested(api + "/contents/big/SKILL.md?ref=c1"); ok {
		t.Error("a file over the bound was fetched")
	}

	list, _ := w.svc.List(ctx, ann)
	if len(list) != 3 {
		t.Fatalf("stored %d skills, want 3", len(list))
	}
	k, _ := w.svc.Get(ctx, ann, res.Created[0].ID)
	if k.Scope != domain.ScopePrivate || k.RepoLabel != "acme/tools" || k.SourceRepo != res.SourceRepo || k.SourcePath != "SKILL.md" ||
		k.SourceCommit != "c1" || k.ModelName() != "acme/tools:root" || k.Detached || res.Created[0].ModelName != "acme/tools:root" {
		t.Fatalf("an imported skill %+v", k)
	}
}

// TestAReimportRefreshesItsGroupAndLeavesWhatWasEditedHere holds the
// upsert: a changed file updates its skill, an unchanged one is only
// re-pinned, a skill edited here since (detached) is left, a new file
// joins with the group's scope, and a name the source holds twice stays
// with the file the group's skill came from.
func TestAReimportRefreshesItsGroupAndLeavesWhatWasEditedHere(t *testing.T) {
	w := newImportWorld(t)
	ctx := context.Background()
	w.web.repo(t, "c1", map[string]string{
		"lint/SKILL.md":    doc("lint", "v1"),
		"release/SKILL.md": doc("release", "v1"),
		"style/SKILL.md":   doc("style", "v1"),
	})
	first, err := w.im.Import(ctx, ann, "https://github.com/acme/tools")
	if err != nil || len(first.Created) != 3 {
		t.Fatalf("first import %+v, %v", first, err)
	}
	ids := map[string]string{}
	for _, f := range first.Created {
		ids[f.Name] = f.ID
	}
	if _, err := w.svc.Update(ctx, ann, ids["style"], doc("style", "our own take")); err != nil {
		t.Fatal(err)
	}
	if _, err := w.svc.SetGroupScope(ctx, admin, "https://github.com/acme/tools", "ann", domain.ScopeGlobal); err != nil {
		t.Fatal(err)
	}

	w.web.repo(t, "c2", map[string]string{
		"a-first/SKILL.md": doc("lint", "an impostor, first in path order"),
		"lint/SKILL.md":    doc("lint", "v1"),
		"release/SKILL.md": doc("release", "v2"),
		"style/SKILL.md":   doc("style", "v2"),
		"new/SKILL.md":     doc("fresh", "v1"),
	})
	res, err := w.im.Import(ctx, ann, "https://github.com/acme/tools")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(paths(res.Updated), []string{"release/SKILL.md"}) || !slices.Equal(paths(res.Unchanged), []string{"lint/SKILL.md"}) ||
		!slices.Equal(paths(res.Created), []string{"new/SKILL.md"}) {
		t.Fatalf("updated %v, unchanged %v, created %v", paths(res.Updated), paths(res.Unchanged), paths(res.Created))
	}
	why := skipped(res)
	if !strings.Contains(why["style/SKILL.md"], "detached") || !strings.Contains(why["a-first/SKILL.md"], "(lint/SKILL.md has it)") {
		t.Fatalf("skipped %v", why)
	}
	for name, want := range map[string]string{"lint": "v1", "release": "v2", "style": "our own take"} {
		k, _ := w.svc.Get(ctx, ann, ids[name])
		if k.Description != want {
			t.Errorf("%s reads %q, want %q", name, k.Description, want)
		}
	}
	if k, _ := w.svc.Get(ctx, ann, ids["lint"]); k.SourceCommit != "c2" {
		t.Errorf("an unchanged skill is pinned to %q, want c2", k.SourceCommit)
	}
	if k, _ := w.svc.Get(ctx, bob, res.Created[0].ID); k.Scope != domain.ScopeGlobal {
		t.Errorf("a new file of a published group is %q, want global", k.Scope)
	}
}

// TestAnImportedNameTakenInTheScopeIsSkipped holds that a new file whose
// model name another skill of that scope holds is skipped, not failed.
func TestAnImportedNameTakenInTheScopeIsSkipped(t *testing.T) {
	w := newImportWorld(t)
	ctx := context.Background()
	w.web.page("https://docs.example/a/SKILL.md", doc("notes", "from a"))
	w.web.page("https://docs.example/b/SKILL.md", doc("notes", "from b"))
	if res, err := w.im.Import(ctx, ann, "https://docs.example/a/SKILL.md"); err != nil || len(res.Created) != 1 {
		t.Fatalf("the first raw import %+v, %v", res, err)
	}
	res, err := w.im.Import(ctx, ann, "https://docs.example/b/SKILL.md")
	if err != nil || len(res.Created) != 0 || !strings.Contains(skipped(res)["b/SKILL.md"], `"docs.example:notes" already exists`) {
		t.Fatalf("a second source's skill of the same label and name: %+v, %v", res, err)
	}
}

// TestARawURLIsOneSkillFetchedUnderTheCallersPolicy holds that any other
// http(s) URL is one SKILL.md, fetched under the importing person's
// outbound policy, labelled by its host.
func TestARawURLIsOneSkillFetchedUnderTheCallersPolicy(t *testing.T) {
	w := newImportWorld(t)
	ctx := context.Background()
	const raw = "https://docs.example/skills/deploy/SKILL.md"
	w.web.page(raw, doc("deploy", "How we deploy"))

	res, err := w.im.Import(ctx, ann, raw)
	if err != nil || res.Repo != "docs.example" || res.SourceRepo != raw || res.Commit != "" || !slices.Equal(paths(res.Created), []string{"skills/deploy/SKILL.md"}) {
		t.Fatalf("a raw import %+v, %v", res, err)
	}
	req, _ := w.web.requested(raw)
	if req.Outbound.Open || !slices.Equal(req.Outbound.Hosts, []string{"ann.lan"}) || req.Headers["Accept"] != "" || req.MaxBytes != skills.MaxDocument {
		t.Fatalf("a member's raw fetch %+v, want her strict policy", req)
	}
	if _, err := w.im.Import(ctx, admin, raw); err != nil {
		t.Fatal(err)
	}
	if w.web.mu.Lock(); !w.web.requests[len(w.web.requests)-1].Outbound.Open {
		t.Error("an admin's raw fetch is not open")
	}
	w.web.mu.Unlock()

	w.web.page("https://docs.example/broken.md", "no frontmatter")
	if res, err := w.im.Import(ctx, ann, "https://docs.example/broken.md"); err != nil || len(res.Created) != 0 || skipped(res)["broken.md"] == "" {
		t.Fatalf("a raw document that is no skill: %+v, %v", res, err)
	}
	if _, err := w.im.Import(ctx, ann, "https://docs.example/missing.md"); errs.CodeOf(err) != errs.Upstream {
		t.Fatalf("a raw URL that fails: %v", err)
	}
	for _, bad := range []string{"ftp://docs.example/SKILL.md", "https://", "docs.example/SKILL.md", "%zz"} {
		if _, err := w.im.Import(ctx, ann, bad); errs.FieldsOf(err)["url"] == "" {
			t.Errorf("the URL %q: %v, want a url field error", bad, err)
		}
	}
	// A github.com URL that names no repository is a raw URL.
	w.web.page("https://github.com/acme", doc("odd", "a page"))
	if res, err := w.im.Import(ctx, ann, "https://github.com/acme"); err != nil || res.Repo != "github.com" {
		t.Fatalf("a github.com URL without a repository: %+v, %v", res, err)
	}
}

// TestAGitHubAPIThatMisbehavesFailsTheImport holds that answers the walk
// cannot use are upstream errors naming what went wrong, and that nothing
// is stored then.
func TestAGitHubAPIThatMisbehavesFailsTheImport(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(w *web)
		says  string
	}{
		{"no commit", func(w *web) { w.page(api+"/commits/HEAD", `{}`) }, "named no commit"},
		{"not JSON", func(w *web) { w.page(api+"/commits/HEAD", `<html>`) }, "not the GitHub API's JSON"},
		{"a tree past the bound", func(w *web) {
			w.page(api+"/commits/HEAD", `{"sha":"c1"}`)
			w.pages[api+"/git/trees/c1?recursive=1"] = ports.FetchResponse{Body: []byte(`{"tree":[`), Truncated: true}
		}, "larger than 16 MB"},
		{"no tree", func(w *web) { w.page(api+"/commits/HEAD", `{"sha":"c1"}`) }, "404"},
		{"a file that fails", func(w *web) {
			w.page(api+"/commits/HEAD", `{"sha":"c1"}`)
			w.page(api+"/git/trees/c1?recursive=1", `{"tree":[{"path":"a/SKILL.md","type":"blob","size":10}]}`)
			w.fail = map[string]error{api + "/contents/a/SKILL.md?ref=c1": errs.E(errs.Upstream, "GET contents: 500")}
		}, "GET contents: 500"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newImportWorld(t)
			tc.setup(w.web)
			_, err := w.im.Import(context.Background(), ann, "https://github.com/acme/tools")
			if errs.CodeOf(err) != errs.Upstream || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("%v, want upstream saying %q", err, tc.says)
			}
			if list, _ := w.svc.List(context.Background(), ann); len(list) != 0 {
				t.Fatalf("a failed import stored %d skills", len(list))
			}
		})
	}
}

// TestARepositoryBringsAtMostItsMaximum holds the per-repository cap: the
// files past it, in path order, are skipped unfetched, and a tree GitHub
// cut is reported truncated.
func TestARepositoryBringsAtMostItsMaximum(t *testing.T) {
	w := newImportWorld(t)
	var tree []map[string]any
	for i := range skills.MaxPerRepo + 2 {
		tree = append(tree, map[string]any{"path": fmt.Sprintf("s%03d/SKILL.md", i), "type": "blob", "size": 100})
	}
	b, _ := json.Marshal(map[string]any{"tree": tree, "truncated": true})
	w.web.page(api+"/commits/HEAD", `{"sha":"c1"}`)
	w.web.page(api+"/git/trees/c1?recursive=1", string(b))
	w.web.serve = func(_ context.Context, url string) (ports.FetchResponse, error) {
		name := strings.TrimPrefix(strings.Split(url, "/SKILL.md")[0], api+"/contents/")
		return ports.FetchResponse{Body: []byte(doc(name, "generated"))}, nil
	}
	res, err := w.im.Import(context.Background(), ann, "https://github.com/acme/tools")
	if err != nil || len(res.Created) != skills.MaxPerRepo || !res.Truncated {
		t.Fatalf("created %d, truncated %v, %v", len(res.Created), res.Truncated, err)
	}
	why := skipped(res)
	if len(why) != 2 || !strings.Contains(why["s200/SKILL.md"], "past the 200 skills") || why["s201/SKILL.md"] == "" {
		t.Fatalf("skipped %v", why)
	}
	if _, ok := w.web.requested(api + "/contents/s200/SKILL.md?ref=c1"); ok {
		t.Fatal("a file past the cap was fetched")
	}
}

// TestAnImportedGroupMovesScopeAsOne holds SetGroupScope: a person's
// skills of one source are published (by an admin) or unpublished
// together, or not at all — refused for a name the target scope holds, or
// a shared agent the move would strand.
func TestAnImportedGroupMovesScopeAsOne(t *testing.T) {
	const source = "https://github.com/acme/tools"
	ctx := context.Background()
	w := newImportWorld(t)
	w.web.repo(t, "c1", map[string]string{"lint/SKILL.md": doc("lint", "v1"), "style/SKILL.md": doc("style", "v1")})
	if _, err := w.im.Import(ctx, ann, source); err != nil {
		t.Fatal(err)
	}
	if _, err := w.im.Import(ctx, bob, source); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		what   string
		who    domain.Principal
		source string
		owner  string
		to     domain.Scope
		want   errs.Code
	}{
		{"a member publishes her group", ann, source, "", domain.ScopeGlobal, errs.Forbidden},
		{"a source she never imported", ann, "https://github.com/acme/other", "", domain.ScopePrivate, errs.NotFound},
		{"another member's private group", ann, source, "bob", domain.ScopeGlobal, errs.NotFound},
		{"no source at all", admin, "", "", domain.ScopeGlobal, errs.NotFound},
		{"a private group made private", ann, source, "", domain.ScopePrivate, errs.Conflict},
		{"an unknown scope", ann, source, "", "public", errs.Validation},
	} {
		if _, err := w.svc.SetGroupScope(ctx, tc.who, tc.source, tc.owner, tc.to); errs.CodeOf(err) != tc.want {
			t.Errorf("%s: %v, want %s", tc.what, err, tc.want)
		}
	}

	moved, err := w.svc.SetGroupScope(ctx, admin, source, "ann", domain.ScopeGlobal)
	if err != nil || len(moved) != 2 || moved[0].Scope != domain.ScopeGlobal || moved[1].Scope != domain.ScopeGlobal {
		t.Fatalf("an admin publishes ann's group: %+v, %v", moved, err)
	}
	// Bob's copy cannot follow: its names are global now.
	if _, err := w.svc.SetGroupScope(ctx, admin, source, "bob", domain.ScopeGlobal); errs.CodeOf(err) != errs.Conflict ||
		!strings.Contains(err.Error(), "acme/tools:") {
		t.Fatalf("a second group of the same names made global: %v", err)
	}
	if list, _ := w.svc.List(ctx, bob); len(list) != 4 {
		t.Fatalf("bob sees %d skills, want ann's 2 published and his own 2", len(list))
	}

	// A shared agent selecting one holds the group global.
	agent := domain.Agent{ID: "shared", Ownership: domain.Ownership{Scope: domain.ScopeGlobal, OwnerID: "root"},
		AgentSpec: domain.AgentSpec{Name: "shared", Model: "m", Skills: []string{moved[1].ID}}}
	if err := w.store.InConfigTx(ctx, func(tx ports.ConfigTx) error { return tx.InsertAgent(ctx, agent) }); err != nil {
		t.Fatal(err)
	}
	if _, err := w.svc.SetGroupScope(ctx, ann, source, "", domain.ScopePrivate); errs.CodeOf(err) != errs.Conflict ||
		!strings.Contains(err.Error(), `"shared"`) {
		t.Fatalf("unpublish under a shared agent: %v", err)
	}
	for _, id := range []string{moved[0].ID, moved[1].ID} {
		if k, _ := w.svc.Get(ctx, ann, id); k.Scope != domain.ScopeGlobal {
			t.Fatalf("a refused move changed %s to %s", k.Name, k.Scope)
		}
	}
}

// TestAGitHubImportGoesToTheConfiguredAPI holds that the walk reaches the
// GitHub API skills_github_api_url names (a GitHub Enterprise one), with
// owner and repository escaped into its path.
func TestAGitHubImportGoesToTheConfiguredAPI(t *testing.T) {
	w := newImportWorld(t)
	ctx := context.Background()
	if _, err := w.settings.Put(ctx, admin, settings.KeySkillsGitHubAPI, "https://ghe.corp.example/api/v3/"); err != nil {
		t.Fatal(err)
	}
	const base = "https://ghe.corp.example/api/v3/repos/acme/tools%20x"
	w.web.page(base+"/commits/HEAD", `{"sha":"c9"}`)
	w.web.page(base+"/git/trees/c9?recursive=1", `{"tree":[{"path":"SKILL.md","type":"blob","size":10}]}`)
	w.web.page(base+"/contents/SKILL.md?ref=c9", doc("ops", "Runbooks"))
	res, err := w.im.Import(ctx, ann, "https://github.com/acme/tools x")
	if err != nil || res.Repo != "acme/tools x" || len(res.Created) != 1 {
		t.Fatalf("an import through the configured API: %+v, %v", res, err)
	}
}

// TestAnImportOutOfTimeKeepsWhatItFetched holds the import budget: the
// files fetched in it are stored and the rest are named as not fetched —
// the budget bounds the fetching, not the writing of its results.
func TestAnImportOutOfTimeKeepsWhatItFetched(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newImportWorld(t)
		var tree []map[string]any
		for i := range 12 {
			tree = append(tree, map[string]any{"path": fmt.Sprintf("s%02d/SKILL.md", i), "type": "blob", "size": 100})
		}
		b, _ := json.Marshal(map[string]any{"tree": tree})
		w.web.page(api+"/commits/HEAD", `{"sha":"c1"}`)
		w.web.page(api+"/git/trees/c1?recursive=1", string(b))
		// Each file takes 29 s to arrive: ten fit in the five minutes.
		w.web.serve = func(ctx context.Context, url string) (ports.FetchResponse, error) {
			select {
			case <-time.After(29 * time.Second):
			case <-ctx.Done():
				return ports.FetchResponse{}, ctx.Err()
			}
			name := strings.TrimPrefix(strings.Split(url, "/SKILL.md")[0], api+"/contents/")
			return ports.FetchResponse{Body: []byte(doc(name, "slow"))}, nil
		}
		res, err := w.im.Import(context.Background(), ann, "https://github.com/acme/tools")
		if err != nil {
			t.Fatalf("an import out of time failed whole: %v", err)
		}
		why := skipped(res)
		if len(res.Created) != 10 || len(why) != 2 || !strings.Contains(why["s11/SKILL.md"], "ran out of its 5 minutes") {
			t.Fatalf("created %d, skipped %v", len(res.Created), why)
		}
	})
}
