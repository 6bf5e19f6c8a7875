package main

import (
	"archive/tar"
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/agents-server/agents-server/adapters/httpapi"
	"github.com/agents-server/agents-server/adapters/sandbox/e2b/e2bdouble"
	"github.com/agents-server/agents-server/internal/testenv"
	"github.com/agents-server/agents-server/ports/porttest"
)

// The e2b suites run against the E2B double (adapters/sandbox/e2b/e2bdouble):
// the service's control plane and each sandbox's daemon, served locally
// with real processes and PTYs.

const e2bKey = "e2b_00112233445566778899"

// startE2BDouble starts a double for the test (skipping, or failing under
// AGENTS_CI=1, where its processes cannot get a mount namespace).
func startE2BDouble(t *testing.T, o e2bdouble.Options) *e2bdouble.Double {
	t.Helper()
	if err := e2bdouble.Supported(); err != nil {
		testenv.Require(t, "E2B suite (API on the E2B double)", err.Error(), "run the tests as root, or enable unprivileged user namespaces")
	}
	if o.APIKey == "" {
		o.APIKey = e2bKey
	}
	d, err := e2bdouble.New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// TestSandboxToolsTerminalAndStorageOnE2B is the docker scenario against
// an E2B-compatible service: Test, a bound run through every sandbox tool,
// the terminal, stop as a pause and the next run as a resume with the
// files intact, a lease that runs out pausing the sandbox, export, the
// refused rebuild, the frozen identity, and delete killing the sandbox.
func TestSandboxToolsTerminalAndStorageOnE2B(t *testing.T) {
	t.Parallel()
	clk := porttest.NewClock(time.Now())
	d := startE2BDouble(t, e2bdouble.Options{Templates: []string{"base"}, Now: clk.Now, RequireHeaders: map[string]string{"X-Tenant": "acme"}})
	model, url := startScripted(t)
	model.SetScript("worker", workerScript())
	cfg := testConfig(t)
	cfg.E2BHTTP = d.Client()
	h := startServer(t, cfg)
	ann, bob := h.member("ann"), h.member("bob")
	config := func(edit map[string]any) map[string]any {
		c := map[string]any{"api_url": d.APIURL(), "domain": d.Domain(), "api_key": e2bKey, "template_id": "base",
			"timeout_seconds": 60, "headers": map[string]any{"X-Tenant": "acme"}}
		for k, v := range edit {
			c[k] = v
		}
		return c
	}
	sb := h.createSandbox(map[string]any{"name": "cloud", "type": "e2b", "prompt": "This sandbox has busybox and bash.", "config": config(nil)})
	if c := configOf(t, sb); c["headers"].(map[string]any)["X-Tenant"] != "********" || !sb.Supports.Runs || sb.Supports.Rebuild {
		t.Fatalf("sandbox = %+v %v", sb, c)
	}
	var probe httpapi.SandboxTestView
	h.call("POST", "/api/v1/sandboxes/"+sb.ID+"/test", h.admin, nil).want(t, 200).decode(t, &probe)
	if !probe.OK || strings.TrimSpace(probe.Output) != "ok" {
		t.Fatalf("test = %+v", probe)
	}
	// Ran but failed (the service refused the sandbox) is 200 ok:false; a
	// refused API key, like a service that cannot be reached, is 502.
	badTemplate := h.createSandbox(map[string]any{"name": "bad template", "type": "e2b", "config": config(map[string]any{"template_id": "nope"})})
	h.call("POST", "/api/v1/sandboxes/"+badTemplate.ID+"/test", h.admin, nil).want(t, 200).decode(t, &probe)
	if probe.OK || !strings.Contains(probe.Output, "nope") {
		t.Fatalf("test with an unknown template = %+v", probe)
	}
	badKey := h.createSandbox(map[string]any{"name": "bad key", "type": "e2b", "config": config(map[string]any{"api_key": "e2b_wrong"})})
	if e := h.call("POST", "/api/v1/sandboxes/"+badKey.ID+"/test", h.admin, nil).wantErr(t, 502, "upstream"); !strings.Contains(e.Message, "API key") || strings.Contains(e.Message, "e2b_wrong") {
		t.Fatalf("test with a bad key answered %q; want the key named, never shown", e.Message)
	}
	gone := h.createSandbox(map[string]any{"name": "gone", "type": "e2b", "config": config(map[string]any{"api_url": "http://127.0.0.1:1"})})
	h.call("POST", "/api/v1/sandboxes/"+gone.ID+"/test", h.admin, nil).wantErr(t, 502, "upstream")
	if len(d.Sandboxes()) != 0 {
		t.Fatalf("the tests left sandboxes: %+v", d.Sandboxes())
	}

	p, s := h.workerRun(ann, sb.ID, url)
	var state httpapi.ProjectSandboxView

	// One sandbox, recorded on the project (the admin's storage hint names
	// it), running.
	boxes := d.Sandboxes()
	if len(boxes) != 1 || boxes[0].State != "running" {
		t.Fatalf("the double holds %+v", boxes)
	}
	id := boxes[0].ID
	var listed []httpapi.ProjectView
	h.call("GET", "/api/v1/projects?all=true", h.admin, nil).want(t, 200).decode(t, &listed)
	if len(listed) != 1 || !strings.Contains(listed[0].StorageHint, id) {
		t.Fatalf("projects = %+v, want the storage hint to name sandbox %s", listed, id)
	}
	h.call("GET", "/api/v1/projects/"+p.ID+"/sandbox", ann, nil).want(t, 200).decode(t, &state)
	if state.State != "running" {
		t.Fatalf("after the run the instance is %q", state.State)
	}
	h.call("GET", "/api/v1/sandboxes/"+sb.ID+"/containers", h.admin, nil).wantErr(t, 400, "validation")
	h.call("GET", "/api/v1/projects/"+p.ID+"/export", bob, nil).wantErr(t, 404, "not_found")

	// The terminal: echoes what is typed, resizes, exits with the code.
	term, typ, pl := h.dialTerminal(ann, p.ID)
	if typ != "terminal.ready" {
		t.Fatalf("terminal answered %s %v", typ, pl)
	}
	term.typeIn("cat /workspace/notes.txt; echo sum=$((20+22))\n")
	term.expect("sum=42")
	if err := term.ws.WriteJSON(map[string]any{"type": "terminal.resize", "payload": map[string]any{"cols": 101, "rows": 33}}); err != nil {
		t.Fatal(err)
	}
	term.typeIn("stty size\n")
	term.expect("33 101")
	term.typeIn("exit 7\n")
	if typ, pl := term.control(); typ != "terminal.exit" || pl["code"] != float64(7) {
		t.Fatalf("exit = %s %v", typ, pl)
	}

	// Stop pauses the sandbox; an environment change severs nothing it
	// cannot keep (the env rides each command); the next run resumes the
	// same sandbox with the files intact.
	var stopped httpapi.ProjectStopView
	h.call("POST", "/api/v1/projects/"+p.ID+"/sandbox/stop", ann, nil).want(t, 200).decode(t, &stopped)
	if box, _ := d.Sandbox(id); !stopped.Stopped || box.State != "paused" {
		t.Fatalf("stop = %+v, sandbox %+v", stopped, box)
	}
	h.call("GET", "/api/v1/projects/"+p.ID+"/sandbox", ann, nil).want(t, 200).decode(t, &state)
	if state.State != "stopped" {
		t.Fatalf("after stop: %q", state.State)
	}
	h.call("PUT", "/api/v1/projects/"+p.ID, ann, map[string]any{"name": "tree",
		"env": []map[string]string{{"name": "MODE", "value": "second"}}}).want(t, 200)
	results, _, _ := h.runResults(ann, s.ID, map[string]any{"input": "after the change"})
	if len(results) != 1 || !strings.Contains(results[0].Output, "mode=second\nfarewell from the agent\nsame-container") {
		t.Fatalf("after stop and an env change: %+v", results)
	}
	if box, _ := d.Sandbox(id); box.State != "running" || len(d.Sandboxes()) != 1 {
		t.Fatalf("the next run did not resume the same sandbox: %+v", d.Sandboxes())
	}

	// The lease runs out: the sandbox pauses (auto_pause), the next run
	// resumes it, files intact.
	clk.Advance(5 * time.Minute)
	d.Sweep()
	if box, _ := d.Sandbox(id); box.State != "paused" {
		t.Fatalf("after the lease ran out the sandbox is %q", box.State)
	}
	results, _, _ = h.runResults(ann, s.ID, map[string]any{"input": "after the change"})
	if len(results) != 1 || !strings.Contains(results[0].Output, "farewell from the agent\nsame-container") {
		t.Fatalf("after the lease expired: %+v", results)
	}

	// Export: the owner's tar holds the tree.
	resp := h.call("GET", "/api/v1/projects/"+p.ID+"/export", ann, nil).want(t, 200)
	files := map[string]string{}
	tr := tar.NewReader(bytes.NewReader(resp.Body))
	for {
		hd, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("export is not a tar: %v", err)
		}
		b, _ := io.ReadAll(tr)
		files[strings.TrimPrefix(hd.Name, "./")] = string(b)
	}
	if files["notes.txt"] != "farewell from the agent\n" || files["docs/plan.md"] != "# Plan\nship it\n" {
		t.Fatalf("export files = %v", keys(files))
	}

	// No rebuild: the sandbox is the storage. What a resume cannot re-apply
	// is frozen while the project lives; the lease is not.
	e := h.call("POST", "/api/v1/projects/"+p.ID+"/sandbox/rebuild", ann, nil).wantErr(t, 400, "validation")
	if !strings.Contains(e.Message, "export") {
		t.Fatalf("rebuild refusal %q names no way out", e.Message)
	}
	keep := map[string]any{"api_key": "********", "headers": map[string]any{"X-Tenant": "********"}}
	for field, v := range map[string]any{"template_id": "other", "auto_pause": false, "allow_internet": true} {
		edit := map[string]any{field: v}
		for k, v := range keep {
			edit[k] = v
		}
		h.call("PUT", "/api/v1/sandboxes/"+sb.ID, h.admin, map[string]any{"name": "cloud", "type": "e2b", "config": config(edit)}).wantErr(t, 409, "conflict")
	}
	keep["timeout_seconds"] = 120
	h.call("PUT", "/api/v1/sandboxes/"+sb.ID, h.admin, map[string]any{"name": "cloud", "type": "e2b", "config": config(keep)}).want(t, 200)

	// Delete reclaims: the sandbox is killed on the service.
	h.call("DELETE", "/api/v1/sessions/"+s.ID, ann, nil).want(t, 204)
	var del httpapi.ProjectDeletedView
	h.call("DELETE", "/api/v1/projects/"+p.ID, ann, nil).want(t, 200).decode(t, &del)
	if !del.Deleted || del.StorageError != "" {
		t.Fatalf("delete = %+v", del)
	}
	if n := len(d.Sandboxes()); n != 0 {
		t.Fatalf("the delete left %d sandboxes on the service", n)
	}
}

// TestE2BHeadersAreSecretsAndValidated: header values are masked on read,
// kept by the mask, refused when malformed or reserved, and a mask with
// nothing stored is a field error.
func TestE2BHeadersAreSecretsAndValidated(t *testing.T) {
	t.Parallel()
	h := startServer(t, testConfig(t))
	sb := h.createSandbox(map[string]any{"name": "svc", "type": "e2b", "config": map[string]any{"template_id": "base",
		"headers": map[string]any{"X-Tenant": "acme", "X-Empty": nil}}})
	hd := configOf(t, sb)["headers"].(map[string]any)
	if hd["X-Tenant"] != "********" || hd["X-Empty"] != "" {
		t.Fatalf("headers read back as %v", hd)
	}
	for name, value := range map[string]any{"Bad Name": "v", "X-Api-Key": "k", "Authorization": "Bearer x", "X-Line": "a\nb"} {
		e := h.call("POST", "/api/v1/sandboxes", h.admin, map[string]any{"name": "x", "type": "e2b", "config": map[string]any{"template_id": "base",
			"headers": map[string]any{name: value}}}).wantErr(t, 400, "validation")
		if !strings.Contains(e.Message, "config.headers."+name) {
			t.Errorf("header %q refused with %q", name, e.Message)
		}
	}
	e := h.call("PUT", "/api/v1/sandboxes/"+sb.ID, h.admin, map[string]any{"name": "svc", "type": "e2b", "config": map[string]any{"template_id": "base",
		"headers": map[string]any{"X-Tenant": "********", "X-New": "********"}}}).wantErr(t, 400, "validation")
	if !strings.Contains(e.Message, "config.headers.X-New") {
		t.Errorf("a mask with nothing stored = %q", e.Message)
	}
	var got httpapi.SandboxView
	h.call("PUT", "/api/v1/sandboxes/"+sb.ID, h.admin, map[string]any{"name": "svc", "type": "e2b", "config": map[string]any{"template_id": "base",
		"headers": map[string]any{"X-Tenant": "********"}}}).want(t, 200).decode(t, &got)
	if hd := configOf(t, got)["headers"].(map[string]any); len(hd) != 1 || hd["X-Tenant"] != "********" {
		t.Errorf("after keeping one header: %v", hd)
	}
}
