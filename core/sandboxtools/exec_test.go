package sandboxtools

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/tools"
	"github.com/agents-server/agents-server/ports"
)

// seqOutput is what `seq n` prints.
func seqOutput(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%d\n", i)
	}
	return b.String()
}

func TestExecCommand(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "")
	f.seed(map[string]string{"sub/x.txt": ""})
	many := seqOutput(20000)
	capped := many[:execStreamCap/2] + fmt.Sprintf("\n… [%d bytes omitted] …\n", len(many)-execStreamCap) +
		strings.TrimSuffix(many[len(many)-execStreamCap/2:], "\n")
	for _, tc := range []struct {
		name    string
		args    map[string]any
		output  string
		summary string
	}{
		{"stdout", map[string]any{"cmd": "echo hello"}, "exit_code: 0\nstdout:\nhello", "exit 0"},
		{"nothing printed", map[string]any{"cmd": "true"}, "exit_code: 0", "exit 0"},
		{"both streams", map[string]any{"cmd": "echo out; echo err >&2"}, "exit_code: 0\nstdout:\nout\nstderr:\nerr", "exit 0"},
		{"stdout without a final newline", map[string]any{"cmd": "printf partial; echo oops >&2; exit 3"},
			"exit_code: 3\nstdout:\npartial\nstderr:\noops", "exit 3"},
		{"a failure", map[string]any{"cmd": "false"}, "exit_code: 1", "exit 1"},
		{"not found", map[string]any{"cmd": "frobnicate --all"},
			"exit_code: 127\nstderr:\nsh: frobnicate: command not found", "exit 127"},
		{"in /workspace by default", map[string]any{"cmd": "pwd"}, "exit_code: 0\nstdout:\n/workspace", "exit 0"},
		{"a workdir in the tree", map[string]any{"cmd": "pwd", "workdir": "sub"}, "exit_code: 0\nstdout:\n/workspace/sub", "exit 0"},
		{"an absolute workdir", map[string]any{"cmd": "pwd", "workdir": "/tmp"}, "exit_code: 0\nstdout:\n/tmp", "exit 0"},
		{"several lines", map[string]any{"cmd": "echo a\necho b\n"}, "exit_code: 0\nstdout:\na\nb", "exit 0"},
		{"stdout capped, head and tail", map[string]any{"cmd": "seq 20000"}, "exit_code: 0\nstdout:\n" + capped, "exit 0"},
		{"stderr capped apart", map[string]any{"cmd": "seq 3; seq 20000 >&2"},
			"exit_code: 0\nstdout:\n1\n2\n3\nstderr:\n" + capped, "exit 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := f.run(tools.ExecCommand, tc.args)
			want{output: tc.output, isError: tc.summary != "exit 0"}.check(t, r)
			d := r.Display
			if d == nil || d.Kind != "command" || d.Renderer != "terminal" || d.Summary != tc.summary ||
				d.Title != strings.Join(strings.Fields(tc.args["cmd"].(string)), " ") {
				t.Errorf("display %+v", d)
			}
		})
	}

	long := "echo " + strings.Repeat("a", 150)
	if d := f.run(tools.ExecCommand, map[string]any{"cmd": long}).Display; d == nil || d.Title != long[:119]+"…" {
		t.Errorf("the title of a long command: %+v", d)
	}
}

// timeout_seconds sets the command's deadline, within 1 s to an hour.
func TestExecCommandDeadline(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "")
	for _, tc := range []struct {
		timeout any
		want    time.Duration
	}{
		{nil, execDefaultTimeout * time.Second},
		{0, execDefaultTimeout * time.Second},
		{30, 30 * time.Second},
		{99999, execMaxTimeout * time.Second},
		{-5, time.Second},
	} {
		args := map[string]any{"cmd": "true"}
		if tc.timeout != nil {
			args["timeout_seconds"] = tc.timeout
		}
		r := f.run(tools.ExecCommand, args)
		// Measured after the call: a little less than it was given.
		left := time.Until(f.lastDeadline())
		if r.IsError || left > tc.want || left < tc.want-time.Minute {
			t.Errorf("timeout_seconds %v: the command had %v left, want %v (%s)", tc.timeout, left, tc.want, r.Output)
		}
	}
}

// A command over its time is abandoned, with what it printed so far.
func TestExecCommandTimesOut(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "")
	r := f.run(tools.ExecCommand, map[string]any{"cmd": "echo before; sleep 60; echo after", "timeout_seconds": 1})
	want{output: "exit_code: -1\nTimed out after 1 seconds; the command was abandoned.\nstdout:\nbefore", isError: true}.check(t, r)
	if r.Display == nil || r.Display.Summary != "exit -1" {
		t.Errorf("display %+v", r.Display)
	}
}

// A backend that says the deadline passed before the call's own context
// is done (its far end counted the deadline down from a moment of its
// own) reports the timeout, not an error.
func TestExecCommandTimesOutWhenTheBackendSeesTheDeadlineFirst(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "")
	r := f.run(tools.ExecCommand, map[string]any{"cmd": "echo before; expire", "timeout_seconds": 30})
	want{output: "exit_code: -1\nTimed out after 30 seconds; the command was abandoned.\nstdout:\nbefore", isError: true}.check(t, r)
}

// What keeps the command from running is the call's error output; a run
// whose context ends gets that, not a timeout.
func TestExecCommandFailures(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "")
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	r := f.ws.Run(ctx, call(tools.ExecCommand, map[string]any{"cmd": "sleep 60"}), func(string) {})
	want{output: "Error: context canceled", isError: true}.check(t, r)

	f.backend.Fail = func(op string, _ ports.ProjectInstance) error {
		if op == "Exec" {
			return errs.E(errs.Upstream, "the docker daemon did not answer")
		}
		return nil
	}
	want{output: "Error: the docker daemon did not answer", isError: true}.check(t, f.run(tools.ExecCommand, map[string]any{"cmd": "true"}))
	want{output: "Error: the docker daemon did not answer", isError: true}.check(t,
		f.run(tools.ExecCommand, map[string]any{"cmd": "true", "session_id": "s"}))
	f.backend.Fail = nil

	// The connection breaking mid-command is that error too; the shell
	// it broke is replaced.
	broke := "Error: the exec stream broke"
	want{output: broke, isError: true}.check(t, f.run(tools.ExecCommand, map[string]any{"cmd": "echo partial; crash"}))
	want{output: "exit_code: 0"}.check(t, f.run(tools.ExecCommand, map[string]any{"cmd": "export K=v", "session_id": "s"}))
	want{output: broke, isError: true}.check(t, f.run(tools.ExecCommand, map[string]any{"cmd": "echo partial; crash", "session_id": "s"}))
	want{output: "exit_code: 0\nstdout:\n[]"}.check(t, f.run(tools.ExecCommand, map[string]any{"cmd": `echo "[$K]"`, "session_id": "s"}))

	// A project that is gone: nothing to acquire.
	gone := New(f.svc, "no-such-project")
	defer gone.Teardown()
	for _, c := range []map[string]any{{"cmd": "true"}, {"cmd": "true", "session_id": "s"}} {
		r := gone.Run(t.Context(), call(tools.ExecCommand, c), func(string) {})
		if !r.IsError || !strings.HasPrefix(r.Output, "Error: ") {
			t.Errorf("exec without a project: %q", r.Output)
		}
	}
	for _, name := range []string{tools.ReadFile, tools.ListFiles, tools.WriteFile} {
		r := gone.Run(t.Context(), call(name, map[string]any{"path": "a", "content": ""}), func(string) {})
		if !r.IsError || !strings.HasPrefix(r.Output, "Error: ") {
			t.Errorf("%s without a project: %q", name, r.Output)
		}
	}
}

// progress receives the output while the command still runs: the command
// here waits for its first line to have been streamed.
func TestExecCommandStreamsProgress(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "")
	var mu sync.Mutex
	var deltas []string
	streamed := func() string {
		mu.Lock()
		defer mu.Unlock()
		return strings.Join(deltas, "")
	}
	progress := func(d string) {
		mu.Lock()
		deltas = append(deltas, d)
		mu.Unlock()
		if strings.Contains(streamed(), "first") {
			f.openGate()
		}
	}
	r := f.ws.Run(t.Context(), call(tools.ExecCommand, map[string]any{"cmd": "echo first; await; echo second >&2", "timeout_seconds": 5}), progress)
	want{output: "exit_code: 0\nstdout:\nfirst\nstderr:\nsecond"}.check(t, r)
	if got := streamed(); got != "first\nsecond\n" {
		t.Errorf("streamed %q", got)
	}

	// A large output streams in chunks, all of it, though the result is capped.
	mu.Lock()
	deltas = nil
	mu.Unlock()
	r = f.ws.Run(t.Context(), call(tools.ExecCommand, map[string]any{"cmd": "seq 20000"}), progress)
	mu.Lock()
	n := len(deltas)
	mu.Unlock()
	if got := streamed(); got != seqOutput(20000) || n < 2 || !strings.Contains(r.Output, "bytes omitted") {
		t.Errorf("streamed %d bytes in %d deltas", len(got), n)
	}
}

// A named shell keeps its state between calls; each session_id is its own.
func TestNamedShells(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "")
	f.seed(map[string]string{"sub/x.txt": ""})
	notFound := "sh: cd: /workspace/nope: No such file or directory"
	for _, tc := range []struct {
		session, cmd, workdir string
		output                string
		isError               bool
	}{
		{"a", "export GREETING=hi; cd sub", "", "exit_code: 0", false},
		{"a", "pwd; echo $GREETING", "", "exit_code: 0\nstdout:\n/workspace/sub\nhi", false},
		{"b", `echo "[$GREETING]"; pwd`, "", "exit_code: 0\nstdout:\n[]\n/workspace", false},
		{"b", "printf no-newline", "", "exit_code: 0\nstdout:\nno-newline", false},
		{"a", "echo out; echo err >&2; false", "", "exit_code: 1\nstdout:\nout\nstderr:\nerr", true},
		{"a", "pwd", "/workspace", "exit_code: 0\nstdout:\n/workspace", false},
		{"a", "pwd", "", "exit_code: 0\nstdout:\n/workspace", false},
		{"a", "echo never", "nope", "exit_code: 1\nstderr:\n" + notFound, true},
		{"a", "echo $GREETING\necho line two", "sub", "exit_code: 0\nstdout:\nhi\nline two", false},
	} {
		r := f.run(tools.ExecCommand, map[string]any{"cmd": tc.cmd, "session_id": tc.session, "workdir": tc.workdir})
		want{output: tc.output, isError: tc.isError}.check(t, r)
	}
	if n := f.opened.Load(); n != 2 {
		t.Errorf("%d shells opened for two sessions", n)
	}
}

// A shell that exits is reported, and the next call opens a fresh one.
func TestNamedShellExits(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "")
	steps := []struct {
		cmd, output string
		isError     bool
	}{
		{"export K=v", "exit_code: 0", false},
		{"echo before; exit 4", "exit_code: -1\nThe shell \"s\" exited; the next call with this session_id opens a fresh one.\nstdout:\nbefore", true},
		{`echo "[$K]"`, "exit_code: 0\nstdout:\n[]", false},
	}
	for _, s := range steps {
		want{output: s.output, isError: s.isError}.check(t, f.run(tools.ExecCommand, map[string]any{"cmd": s.cmd, "session_id": "s"}))
	}
	if n := f.opened.Load(); n != 2 {
		t.Errorf("%d shells opened, want 2", n)
	}

	// One that died while idle is replaced on the next call.
	want{output: "exit_code: 0"}.check(t, f.run(tools.ExecCommand, map[string]any{"cmd": "export K=w", "session_id": "s"}))
	done := f.shellDone("s")
	f.killShells()
	<-done
	want{output: "exit_code: 0\nstdout:\n[]"}.check(t, f.run(tools.ExecCommand, map[string]any{"cmd": `echo "[$K]"`, "session_id": "s"}))
	if n := f.opened.Load(); n != 3 {
		t.Errorf("%d shells opened, want 3", n)
	}
}

// A command over its time in a named shell closes that shell.
func TestNamedShellTimesOut(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "")
	want{output: "exit_code: 0"}.check(t, f.run(tools.ExecCommand, map[string]any{"cmd": "export K=v", "session_id": "s"}))
	done := f.shellDone("s")
	r := f.run(tools.ExecCommand, map[string]any{"cmd": "echo started; sleep 60", "session_id": "s", "timeout_seconds": 1})
	want{output: "exit_code: -1\nTimed out after 1 seconds; the command was abandoned. " +
		"The shell \"s\" was closed; the next call opens a fresh one.\nstdout:\nstarted", isError: true}.check(t, r)
	// The abandoned shell ends after the call returned: what it still
	// writes then (under -race) must not touch the call's capture.
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the timed-out shell was not closed")
	}
	want{output: "exit_code: 0\nstdout:\n[]"}.check(t, f.run(tools.ExecCommand, map[string]any{"cmd": `echo "[$K]"`, "session_id": "s"}))
	if n := f.opened.Load(); n != 2 {
		t.Errorf("%d shells opened, want 2", n)
	}
}

// Teardown closes the shells and lets the instance go: a stop asked while
// the run held it happens then. The workspace can be used again.
func TestTeardown(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "")
	ctx := t.Context()
	if f.ws.ProjectID() != f.project {
		t.Fatalf("project %q", f.ws.ProjectID())
	}
	if n := f.calls("Ensure"); n != 0 {
		t.Fatalf("a workspace no tool used started the instance %d time(s)", n)
	}
	want{output: "Wrote 2 bytes to /workspace/a.txt."}.check(t, f.run(tools.WriteFile, map[string]any{"path": "a.txt", "content": "hi"}))
	want{output: "exit_code: 0"}.check(t, f.run(tools.ExecCommand, map[string]any{"cmd": "export X=1", "session_id": "s"}))
	if n := f.calls("Ensure"); n != 1 {
		t.Fatalf("the instance was ensured %d times for one run", n)
	}
	if stopped, err := f.svc.Stop(ctx, ann, f.project); stopped || err != nil {
		t.Fatalf("a stop while the run holds the instance: %v, %v; want it deferred", stopped, err)
	}

	f.ws.Teardown()
	f.waitShells()
	if st, err := f.svc.State(ctx, ann, f.project); st != ports.SandboxStopped || err != nil || f.calls("Stop") != 1 {
		t.Fatalf("after teardown the instance is %s (%v), %d stops", st, err, f.calls("Stop"))
	}
	f.ws.Teardown()
	var none *Workspace
	none.Teardown()
	if n := f.calls("Stop"); n != 1 {
		t.Errorf("%d stops after teardowns of nothing", n)
	}

	// Used again, it acquires anew, and its shells start fresh.
	want{output: "exit_code: 0\nstdout:\n[]"}.check(t, f.run(tools.ExecCommand, map[string]any{"cmd": `echo "[$X]"`, "session_id": "s"}))
	want{output: "hi"}.check(t, f.run(tools.ReadFile, map[string]any{"path": "a.txt"}))
	if st, _ := f.svc.State(ctx, ann, f.project); st != ports.SandboxRunning || f.calls("Ensure") != 2 {
		t.Errorf("after reuse the instance is %s, ensured %d times", st, f.calls("Ensure"))
	}
}
