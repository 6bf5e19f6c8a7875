package sandboxtools

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/sandboxes"
	"github.com/agents-server/agents-server/core/secrets"
	"github.com/agents-server/agents-server/core/settings"
	"github.com/agents-server/agents-server/ports"
	"github.com/agents-server/agents-server/ports/porttest"
)

var (
	admin = domain.Principal{User: domain.User{ID: "admin", Username: "root", Role: domain.RoleAdmin}}
	ann   = domain.Principal{User: domain.User{ID: "ann", Username: "ann", Role: domain.RoleMember}}
)

// fixture is one run's Workspace on ann's project, over a real
// sandboxes.Service on the in-memory fakes. The backend's commands run in
// a miniShell: one-shot scripts and named shells reading stdin alike.
type fixture struct {
	t       *testing.T
	svc     *sandboxes.Service
	backend *porttest.Sandbox
	project string
	ws      *Workspace

	gate     chan struct{} // the await command's
	gateOnce sync.Once
	shells   sync.WaitGroup  // named shells' processes still running
	opened   atomic.Int32    // named shells ever started
	mu       sync.Mutex      // guards deadline and kills
	deadline time.Time       // of the last one-shot command's context
	kills    []chan struct{} // of the named shells' processes
}

// newFixture builds the workspace; config is the docker sandbox's config
// ("" for just an image).
func newFixture(t *testing.T, config string) *fixture {
	t.Helper()
	ctx := context.Background()
	box, err := secrets.NewBox(nil)
	if err != nil {
		t.Fatal(err)
	}
	clock := porttest.NewClock(time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC))
	f := &fixture{t: t, backend: &porttest.Sandbox{}, gate: make(chan struct{})}
	f.backend.Commands = f.exec
	f.svc = sandboxes.New(sandboxes.Deps{Store: &porttest.ProjectStore{Sessions: &porttest.SessionStore{}}, Box: box,
		Settings: settings.New(&porttest.SettingStore{}, box, clock),
		Backends: map[string]ports.SandboxBackend{domain.SandboxDocker: f.backend}, IDs: &porttest.IDs{}, Clock: clock,
		Log: slog.New(slog.DiscardHandler)})
	sb, err := f.svc.CreateSandbox(ctx, admin, sandboxes.SandboxInput{Name: "box", Type: domain.SandboxDocker,
		Config: json.RawMessage(cmp.Or(config, `{"image":"img:1"}`))})
	if err != nil {
		t.Fatal(err)
	}
	p, err := f.svc.CreateProject(ctx, ann, sandboxes.ProjectInput{Name: "proj", SandboxID: sb.ID})
	if err != nil {
		t.Fatal(err)
	}
	f.project = p.ID
	f.ws = New(f.svc, p.ID)
	t.Cleanup(func() {
		f.ws.Teardown()
		f.waitShells()
	})
	return f
}

// exec is the backend's Commands hook: the two command shapes the tools
// send, run by a miniShell in the instance's tree.
func (f *fixture) exec(ctx context.Context, in ports.ProjectInstance, req ports.ExecRequest) (int, error) {
	sh := &miniShell{ctx: ctx, gate: f.gate, cwd: cmp.Or(req.WorkDir, workspaceRoot), vars: map[string]string{},
		stdout: req.Stdout, stderr: req.Stderr, isDir: func(dir string) bool {
			_, err := f.backend.ListFiles(ctx, in, dir, 1)
			return err == nil
		}}
	if len(req.Cmd) < 3 || req.Cmd[0] != "sh" || req.Cmd[1] != "-c" {
		return 0, errs.E(errs.Internal, "the fake runs only sh -c, not %q", req.Cmd)
	}
	switch {
	case len(req.Cmd) == 5 && strings.Contains(req.Cmd[2], `-c "$1"`):
		// sh -c '… exec bash -c "$1"' sh SCRIPT: a one-shot command.
		f.mu.Lock()
		f.deadline, _ = ctx.Deadline()
		f.mu.Unlock()
		for _, line := range strings.Split(req.Cmd[4], "\n") {
			if sh.runLine(line) {
				break
			}
		}
	case len(req.Cmd) == 3 && req.Stdin != nil && strings.Contains(req.Cmd[2], "exec sh"):
		// A shell reading its commands from stdin, until EOF or exit.
		f.shells.Add(1)
		defer f.shells.Done()
		f.opened.Add(1)
		if f.interact(sh, req.Stdin) {
			return 137, nil
		}
	default:
		return 0, errs.E(errs.Internal, "the fake does not know the command %q", req.Cmd)
	}
	if ctx.Err() != nil {
		return -1, ctx.Err()
	}
	if sh.crashed {
		return -1, errs.E(errs.Upstream, "the exec stream broke")
	}
	if sh.expired {
		return -1, context.DeadlineExceeded
	}
	return sh.rc, nil
}

// interact runs the lines a named shell reads until EOF or exit; it
// reports whether killShells killed it instead.
func (f *fixture) interact(sh *miniShell, stdin io.Reader) (killed bool) {
	kill := make(chan struct{})
	f.mu.Lock()
	f.kills = append(f.kills, kill)
	f.mu.Unlock()
	lines, quit := make(chan string), make(chan struct{})
	defer close(quit)
	go func() {
		defer close(lines)
		in := bufio.NewScanner(stdin)
		for in.Scan() {
			select {
			case lines <- in.Text():
			case <-quit:
				return
			}
		}
	}()
	for {
		select {
		case line, ok := <-lines:
			if !ok || sh.runLine(line) {
				return false
			}
		case <-kill:
			return true
		}
	}
}

// killShells ends every named shell's process while it waits for input,
// as a killed process or a restarted container would.
func (f *fixture) killShells() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, k := range f.kills {
		close(k)
	}
	f.kills = nil
}

// shellDone is closed when the workspace's named shell has ended.
func (f *fixture) shellDone(name string) <-chan struct{} {
	f.ws.mu.Lock()
	defer f.ws.mu.Unlock()
	return f.ws.shells[name].done
}

// openGate lets await commands finish.
func (f *fixture) openGate() { f.gateOnce.Do(func() { close(f.gate) }) }

// waitShells waits for every named shell's process to end.
func (f *fixture) waitShells() {
	f.t.Helper()
	done := make(chan struct{})
	go func() { f.shells.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		f.t.Fatal("a named shell's process is still running")
	}
}

// lastDeadline is the deadline of the last one-shot command's context
// (zero: it had none).
func (f *fixture) lastDeadline() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.deadline
}

// call is a tool call; args is its arguments as JSON, or a value to encode.
func call(name string, args any) domain.Item {
	raw, ok := args.(string)
	if !ok {
		b, err := json.Marshal(args)
		if err != nil {
			panic(err)
		}
		raw = string(b)
	}
	return domain.Item{Type: "function_call", CallID: "call_1", Name: name, Arguments: raw}
}

// run runs one tool call on the workspace, ignoring its progress.
func (f *fixture) run(name string, args any) Result {
	f.t.Helper()
	return f.ws.Run(f.t.Context(), call(name, args), func(string) {})
}

// seed writes files into the project's tree through a lease of its own.
func (f *fixture) seed(files map[string]string) {
	f.t.Helper()
	l, err := f.svc.Acquire(f.t.Context(), f.project, sandboxes.ForRun)
	if err != nil {
		f.t.Fatal(err)
	}
	defer l.Release()
	for p, content := range files {
		if err := l.WriteFile(f.t.Context(), p, []byte(content)); err != nil {
			f.t.Fatal(err)
		}
	}
}

// file reads a file of the tree; ok is false when it is not there.
func (f *fixture) file(p string) (string, bool) {
	f.t.Helper()
	l, err := f.svc.Acquire(f.t.Context(), f.project, sandboxes.ForRun)
	if err != nil {
		f.t.Fatal(err)
	}
	defer l.Release()
	data, err := l.ReadFile(f.t.Context(), p)
	if errs.Is(err, errs.NotFound) {
		return "", false
	}
	if err != nil {
		f.t.Fatal(err)
	}
	return string(data), true
}

// calls counts the backend calls of the given ops.
func (f *fixture) calls(ops ...string) int { return len(f.backend.Calls(ops...)) }

// check compares a result with what was wanted: its output exactly, or
// containing each of contains; whether it is an error.
type want struct {
	output   string
	contains []string
	isError  bool
}

func (w want) check(t *testing.T, r Result) {
	t.Helper()
	if r.IsError != w.isError {
		t.Errorf("IsError = %v, want %v; output:\n%s", r.IsError, w.isError, r.Output)
	}
	if w.output != "" && r.Output != w.output {
		t.Errorf("output:\n%s\nwant:\n%s", r.Output, w.output)
	}
	for _, s := range w.contains {
		if !strings.Contains(r.Output, s) {
			t.Errorf("output does not contain %q:\n%s", s, r.Output)
		}
	}
	if strings.HasPrefix(r.Output, "Error: ") && r.Display != nil {
		t.Errorf("a failed call has a display: %+v", r.Display)
	}
}
