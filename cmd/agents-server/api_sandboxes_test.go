package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agents-server/agents-server/adapters/httpapi"
	"github.com/agents-server/agents-server/core/domain"
)

func (h *harness) createSandbox(body map[string]any) httpapi.SandboxView {
	h.t.Helper()
	var sb httpapi.SandboxView
	h.call("POST", "/api/v1/sandboxes", h.admin, body).want(h.t, 201).decode(h.t, &sb)
	return sb
}

func (h *harness) createProject(token string, body map[string]any) httpapi.ProjectView {
	h.t.Helper()
	var p httpapi.ProjectView
	h.call("POST", "/api/v1/projects", token, body).want(h.t, 201).decode(h.t, &p)
	return p
}

func configOf(t *testing.T, sb httpapi.SandboxView) map[string]any {
	t.Helper()
	var c map[string]any
	if err := json.Unmarshal(sb.Config, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestSandboxRowsAreStrictAdminConfiguration(t *testing.T) {
	t.Parallel()
	h := startServer(t, testConfig(t))
	member := h.member("sbm")
	docker := map[string]any{"name": "local", "type": "docker", "prompt": "Debian with busybox.",
		"config": map[string]any{"image": "agents-sandbox:test", "ssh_password": "hunter2", "bogus": 1}}

	// Host configuration: members read, only admins write.
	h.call("POST", "/api/v1/sandboxes", member, docker).wantErr(t, 403, "forbidden")
	sb := h.createSandbox(docker)
	c := configOf(t, sb)
	if c["ssh_password"] != "********" || c["image"] != "agents-sandbox:test" || c["bogus"] != nil || c["network"] != "" {
		t.Fatalf("config = %v: secrets masked, unknown keys dropped, canonical fields present", c)
	}
	if !sb.Supports.Runs || !sb.Supports.Rebuild || sb.Supports.PublicHost || sb.Revision != 1 || sb.Prompt != "Debian with busybox." {
		t.Fatalf("sandbox = %+v", sb)
	}
	var listed []httpapi.SandboxView
	h.call("GET", "/api/v1/sandboxes", member, nil).want(t, 200).decode(t, &listed)
	if len(listed) != 1 || listed[0].ID != sb.ID {
		t.Fatalf("members list %+v", listed)
	}

	// Strict config: a value of the wrong JSON type, a missing image, a bad
	// host — each a 400 naming the field, nothing stored.
	bad := func(config map[string]any, field string) {
		t.Helper()
		d := h.call("POST", "/api/v1/sandboxes", h.admin, map[string]any{"name": "bad", "type": "docker", "config": config}).
			wantErr(t, 400, "validation")
		if _, ok := d.Fields[field]; !ok {
			t.Fatalf("config %v: fields %v lack %s", config, d.Fields, field)
		}
	}
	bad(map[string]any{"image": "x", "memory_mb": "lots"}, "config.memory_mb")
	bad(map[string]any{}, "config.image")
	bad(map[string]any{"image": "x", "host": "ftp://nope"}, "config.host")
	bad(map[string]any{"image": "x", "host": "ssh://host-without-user"}, "config.host")
	h.call("POST", "/api/v1/sandboxes", h.admin, map[string]any{"name": "bad", "type": "lxc", "config": map[string]any{}}).wantErr(t, 400, "validation")
	h.call("POST", "/api/v1/sandboxes", h.admin, docker).wantErr(t, 409, "conflict")

	// The mask keeps the stored credential; revision is a compare-and-set.
	upd := map[string]any{"name": "local", "type": "docker", "revision": 1,
		"config": map[string]any{"image": "agents-sandbox:test", "ssh_password": "********", "memory_mb": 512}}
	var sb2 httpapi.SandboxView
	h.call("PUT", "/api/v1/sandboxes/"+sb.ID, h.admin, upd).want(t, 200).decode(t, &sb2)
	if sb2.Revision != 2 || configOf(t, sb2)["ssh_password"] != "********" || configOf(t, sb2)["memory_mb"] != float64(512) {
		t.Fatalf("updated = %+v %v", sb2, configOf(t, sb2))
	}
	h.call("PUT", "/api/v1/sandboxes/"+sb.ID, h.admin, upd).wantErr(t, 409, "conflict") // revision 1 is stale now
	// A masked credential does not follow the sandbox to another host.
	moved := map[string]any{"name": "local", "type": "docker",
		"config": map[string]any{"image": "agents-sandbox:test", "host": "tcp://elsewhere:2375", "ssh_password": "********"}}
	h.call("PUT", "/api/v1/sandboxes/"+sb.ID, h.admin, moved).wantErr(t, 400, "validation")

	// An E2B config is validated and stored with its secrets masked; its
	// flags say it runs, with public hosts and no rebuild, on the row and on
	// the type before any row; the container routes are docker's alone.
	// (api_sandbox_e2b_test.go runs it against the E2B double.)
	e2b := h.createSandbox(map[string]any{"name": "cloud", "type": "e2b",
		"config": map[string]any{"template_id": "base", "api_key": "e2b_secret"}})
	if ec := configOf(t, e2b); ec["api_key"] != "********" || ec["auto_pause"] != true || !e2b.Supports.PublicHost || e2b.Supports.Rebuild || !e2b.Supports.Runs {
		t.Fatalf("e2b = %+v %v", e2b, ec)
	}
	var types []httpapi.SandboxTypeView
	h.call("GET", "/api/v1/sandbox-types", member, nil).want(t, 200).decode(t, &types)
	if len(types) != 2 || types[0].Type != "docker" || types[0].Supports != sb.Supports || types[1].Type != "e2b" || types[1].Supports != e2b.Supports {
		t.Fatalf("sandbox types = %+v, want docker and e2b with their rows' flags", types)
	}
	h.call("POST", "/api/v1/sandboxes", h.admin, map[string]any{"name": "e2", "type": "e2b", "config": map[string]any{}}).wantErr(t, 400, "validation")
	h.call("GET", "/api/v1/sandboxes/"+e2b.ID+"/containers", h.admin, nil).wantErr(t, 400, "validation")
	h.call("GET", "/api/v1/sandboxes/"+sb.ID+"/containers", member, nil).wantErr(t, 403, "forbidden")

	// A project freezes the sandbox's identity and blocks its delete; its
	// content stays editable and moves the project's runtime generation.
	p := h.createProject(member, map[string]any{"name": "site", "sandbox_id": sb.ID})
	if p.Generation != 1 || p.SessionCount != 0 || p.StorageHint != "" {
		t.Fatalf("project = %+v", p)
	}
	d := h.call("PUT", "/api/v1/sandboxes/"+sb.ID, h.admin, map[string]any{"name": "local", "type": "docker",
		"config": map[string]any{"image": "agents-sandbox:test", "host": "tcp://elsewhere:2375"}}).wantErr(t, 409, "conflict")
	if !strings.Contains(d.Message, "1 project") {
		t.Fatalf("freeze message %q names no count", d.Message)
	}
	h.call("DELETE", "/api/v1/sandboxes/"+sb.ID, h.admin, nil).wantErr(t, 409, "conflict")
	h.call("PUT", "/api/v1/sandboxes/"+sb.ID, h.admin, map[string]any{"name": "local", "type": "docker", "prompt": "renamed only",
		"config": map[string]any{"image": "agents-sandbox:test", "ssh_password": "********", "memory_mb": 512}}).want(t, 200)
	var got httpapi.ProjectView
	h.call("GET", "/api/v1/projects/"+p.ID, member, nil).want(t, 200).decode(t, &got)
	if got.Generation != 1 {
		t.Fatalf("a prompt edit moved the generation: %+v", got)
	}
	h.call("PUT", "/api/v1/sandboxes/"+sb.ID, h.admin, map[string]any{"name": "local", "type": "docker",
		"config": map[string]any{"image": "agents-sandbox:other", "ssh_password": "********"}}).want(t, 200)
	h.call("GET", "/api/v1/projects/"+p.ID, member, nil).want(t, 200).decode(t, &got)
	if got.Generation != 2 {
		t.Fatalf("an image edit did not move the generation: %+v", got)
	}
	h.call("DELETE", "/api/v1/sandboxes/"+e2b.ID, h.admin, nil).want(t, 204)
}

func TestProjectsArePersonalAndBindOnce(t *testing.T) {
	t.Parallel()
	model, url := startScripted(t)
	_ = model
	h := startServer(t, testConfig(t))
	ann, bob := h.member("ann"), h.member("bob")
	sb := h.createSandbox(map[string]any{"name": "local", "type": "docker", "prompt": "Tools: busybox.",
		"config": map[string]any{"image": "agents-sandbox:test"}})
	far := h.createSandbox(map[string]any{"name": "far", "type": "docker",
		"config": map[string]any{"image": "agents-sandbox:test", "host": "tcp://far:2375"}})
	twin := h.createSandbox(map[string]any{"name": "twin", "type": "docker",
		"config": map[string]any{"image": "agents-sandbox:test", "memory_mb": 1024}})

	p := h.createProject(ann, map[string]any{"name": "site", "sandbox_id": sb.ID,
		"env": []map[string]string{{"name": "API_TOKEN", "value": "s3cret"}, {"name": "MODE", "value": "dev"}}})
	if p.Env != nil {
		t.Fatalf("a create answered the environment: %+v", p)
	}
	h.call("POST", "/api/v1/projects", ann, map[string]any{"name": "site", "sandbox_id": sb.ID}).wantErr(t, 409, "conflict")
	h.call("POST", "/api/v1/projects", ann, map[string]any{"name": "x", "sandbox_id": "nope"}).wantErr(t, 400, "validation")
	h.call("POST", "/api/v1/projects", ann, map[string]any{"name": "x", "sandbox_id": sb.ID,
		"env": []map[string]string{{"name": "1BAD", "value": "v"}}}).wantErr(t, 400, "validation")

	// Only GET /projects/:id returns the environment, masked, to the owner.
	var got httpapi.ProjectView
	h.call("GET", "/api/v1/projects/"+p.ID, ann, nil).want(t, 200).decode(t, &got)
	if got.Env == nil || len(*got.Env) != 2 || (*got.Env)[0].Value != "********" || (*got.Env)[0].Name != "API_TOKEN" {
		t.Fatalf("owner's view env = %+v", got.Env)
	}
	var adminView httpapi.ProjectView
	h.call("GET", "/api/v1/projects/"+p.ID, h.admin, nil).want(t, 200).decode(t, &adminView)
	if adminView.Env != nil || !strings.Contains(adminView.StorageHint, "agents-proj-") {
		t.Fatalf("admin view = %+v: no env, a storage hint", adminView)
	}
	var mine, all []httpapi.ProjectView
	h.call("GET", "/api/v1/projects", ann, nil).want(t, 200).decode(t, &mine)
	if len(mine) != 1 || mine[0].Env != nil || mine[0].StorageHint != "" {
		t.Fatalf("owner's list = %+v", mine)
	}
	h.call("GET", "/api/v1/projects?all=true", bob, nil).wantErr(t, 403, "forbidden")
	h.call("GET", "/api/v1/projects?all=true", h.admin, nil).want(t, 200).decode(t, &all)
	if len(all) != 1 || all[0].StorageHint == "" {
		t.Fatalf("admin's list = %+v", all)
	}

	// Another member reaches it by no route.
	var none []httpapi.ProjectView
	h.call("GET", "/api/v1/projects", bob, nil).want(t, 200).decode(t, &none)
	if len(none) != 0 {
		t.Fatalf("bob lists %+v", none)
	}
	for _, r := range [][2]string{{"GET", ""}, {"PUT", ""}, {"DELETE", ""}, {"GET", "/sandbox"}, {"POST", "/sandbox/start"},
		{"POST", "/sandbox/stop"}, {"POST", "/sandbox/rebuild"}, {"GET", "/export"}} {
		var body any
		if r[0] == "PUT" {
			body = map[string]any{"name": "mine now", "sandbox_id": sb.ID}
		}
		h.call(r[0], "/api/v1/projects/"+p.ID+r[1], bob, body).wantErr(t, 404, "not_found")
	}
	// Even an admin does not export or edit someone's tree.
	h.call("GET", "/api/v1/projects/"+p.ID+"/export", h.admin, nil).wantErr(t, 404, "not_found")
	h.call("PUT", "/api/v1/projects/"+p.ID, h.admin, map[string]any{"name": "admin's", "sandbox_id": sb.ID}).wantErr(t, 404, "not_found")

	// The mask keeps a stored value under its own name only; a changed
	// value moves the generation, a rename does not.
	upd := func(body map[string]any) httpapi.ProjectView {
		t.Helper()
		var v httpapi.ProjectView
		h.call("PUT", "/api/v1/projects/"+p.ID, ann, body).want(t, 200).decode(t, &v)
		return v
	}
	if v := upd(map[string]any{"name": "site2", "sandbox_id": sb.ID}); v.Generation != 1 || v.Revision != 2 {
		t.Fatalf("rename = %+v", v)
	}
	if v := upd(map[string]any{"name": "site2", "env": []map[string]string{{"name": "API_TOKEN", "value": "********"}, {"name": "MODE", "value": "********"}}}); v.Generation != 1 {
		t.Fatalf("sending the masks back moved the generation: %+v", v)
	}
	h.call("PUT", "/api/v1/projects/"+p.ID, ann, map[string]any{"name": "site2",
		"env": []map[string]string{{"name": "OTHER", "value": "********"}}}).wantErr(t, 400, "validation")
	if v := upd(map[string]any{"name": "site2", "env": []map[string]string{{"name": "API_TOKEN", "value": "********"}, {"name": "MODE", "value": "prod"}}}); v.Generation != 2 {
		t.Fatalf("an env change did not move the generation: %+v", v)
	}
	h.call("PUT", "/api/v1/projects/"+p.ID, ann, map[string]any{"name": "site2", "revision": 1}).wantErr(t, 409, "conflict")
	// Moves stay at one destination: the files do not travel.
	h.call("PUT", "/api/v1/projects/"+p.ID, ann, map[string]any{"name": "site2", "sandbox_id": far.ID}).wantErr(t, 409, "conflict")
	if v := upd(map[string]any{"name": "site2", "sandbox_id": twin.ID}); v.SandboxID != twin.ID || v.Generation != 3 {
		t.Fatalf("same-destination move = %+v", v)
	}
	upd(map[string]any{"name": "site2", "sandbox_id": sb.ID})

	// Binding: a foreign project is 400 and leaves the session unbound; the
	// first project-carrying run binds for ever and says so once.
	agent := h.agentOn(ann, protocols(url)["openai-responses"], map[string]any{"name": "plain", "model": "echo"})
	s := h.createSession(ann, map[string]any{"agent_config_id": agent})
	bobP := h.createProject(bob, map[string]any{"name": "bobs", "sandbox_id": sb.ID})
	h.call("POST", "/api/v1/sessions/"+s.ID+"/runs", ann, map[string]any{"input": "hi", "project_id": bobP.ID}).wantErr(t, 400, "validation")
	var sess httpapi.SessionView
	h.call("GET", "/api/v1/sessions/"+s.ID, ann, nil).want(t, 200).decode(t, &sess)
	if sess.ProjectID != "" {
		t.Fatalf("a refused bind left project %q", sess.ProjectID)
	}
	run := h.startRun(ann, s.ID, map[string]any{"input": "hi", "project_id": p.ID})
	events := h.openSSE(ann, run, 0).all(t)
	bound := 0
	for _, ev := range events {
		if ev.Type == domain.EventProjectBound {
			bound++
			if pb := payload[domain.ProjectBoundPayload](t, ev.Event); pb.ProjectID != p.ID || pb.SessionID != s.ID {
				t.Fatalf("project_bound = %+v", pb)
			}
		}
	}
	if bound != 1 || events[0].Type != domain.EventRunStarted {
		t.Fatalf("bound announced %d times; events %v", bound, events)
	}
	var r httpapi.RunView
	h.call("GET", "/api/v1/runs/"+run, ann, nil).want(t, 200).decode(t, &r)
	if r.ProjectID != p.ID {
		t.Fatalf("run = %+v", r)
	}
	// Later runs use the bound value whatever the client sends.
	other := h.createProject(ann, map[string]any{"name": "other", "sandbox_id": sb.ID})
	run2 := h.startRun(ann, s.ID, map[string]any{"input": "again", "project_id": other.ID})
	for _, ev := range h.openSSE(ann, run2, 0).all(t) {
		if ev.Type == domain.EventProjectBound {
			t.Fatal("a second bind was announced")
		}
	}
	h.call("GET", "/api/v1/sessions/"+s.ID, ann, nil).want(t, 200).decode(t, &sess)
	if sess.ProjectID != p.ID {
		t.Fatalf("session project = %q", sess.ProjectID)
	}
	// A fork inherits the binding; the sessions count, and block the delete.
	var fork httpapi.SessionView
	h.call("POST", "/api/v1/sessions/"+s.ID+"/fork", ann, nil).want(t, 201).decode(t, &fork)
	if fork.ProjectID != p.ID {
		t.Fatalf("fork project = %q", fork.ProjectID)
	}
	h.call("GET", "/api/v1/projects/"+p.ID, ann, nil).want(t, 200).decode(t, &got)
	if got.SessionCount != 2 {
		t.Fatalf("session_count = %d", got.SessionCount)
	}
	h.call("DELETE", "/api/v1/projects/"+p.ID, ann, nil).wantErr(t, 409, "conflict")
	// A project nothing binds is deleted by its owner (or an admin); its
	// storage, never created here, reports no error.
	var del httpapi.ProjectDeletedView
	h.call("DELETE", "/api/v1/projects/"+other.ID, h.admin, nil).want(t, 200).decode(t, &del)
	if !del.Deleted {
		t.Fatalf("delete = %+v", del)
	}
	h.call("GET", "/api/v1/projects/"+other.ID, ann, nil).wantErr(t, 404, "not_found")
}
