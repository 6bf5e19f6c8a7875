package sandboxes_test

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/sandboxes"
	"github.com/agents-server/agents-server/core/settings"
	"github.com/agents-server/agents-server/ports"
)

func TestAcquireRefusals(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	sb := f.dockerBox(t, "local")
	p := f.project(t, ann, "site", sb)

	_, err := f.svc.Acquire(ctx, "missing", sandboxes.ForRun)
	wantErr(t, err, errs.NotFound, "")
	d := f.deps
	d.Backends = map[string]ports.SandboxBackend{}
	_, err = sandboxes.New(d).Acquire(ctx, p.ID, sandboxes.ForRun)
	wantErr(t, err, errs.Validation, "")

	// A failed Ensure holds nothing: a stop right after is not deferred.
	down := errs.E(errs.Upstream, "daemon down")
	f.docker.Fail = func(op string, _ ports.ProjectInstance) error {
		if op == "Ensure" {
			return down
		}
		return nil
	}
	if _, err := f.svc.Acquire(ctx, p.ID, sandboxes.ForRun); !errors.Is(err, down) {
		t.Fatalf("acquire with a failing ensure: %v", err)
	}
	f.docker.Fail = nil
	if stopped, err := f.svc.Stop(ctx, ann, p.ID); !stopped || err != nil {
		t.Errorf("stop after a failed acquire = %v, %v; want an immediate stop", stopped, err)
	}
}

func TestTerminalCapCountsTerminalsPerSandbox(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	if _, err := f.settings.Put(ctx, admin, settings.KeyMaxTerminalsPerSandbox, "2"); err != nil {
		t.Fatal(err)
	}
	sb := f.dockerBox(t, "local")
	elsewhere := f.dockerBox(t, "elsewhere")
	a, b := f.project(t, ann, "a", sb), f.project(t, ann, "b", sb)
	c := f.project(t, ann, "c", elsewhere)
	acquire := func(id, purpose string) (*sandboxes.Lease, error) { return f.svc.Acquire(ctx, id, purpose) }

	t1, err := acquire(a.ID, sandboxes.ForTerminal)
	if err != nil {
		t.Fatal(err)
	}
	t2, err := acquire(b.ID, sandboxes.ForTerminal)
	if err != nil {
		t.Fatal(err)
	}
	_, err = acquire(a.ID, sandboxes.ForTerminal)
	wantErr(t, err, errs.Conflict, "")
	// Runs and other sandboxes are not counted.
	run, err := acquire(a.ID, sandboxes.ForRun)
	if err != nil {
		t.Errorf("a run over the terminal cap: %v", err)
	}
	run.Release()
	t3, err := acquire(c.ID, sandboxes.ForTerminal)
	if err != nil {
		t.Errorf("a terminal on another sandbox: %v", err)
	}
	t3.Release()
	// Released terminals free their place, once.
	t1.Release()
	t1.Release()
	t4, err := acquire(a.ID, sandboxes.ForTerminal)
	if err != nil {
		t.Fatalf("after a release: %v", err)
	}
	_, err = acquire(b.ID, sandboxes.ForTerminal)
	wantErr(t, err, errs.Conflict, "")
	t2.Release()
	t4.Release()
}

func TestStopWaitsForTheLastLease(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	sb := f.dockerBox(t, "local")
	p := f.project(t, ann, "site", sb)
	stops := func() int { return len(f.docker.Calls("Stop")) }

	_, err := f.svc.Stop(ctx, bob, p.ID)
	wantErr(t, err, errs.NotFound, "")
	// Nothing there: the backend's not_found is a stop all the same.
	if stopped, err := f.svc.Stop(ctx, admin, p.ID); !stopped || err != nil {
		t.Fatalf("stopping an absent instance = %v, %v", stopped, err)
	}

	run, err := f.svc.Acquire(ctx, p.ID, sandboxes.ForRun)
	if err != nil {
		t.Fatal(err)
	}
	term, err := f.svc.Acquire(ctx, p.ID, sandboxes.ForTerminal)
	if err != nil {
		t.Fatal(err)
	}
	before := stops()
	if stopped, err := f.svc.Stop(ctx, ann, p.ID); stopped || err != nil {
		t.Fatalf("stop while in use = %v, %v; want deferred", stopped, err)
	}
	run.Release()
	run.Release() // idempotent: the terminal still holds it
	if stops() != before {
		t.Fatal("the instance stopped while a terminal held it")
	}
	term.Release()
	if stops() != before+1 {
		t.Fatalf("the last release did not stop the instance (%d stops)", stops())
	}
	if st, _ := f.svc.State(ctx, ann, p.ID); st != ports.SandboxStopped {
		t.Errorf("state = %s", st)
	}
	// A failing stop is the caller's error.
	f.docker.Fail = func(op string, _ ports.ProjectInstance) error {
		if op == "Stop" {
			return errs.E(errs.Upstream, "daemon down")
		}
		return nil
	}
	_, err = f.svc.Stop(ctx, ann, p.ID)
	wantErr(t, err, errs.Upstream, "")
	// And a deferred one that fails is logged.
	l, _ := f.svc.Acquire(ctx, p.ID, sandboxes.ForRun)
	if stopped, _ := f.svc.Stop(ctx, ann, p.ID); stopped {
		t.Fatal("not deferred")
	}
	l.Release()
	if !contains(f.log.String(), "stopping a sandbox instance failed") {
		t.Errorf("log = %s", f.log.String())
	}
}

func TestSweepIdleStopsWhatNobodyUses(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	sb := f.dockerBox(t, "local")
	idle, busy := f.project(t, ann, "idle", sb), f.project(t, ann, "busy", sb)
	gone, vanished := f.project(t, bob, "gone", sb), f.project(t, bob, "vanished", sb)
	for _, p := range []sandboxes.Listed{idle, busy, gone, vanished} {
		l, err := f.svc.Acquire(ctx, p.ID, sandboxes.ForRun)
		if err != nil {
			t.Fatal(err)
		}
		l.Release()
	}
	held, _ := f.svc.Acquire(ctx, busy.ID, sandboxes.ForRun)
	defer held.Release()
	stopped := func() map[string]bool {
		out := map[string]bool{}
		for _, c := range f.docker.Calls("Stop") {
			out[c.In.ProjectID] = true
		}
		return out
	}

	f.clock.Advance(29 * time.Minute) // the default is 30
	if n, err := f.svc.SweepIdle(ctx); n != 0 || err != nil {
		t.Fatalf("sweep before the cutoff = %d, %v", n, err)
	}
	// Use moves the clock of an instance: a read at 29 minutes keeps idle alive.
	touch, _ := f.svc.Acquire(ctx, idle.ID, sandboxes.ForRun)
	touch.Release()
	// A row deleted behind the service's back is forgotten, not stopped.
	if err := f.store.InProjectTx(ctx, func(tx ports.ProjectTx) error { return tx.DeleteProject(ctx, vanished.ID) }); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(2 * time.Minute)
	if n, _ := f.svc.SweepIdle(ctx); n != 1 || !stopped()[gone.ID] || stopped()[vanished.ID] {
		t.Fatalf("sweep at 31 minutes stopped %d: %v; want only the untouched one", n, stopped())
	}
	// A deleted project is forgotten, not stopped.
	if _, err := f.svc.DeleteProject(ctx, bob, gone.ID); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(30 * time.Minute)
	if n, _ := f.svc.SweepIdle(ctx); n != 1 || !stopped()[idle.ID] || stopped()[busy.ID] {
		t.Fatalf("the second sweep stopped %d: %v; a held instance is never idle", n, stopped())
	}
	// Once stopped it is no longer known to run: no second stop.
	f.clock.Advance(time.Hour)
	if n, _ := f.svc.SweepIdle(ctx); n != 0 {
		t.Errorf("a stopped instance was stopped again (%d)", n)
	}
	// 0 minutes: never.
	if _, err := f.settings.Put(ctx, admin, settings.KeySandboxIdleMinutes, "0"); err != nil {
		t.Fatal(err)
	}
	held.Release()
	f.clock.Advance(24 * time.Hour)
	if n, _ := f.svc.SweepIdle(ctx); n != 0 {
		t.Errorf("idle stops are off, yet %d stopped", n)
	}
}

func TestAdoptBringsRunningInstancesUnderTheIdleStop(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	sb := f.dockerBox(t, "local")
	p := f.project(t, ann, "site", sb)
	if _, err := f.svc.CreateSandbox(ctx, admin, sandboxes.SandboxInput{Name: "cloud", Type: "e2b", Config: config("template_id", "t")}); err != nil {
		t.Fatal(err)
	}
	// A previous process left two instances running: one of a project
	// this store knows, one it does not.
	target := ports.SandboxTarget{SandboxID: sb.ID, Type: domain.SandboxDocker}
	for _, id := range []string{p.ID, "stranger"} {
		name := "agents-" + id
		if id == p.ID {
			name = p.InstanceName()
		}
		if err := f.docker.Ensure(ctx, ports.ProjectInstance{ProjectID: id, Name: name, Target: target}); err != nil {
			t.Fatal(err)
		}
	}
	f.clock.Advance(time.Hour)
	if n, _ := f.svc.SweepIdle(ctx); n != 0 {
		t.Fatalf("an unknown instance was swept (%d)", n)
	}
	if err := f.svc.Adopt(ctx); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(29 * time.Minute)
	if n, _ := f.svc.SweepIdle(ctx); n != 0 {
		t.Fatalf("an adopted instance is idle from its adoption, not before (%d)", n)
	}
	f.clock.Advance(2 * time.Minute)
	if n, _ := f.svc.SweepIdle(ctx); n != 1 {
		t.Fatalf("the adopted instance was not swept (%d)", n)
	}
	stops := f.docker.Calls("Stop")
	if len(stops) != 1 || stops[0].In.ProjectID != p.ID {
		t.Errorf("stopped %+v", stops)
	}
	// A backend that cannot list is logged and skipped.
	f.docker.Fail = func(op string, _ ports.ProjectInstance) error {
		if op == "Running" {
			return errs.E(errs.Upstream, "daemon down")
		}
		return nil
	}
	if err := f.svc.Adopt(ctx); err != nil {
		t.Errorf("adopt with a failing backend: %v", err)
	}
	if !contains(f.log.String(), "listing a sandbox's running instances failed") {
		t.Errorf("log = %s", f.log.String())
	}
}

func TestANewGenerationWaitsForTheWorkInFlight(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	sb := f.dockerBox(t, "local")
	p := f.project(t, ann, "site", sb, domain.EnvVar{Name: "MODE", Value: "dev"})
	var seen []map[string]string
	f.docker.Commands = func(_ context.Context, in ports.ProjectInstance, _ ports.ExecRequest) (int, error) {
		seen = append(seen, in.Env)
		return 0, nil
	}
	first, err := f.svc.Acquire(ctx, p.ID, sandboxes.ForRun)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.UpdateProject(ctx, ann, p.ID, sandboxes.ProjectInput{Name: "site", Env: env("MODE", "prod")}); err != nil {
		t.Fatal(err)
	}
	ensures := len(f.docker.Calls("Ensure"))
	second, err := f.svc.Acquire(ctx, p.ID, sandboxes.ForRun)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.docker.Calls("Ensure")) != ensures {
		t.Fatal("the container was ensured (replaced) under a run in flight")
	}
	if _, err := second.Exec(ctx, ports.ExecRequest{Cmd: []string{"env"}}); err != nil {
		t.Fatal(err)
	}
	if seen[0]["MODE"] != "prod" {
		t.Errorf("the joining lease's command got %v, want the new environment", seen[0])
	}
	first.Release()
	second.Release()
	third, err := f.svc.Acquire(ctx, p.ID, sandboxes.ForRun)
	if err != nil {
		t.Fatal(err)
	}
	defer third.Release()
	if f.docker.Replaced(p.InstanceName()) != 1 {
		t.Errorf("the first free acquire did not replace the container")
	}
}

func TestLeaseCallsReachTheInstance(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	sb := f.dockerBox(t, "local", "image", "img", "max_read_file_bytes", 4)
	p := f.project(t, ann, "site", sb)
	l, err := f.svc.Acquire(ctx, p.ID, sandboxes.ForRun)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	if l.Project().ID != p.ID || l.Sandbox().ID != sb.ID || l.ReadLimit() != 4 {
		t.Errorf("lease holds %s on %s, limit %d", l.Project().ID, l.Sandbox().ID, l.ReadLimit())
	}
	if err := l.WriteFile(ctx, "dir/a.txt", []byte("hello")); err != nil {
		t.Fatal(err)
	}
	var big *ports.FileTooLargeError
	if _, err := l.ReadFile(ctx, "dir/a.txt"); !errors.As(err, &big) {
		t.Errorf("a read over the sandbox's limit: %v", err)
	}
	_ = l.WriteFile(ctx, "dir/b.txt", []byte("hi"))
	if got, err := l.ReadFile(ctx, "/workspace/dir/b.txt"); string(got) != "hi" || err != nil {
		t.Errorf("read = %q, %v", got, err)
	}
	if list, err := l.ListFiles(ctx, "/workspace", 2); err != nil || len(list) != 3 {
		t.Errorf("list = %q, %v", list, err)
	}
	if err := l.RemoveFile(ctx, "dir/a.txt"); err != nil {
		t.Error(err)
	}
	_, err = l.OpenPTY(ctx, 80, 24)
	wantErr(t, err, errs.Internal, "") // the fake opens no shells
	_, err = l.Exec(ctx, ports.ExecRequest{Cmd: []string{"true"}})
	wantErr(t, err, errs.Internal, "") // nor runs commands
}

func TestStartStateRebuildExport(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	sb := f.dockerBox(t, "local")
	p := f.project(t, ann, "site", sb)

	_, err := f.svc.State(ctx, bob, p.ID)
	wantErr(t, err, errs.NotFound, "")
	if st, err := f.svc.State(ctx, admin, p.ID); st != ports.SandboxAbsent || err != nil {
		t.Fatalf("state = %s, %v", st, err)
	}
	_, err = f.svc.Start(ctx, bob, p.ID)
	wantErr(t, err, errs.NotFound, "")
	if st, err := f.svc.Start(ctx, admin, p.ID); st != ports.SandboxRunning || err != nil {
		t.Fatalf("start = %s, %v", st, err)
	}
	// Start holds nothing afterwards: a stop is immediate.
	if stopped, _ := f.svc.Stop(ctx, ann, p.ID); !stopped {
		t.Error("the stop after a start was deferred")
	}

	wantErr(t, f.svc.Rebuild(ctx, bob, p.ID), errs.NotFound, "")
	term, _ := f.svc.Acquire(ctx, p.ID, sandboxes.ForTerminal)
	if err := f.svc.Rebuild(ctx, admin, p.ID); err != nil {
		t.Fatal(err)
	}
	if !severed(term) || len(f.docker.Calls("Rebuild")) != 1 {
		t.Errorf("rebuild: severed %v, %d rebuilds", severed(term), len(f.docker.Calls("Rebuild")))
	}
	term.Release()
	f.docker.Fail = func(op string, _ ports.ProjectInstance) error {
		if op == "Rebuild" {
			return errs.E(errs.Upstream, "no image")
		}
		return nil
	}
	wantErr(t, f.svc.Rebuild(ctx, ann, p.ID), errs.Upstream, "")
	f.docker.Fail = nil
	f.docker.Caps.Rebuild = false
	wantErr(t, f.svc.Rebuild(ctx, ann, p.ID), errs.Validation, "")
	f.docker.Caps.Rebuild = true

	// Export: the owner only, audited, and the lease ends with the stream.
	_, err = f.svc.Export(ctx, admin, p.ID)
	wantErr(t, err, errs.NotFound, "")
	lease, _ := f.svc.Acquire(ctx, p.ID, sandboxes.ForRun)
	_ = lease.WriteFile(ctx, "kept.txt", []byte("tree"))
	lease.Release()
	write, err := f.svc.Export(ctx, ann, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !contains(f.log.String(), "audit: project export") {
		t.Errorf("no audit line: %s", f.log.String())
	}
	if stopped, _ := f.svc.Stop(ctx, ann, p.ID); stopped {
		t.Fatal("a stop during an export was not deferred")
	}
	var buf bytes.Buffer
	if err := write(&buf); err != nil {
		t.Fatal(err)
	}
	hdr, err := tar.NewReader(&buf).Next()
	if err != nil || hdr.Name != "kept.txt" {
		t.Errorf("export = %v, %v", hdr, err)
	}
	if st, _ := f.svc.State(ctx, ann, p.ID); st != ports.SandboxStopped {
		t.Errorf("the deferred stop did not follow the export: %s", st)
	}
}

// An instance that failed to start is not taken for a running one: the idle
// stop leaves it alone.
func TestAFailedStartIsNotIdleWork(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	sb := f.dockerBox(t, "local")
	p := f.project(t, ann, "broken", sb)
	f.docker.Fail = func(op string, in ports.ProjectInstance) error {
		if op == "Ensure" {
			return errs.E(errs.Upstream, "the daemon is away")
		}
		return nil
	}
	if _, err := f.svc.Acquire(ctx, p.ID, sandboxes.ForRun); !errs.Is(err, errs.Upstream) {
		t.Fatalf("Acquire = %v, want upstream", err)
	}
	f.clock.Advance(31 * time.Minute)
	if n, err := f.svc.SweepIdle(ctx); n != 0 || err != nil {
		t.Fatalf("the idle stop counted %d instance(s) (%v) that never started", n, err)
	}
	if calls := f.docker.Calls("Stop"); len(calls) != 0 {
		t.Fatalf("stopped an instance that never started: %+v", calls)
	}
}
