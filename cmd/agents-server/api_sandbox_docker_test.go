package main

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/client"

	"github.com/agents-server/agents-server/adapters/httpapi"
	"github.com/agents-server/agents-server/adapters/llm/scripted"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/internal/workbenchparts"
)

// call is a scripted model step making one tool call.
func call(name string, args map[string]any) scripted.Step {
	b, _ := json.Marshal(args)
	return scripted.Step{ToolCalls: []scripted.ToolCall{{Name: name, Arguments: string(b)}}}
}

// workerScript drives the sandbox tools, one call per model turn.
func workerScript() scripted.Script {
	return scripted.Script{Exchanges: []scripted.Exchange{
		{When: "build", Steps: []scripted.Step{
			call("write_file", map[string]any{"path": "notes.txt", "content": "hello from the agent\n"}),
			call("exec_command", map[string]any{"cmd": "cat notes.txt"}),
			call("exec_command", map[string]any{"cmd": "mkdir -p sub && cd sub && export GREETING=kept", "session_id": "main"}),
			call("exec_command", map[string]any{"cmd": "pwd; echo \"$GREETING\"; echo \"mode=$MODE\"", "session_id": "main"}),
			call("exec_command", map[string]any{"cmd": "pwd", "session_id": nil, "workdir": nil}),
			call("exec_command", map[string]any{"cmd": "head -c 100000 /dev/zero | tr '\\0' a; echo; echo END; head -c 50000 /dev/zero | tr '\\0' e >&2; exit 3"}),
			call("read_file", map[string]any{"path": "notes.txt"}),
			call("edit_file", map[string]any{"path": "notes.txt", "old_string": "hello", "new_string": "goodbye"}),
			call("list_files", map[string]any{}),
			call("apply_patch", map[string]any{"input": "*** Begin Patch\n*** Add File: docs/plan.md\n+# Plan\n+ship it\n" +
				"*** Update File: notes.txt\n@@\n-goodbye from the agent\n+farewell from the agent\n*** End Patch"}),
			call("apply_patch", map[string]any{"input": "*** Begin Patch\n*** Add File: half.txt\n+half\n" +
				"*** Update File: notes.txt\n-no such line\n+x\n*** End Patch"}),
			call("exec_command", map[string]any{"cmd": "cat notes.txt docs/plan.md; test -e half.txt && echo half-applied || echo all-or-nothing"}),
			call("exec_command", map[string]any{"cmd": "touch /root/outside-the-tree"}),
			{Text: "all done"},
		}},
		{When: "after the change", Steps: []scripted.Step{
			call("exec_command", map[string]any{"cmd": "echo \"mode=$MODE\"; cat /workspace/notes.txt; test -e /root/outside-the-tree && echo same-container || echo fresh-container"}),
			{Text: "checked"},
		}},
		{When: "trust", Steps: []scripted.Step{call("exec_command", map[string]any{"cmd": "echo one"}), {Text: "ran one"}}},
		{When: "repeat", Steps: []scripted.Step{call("exec_command", map[string]any{"cmd": "echo one"}), {Text: "ran one again"}}},
		{When: "different", Steps: []scripted.Step{call("exec_command", map[string]any{"cmd": "echo one && echo two"}), {Text: "ran two"}}},
	}}
}

// runResults runs input and returns the tool results in order, the
// progress deltas per call, and the final output.
func (h *harness) runResults(token, sessionID string, body map[string]any) ([]domain.ToolResultPayload, map[string]string, string) {
	h.t.Helper()
	run := h.startRun(token, sessionID, body)
	var results []domain.ToolResultPayload
	progress := map[string]string{}
	final := ""
	for _, ev := range h.openSSE(token, run, 0).all(h.t) {
		switch ev.Type {
		case domain.EventToolResult:
			results = append(results, payload[domain.ToolResultPayload](h.t, ev.Event))
		case domain.EventToolProgress:
			p := payload[domain.ToolProgressPayload](h.t, ev.Event)
			if p.Renderer != "terminal" || p.ToolName != "exec_command" {
				h.t.Fatalf("progress = %+v", p)
			}
			progress[p.CallID] += p.Delta
		case domain.EventOutput:
			final = string(ev.Event.Payload)
		case domain.EventError:
			h.t.Fatalf("run failed: %s", ev.Event.Payload)
		}
	}
	return results, progress, final
}

// checkWorkerResults checks what workerScript's "build it" run answered,
// the same on every sandbox type: each tool's result, the named shell
// keeping its state, the output caps, apply_patch whole or not at all.
// workerRun makes a project on the sandbox (an env value MODE=first), sees
// its instance absent before any use, then runs the worker script bound
// to it and checks every tool's result; it returns the project and the
// session.
func (h *harness) workerRun(token, sandboxID, modelURL string) (httpapi.ProjectView, httpapi.SessionView) {
	t := h.t
	t.Helper()
	p := h.createProject(token, map[string]any{"name": "tree", "sandbox_id": sandboxID,
		"env": []map[string]string{{"name": "MODE", "value": "first"}}})
	var state httpapi.ProjectSandboxView
	h.call("GET", "/api/v1/projects/"+p.ID+"/sandbox", token, nil).want(t, 200).decode(t, &state)
	if state.State != "absent" {
		t.Fatalf("before any use the instance is %q", state.State)
	}
	agent := h.agentOn(token, protocols(modelURL)["openai-responses"], map[string]any{"name": "worker", "model": "worker", "behavior": map[string]any{"max_turns": 20}})
	s := h.createSession(token, map[string]any{"agent_config_id": agent})
	results, progress, final := h.runResults(token, s.ID, map[string]any{"input": "build it", "project_id": p.ID})
	checkWorkerResults(t, results, progress, final)
	return p, s
}

func checkWorkerResults(t *testing.T, results []domain.ToolResultPayload, progress map[string]string, final string) {
	t.Helper()
	if len(results) != 13 || !strings.Contains(final, "all done") {
		t.Fatalf("%d results, final %s", len(results), final)
	}
	want := func(i int, isErr bool, parts ...string) {
		t.Helper()
		r := results[i]
		if r.IsError != isErr {
			t.Fatalf("result %d is_error=%v: %s", i, r.IsError, r.Output)
		}
		for _, part := range parts {
			if !strings.Contains(r.Output, part) {
				t.Fatalf("result %d lacks %q:\n%s", i, part, r.Output)
			}
		}
	}
	want(0, false, "Wrote 21 bytes to /workspace/notes.txt")
	want(1, false, "exit_code: 0", "stdout:\nhello from the agent")
	if results[1].Renderer != "terminal" || !strings.Contains(progress[results[1].ToolCallID], "hello from the agent") {
		t.Fatalf("exec streamed %q with renderer %q", progress[results[1].ToolCallID], results[1].Renderer)
	}
	want(3, false, "/workspace/sub\nkept\nmode=first") // the named shell kept cd and export
	want(4, false, "stdout:\n/workspace")              // a one-shot command starts at the root
	if strings.Contains(results[4].Output, "/workspace/sub") {
		t.Fatalf("a one-shot command ran in the named shell: %s", results[4].Output)
	}
	// Output caps: 32 KiB per stream, head and tail kept.
	want(5, true, "exit_code: 3", "bytes omitted", "END", "stderr:")
	if n := len(results[5].Output); n > 2*32<<10+1024 {
		t.Fatalf("capped exec output is %d bytes", n)
	}
	want(6, false, "hello from the agent")
	want(7, false, "1 replacement")
	want(8, false, "notes.txt", "sub/")
	// apply_patch: a patch applies whole, or (a hunk that does not match)
	// not at all.
	want(9, false, "A /workspace/docs/plan.md", "M /workspace/notes.txt")
	want(10, true, "notes.txt", "does not match")
	want(11, false, "farewell from the agent\n# Plan\nship it\nall-or-nothing")
}

func TestSandboxToolsTerminalAndStorageOnDocker(t *testing.T) {
	t.Parallel()
	needDocker(t)
	model, url := startScripted(t)
	model.SetScript("worker", workerScript())
	h := startServer(t, testConfig(t))
	ann, bob := h.member("ann"), h.member("bob")
	sb := h.createSandbox(map[string]any{"name": "local", "type": "docker", "prompt": "This sandbox has busybox and bash.",
		"config": map[string]any{"image": sandboxImage, "memory_mb": 256, "cpus": 1}})
	var probe httpapi.SandboxTestView
	h.call("POST", "/api/v1/sandboxes/"+sb.ID+"/test", h.admin, nil).want(t, 200).decode(t, &probe)
	if !probe.OK {
		t.Fatalf("test = %+v", probe)
	}
	p, s := h.workerRun(ann, sb.ID, url)
	var state httpapi.ProjectSandboxView

	// The instance runs after the run; the admin sees it among the
	// server's containers; a member cannot see those.
	h.call("GET", "/api/v1/projects/"+p.ID+"/sandbox", ann, nil).want(t, 200).decode(t, &state)
	if state.State != "running" {
		t.Fatalf("after the run the instance is %q", state.State)
	}
	var containers []httpapi.ContainerView
	h.call("GET", "/api/v1/sandboxes/"+sb.ID+"/containers", h.admin, nil).want(t, 200).decode(t, &containers)
	found := false
	for _, c := range containers {
		found = found || (c.ProjectID == p.ID && c.State == "running")
	}
	if !found {
		t.Fatalf("containers = %+v", containers)
	}

	// Another member reaches the project by no route, nor the terminal.
	h.call("GET", "/api/v1/projects/"+p.ID+"/export", bob, nil).wantErr(t, 404, "not_found")
	bobSession := h.createSession(bob, map[string]any{"agent_config_id": h.agentOn(bob, protocols(url)["openai-chat"], map[string]any{"name": "b", "model": "worker"})})
	h.call("POST", "/api/v1/sessions/"+bobSession.ID+"/runs", bob, map[string]any{"input": "build it", "project_id": p.ID}).wantErr(t, 400, "validation")
	if _, typ, pl := h.dialTerminal(bob, p.ID); typ != "terminal.error" || pl["code"] != "not_found" {
		t.Fatalf("bob's terminal answered %s %v", typ, pl)
	}

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

	// An environment change severs open terminals and replaces the
	// container at the next run; /workspace survives.
	term2, typ, _ := h.dialTerminal(ann, p.ID)
	if typ != "terminal.ready" {
		t.Fatalf("second terminal: %s", typ)
	}
	h.call("PUT", "/api/v1/projects/"+p.ID, ann, map[string]any{"name": "tree",
		"env": []map[string]string{{"name": "MODE", "value": "second"}}}).want(t, 200)
	if typ, _ := term2.control(); typ != "terminal.error" {
		t.Fatalf("a severed terminal answered %s", typ)
	}
	results, _, _ := h.runResults(ann, s.ID, map[string]any{"input": "after the change"})
	if len(results) != 1 || !strings.Contains(results[0].Output, "mode=second\nfarewell from the agent\nfresh-container") {
		t.Fatalf("after the env change: %+v", results)
	}

	// Export: the owner's tar holds the tree.
	resp := h.call("GET", "/api/v1/projects/"+p.ID+"/export", ann, nil).want(t, 200)
	if ct := resp.Header.Get("Content-Type"); ct != "application/x-tar" {
		t.Fatalf("export content type %q", ct)
	}
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
		files[strings.TrimPrefix(strings.TrimPrefix(hd.Name, "./"), "workspace/")] = string(b)
	}
	if files["notes.txt"] != "farewell from the agent\n" {
		t.Fatalf("export files = %v", keys(files))
	}
	if !strings.Contains(h.logs.String(), "audit: project export") {
		t.Fatal("the export was not audited")
	}

	// Stop, start; delete waits for the sessions, then removes the
	// container and the volume.
	var stopped httpapi.ProjectStopView
	h.call("POST", "/api/v1/projects/"+p.ID+"/sandbox/stop", h.admin, nil).want(t, 200).decode(t, &stopped)
	if !stopped.Stopped {
		t.Fatal("an unused instance did not stop")
	}
	h.call("GET", "/api/v1/projects/"+p.ID+"/sandbox", ann, nil).want(t, 200).decode(t, &state)
	if state.State != "stopped" {
		t.Fatalf("after stop: %q", state.State)
	}
	h.call("DELETE", "/api/v1/projects/"+p.ID, ann, nil).wantErr(t, 409, "conflict")
	h.call("DELETE", "/api/v1/sessions/"+s.ID, ann, nil).want(t, 204)
	var del httpapi.ProjectDeletedView
	h.call("DELETE", "/api/v1/projects/"+p.ID, ann, nil).want(t, 200).decode(t, &del)
	if !del.Deleted || del.StorageError != "" {
		t.Fatalf("delete = %+v", del)
	}
	api, err := client.New(client.FromEnv)
	if err != nil {
		t.Fatal(err)
	}
	defer api.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tail := strings.ReplaceAll(p.ID, "-", "")
	tail = tail[len(tail)-12:]
	if _, err := api.ContainerInspect(ctx, "agents-"+tail, client.ContainerInspectOptions{}); err == nil {
		t.Fatal("the container survived the delete")
	}
	if _, err := api.VolumeInspect(ctx, "agents-proj-"+tail, client.VolumeInspectOptions{}); err == nil {
		t.Fatal("the volume survived the delete")
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestExecCommandTrustScopesOnDocker(t *testing.T) {
	t.Parallel()
	needDocker(t)
	model, url := startScripted(t)
	model.SetScript("worker", workerScript())
	h := startServer(t, testConfig(t))
	ann := h.member("ann")
	sb := h.createSandbox(map[string]any{"name": "local", "type": "docker", "config": map[string]any{"image": sandboxImage, "memory_mb": 256}})
	p := h.createProject(ann, map[string]any{"name": "tree", "sandbox_id": sb.ID})
	agent := h.agentOn(ann, protocols(url)["anthropic"], map[string]any{"name": "careful", "model": "worker",
		"approval": map[string]any{"approve_tools": []string{"exec_command"}}})
	s := h.createSession(ann, map[string]any{"agent_config_id": agent})
	defer func() {
		h.call("DELETE", "/api/v1/sessions/"+s.ID, ann, nil).want(t, 204)
		h.call("DELETE", "/api/v1/projects/"+p.ID, ann, nil).want(t, 200)
	}()

	// The first command asks; approving it with scope same trusts exactly
	// that command for the rest of the session.
	run := h.startRun(ann, s.ID, map[string]any{"input": "trust me", "project_id": p.ID})
	sse := h.openSSE(ann, run, 0)
	untilType(t, sse, domain.EventInterrupted)
	pending := h.approvals(ann, s.ID)
	if len(pending) != 1 || !strings.Contains(string(pending[0].Arguments), "echo one") {
		t.Fatalf("pending = %+v", pending)
	}
	h.call("POST", "/api/v1/approvals/"+pending[0].ID+"/approve", ann, map[string]any{"scope": "same"}).want(t, 200)
	var ran domain.ToolResultPayload
	for _, ev := range untilType(t, sse, domain.EventOutput) {
		if ev.Type == domain.EventToolResult {
			ran = payload[domain.ToolResultPayload](t, ev.Event)
		}
	}
	sse.close()
	if !strings.Contains(ran.Output, "stdout:\none") {
		t.Fatalf("approved command result: %+v", ran)
	}

	// The identical command runs unasked.
	results, _, final := h.runResults(ann, s.ID, map[string]any{"input": "repeat it"})
	if len(results) != 1 || !strings.Contains(results[0].Output, "one") || !strings.Contains(final, "ran one again") {
		t.Fatalf("the trusted command: %+v %s", results, final)
	}
	// A different command (even one that starts the same) asks again.
	run = h.startRun(ann, s.ID, map[string]any{"input": "something different"})
	sse = h.openSSE(ann, run, 0)
	untilType(t, sse, domain.EventInterrupted)
	sse.close()
	pending = h.approvals(ann, s.ID)
	if len(pending) != 1 || !strings.Contains(string(pending[0].Arguments), "echo two") {
		t.Fatalf("pending = %+v", pending)
	}
	h.call("POST", "/api/v1/approvals/"+pending[0].ID+"/reject", ann, map[string]any{"reason": "no"}).want(t, 200)
	h.call("GET", "/api/v1/runs/"+run, ann, nil).want(t, 200)
}

func TestInstanceStopsWaitForWorkAndIdleOnesStopOnDocker(t *testing.T) {
	t.Parallel()
	needDocker(t)
	cfg := testConfig(t)
	clock := &lockedClock{now: time.Now().UTC().Truncate(time.Millisecond)}
	cfg.Clock = clock
	h := startServer(t, cfg)
	ann := h.member("ann")
	sb := h.createSandbox(map[string]any{"name": "local", "type": "docker", "config": map[string]any{"image": sandboxImage, "memory_mb": 256}})
	p := h.createProject(ann, map[string]any{"name": "tree", "sandbox_id": sb.ID})
	defer func() { h.call("DELETE", "/api/v1/projects/"+p.ID, ann, nil).want(t, 200) }()
	state := func() string {
		t.Helper()
		var v httpapi.ProjectSandboxView
		h.call("GET", "/api/v1/projects/"+p.ID+"/sandbox", ann, nil).want(t, 200).decode(t, &v)
		return v.State
	}
	h.call("PUT", "/api/v1/settings/max_terminals_per_sandbox", h.admin, map[string]string{"value": "1"}).want(t, 200)

	// A terminal holds the instance: a stop is deferred until it closes;
	// a second terminal is over the sandbox's cap.
	term, typ, pl := h.dialTerminal(ann, p.ID)
	if typ != "terminal.ready" {
		t.Fatalf("terminal: %s %v", typ, pl)
	}
	if _, typ, pl := h.dialTerminal(ann, p.ID); typ != "terminal.error" || pl["code"] != "conflict" {
		t.Fatalf("a terminal over the cap answered %s %v", typ, pl)
	}
	var stop httpapi.ProjectStopView
	h.call("POST", "/api/v1/projects/"+p.ID+"/sandbox/stop", ann, nil).want(t, 200).decode(t, &stop)
	if stop.Stopped || state() != "running" {
		t.Fatalf("a stop under a terminal = %+v, state %s", stop, state())
	}
	term.typeIn("exit 0\n")
	if typ, _ := term.control(); typ != "terminal.exit" {
		t.Fatalf("exit: %s", typ)
	}
	deadline := time.Now().Add(time.Minute)
	for state() != "stopped" {
		if time.Now().After(deadline) {
			t.Fatal("the deferred stop never happened")
		}
		time.Sleep(100 * time.Millisecond)
	}

	// Start by hand; nobody uses it for sandbox_idle_minutes: it stops.
	var started httpapi.ProjectSandboxView
	h.call("POST", "/api/v1/projects/"+p.ID+"/sandbox/start", ann, nil).want(t, 200).decode(t, &started)
	if started.State != "running" || state() != "running" {
		t.Fatalf("start = %+v", started)
	}
	ctx := context.Background()
	if n, err := workbenchparts.Of(h.app.wb).Sandboxes.SweepIdle(ctx); err != nil || n != 0 {
		t.Fatalf("a fresh instance was swept: %d %v", n, err)
	}
	clock.Add(31 * time.Minute)
	if n, err := workbenchparts.Of(h.app.wb).Sandboxes.SweepIdle(ctx); err != nil || n != 1 {
		t.Fatalf("idle sweep stopped %d: %v", n, err)
	}
	if state() != "stopped" {
		t.Fatalf("after the idle stop: %s", state())
	}
	// Rebuild gives a fresh container over the same tree.
	h.call("POST", "/api/v1/projects/"+p.ID+"/sandbox/rebuild", h.admin, nil).want(t, 200)
	if state() != "running" {
		t.Fatalf("after rebuild: %s", state())
	}
}

// An environment change while a run's command is in flight does not replace
// the container under it: other work meanwhile joins the running container
// with the new environment, and the first acquire that finds nobody
// holding it replaces the container.
func TestEnvChangeWaitsForTheWorkInFlightOnDocker(t *testing.T) {
	t.Parallel()
	needDocker(t)
	model, url := startScripted(t)
	probe := `echo "mode=$MODE"; test -e /root/marker && echo same-container || echo fresh-container`
	model.SetScript("sharer", scripted.Script{Exchanges: []scripted.Exchange{
		{When: "hold", Steps: []scripted.Step{call("exec_command", map[string]any{"cmd": "touch /root/marker; echo started; " +
			"i=0; while [ ! -e /workspace/b-done ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done; test -e /workspace/b-done && echo survived"}),
			{Text: "held"}}},
		{When: "join", Steps: []scripted.Step{call("exec_command", map[string]any{"cmd": probe + "; touch /workspace/b-done"}), {Text: "joined"}}},
		{When: "after", Steps: []scripted.Step{call("exec_command", map[string]any{"cmd": probe}), {Text: "after"}}},
	}})
	h := startServer(t, testConfig(t))
	ann := h.member("ann")
	sb := h.createSandbox(map[string]any{"name": "local", "type": "docker", "config": map[string]any{"image": sandboxImage, "memory_mb": 256}})
	p := h.createProject(ann, map[string]any{"name": "shared", "sandbox_id": sb.ID, "env": []map[string]string{{"name": "MODE", "value": "first"}}})
	agent := h.agentOn(ann, protocols(url)["openai-chat"], map[string]any{"name": "sharer", "model": "sharer"})
	var sessions []string
	for range 3 {
		sessions = append(sessions, h.createSession(ann, map[string]any{"agent_config_id": agent}).ID)
	}
	defer func() {
		for _, id := range sessions {
			h.call("DELETE", "/api/v1/sessions/"+id, ann, nil).want(t, 204)
		}
		h.call("DELETE", "/api/v1/projects/"+p.ID, ann, nil).want(t, 200)
	}()

	// A's command is running (it said so) when the environment changes.
	runA := h.startRun(ann, sessions[0], map[string]any{"input": "hold", "project_id": p.ID})
	sseA := h.openSSE(ann, runA, 0)
	untilType(t, sseA, domain.EventToolProgress)
	h.call("PUT", "/api/v1/projects/"+p.ID, ann, map[string]any{"name": "shared", "sandbox_id": sb.ID,
		"env": []map[string]string{{"name": "MODE", "value": "second"}}}).want(t, 200)

	// B joins the running container, with the new environment; A's command
	// lives on and sees B's file.
	results, _, _ := h.runResults(ann, sessions[1], map[string]any{"input": "join", "project_id": p.ID})
	if len(results) != 1 || !strings.Contains(results[0].Output, "mode=second\nsame-container") {
		t.Fatalf("work during the change: %+v", results)
	}
	var a domain.ToolResultPayload
	for _, ev := range untilType(t, sseA, domain.EventOutput) {
		if ev.Type == domain.EventToolResult {
			a = payload[domain.ToolResultPayload](t, ev.Event)
		}
	}
	sseA.close()
	if a.IsError || !strings.Contains(a.Output, "survived") {
		t.Fatalf("the command in flight: %+v", a)
	}

	// Nobody holds it now: the next run gets a new container.
	results, _, _ = h.runResults(ann, sessions[2], map[string]any{"input": "after", "project_id": p.ID})
	if len(results) != 1 || !strings.Contains(results[0].Output, "mode=second\nfresh-container") {
		t.Fatalf("after the work in flight: %+v", results)
	}
}
