package e2b

import (
	"context"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"connectrpc.com/connect"

	"github.com/agents-server/agents-server/adapters/sandbox/e2b/e2bdouble"
	"github.com/agents-server/agents-server/adapters/sandbox/e2b/gen/process"
	"github.com/agents-server/agents-server/adapters/sandbox/e2b/gen/process/processconnect"
)

// The double's sandboxes share this machine's process table, so these
// tests look for what a command left running in /proc directly. Each
// sleeps for a duration of its own: that is its marker, and parallel
// tests (or another package's) cannot mistake each other's sleeps.

// running lists the live processes whose command line is marker (a
// shell whose script merely mentions it does not count).
func running(marker string) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && strings.TrimSpace(strings.ReplaceAll(string(b), "\x00", " ")) == marker {
			out = append(out, pid)
		}
	}
	return out
}

// reapOnCleanup kills whatever still runs with one of the markers when
// the test ends, so that a failing test leaves no sleep behind (the
// double's teardown kills it too; this does not depend on it).
func reapOnCleanup(t *testing.T, markers ...string) {
	t.Cleanup(func() {
		for _, m := range markers {
			for _, pid := range running(m) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
}

// waitRunning waits (bounded) until a process with the marker runs.
func waitRunning(t *testing.T, marker string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); len(running(marker)) == 0; {
		if time.Now().After(deadline) {
			t.Fatalf("%q never started", marker)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// wantGone fails unless every process with one of the markers is gone: at
// once, or within a bounded wait for a kill already sent to land.
func wantGone(t *testing.T, what string, markers ...string) {
	t.Helper()
	var left []string
	for deadline := time.Now().Add(5 * time.Second); ; {
		left = left[:0]
		for _, m := range markers {
			if pids := running(m); len(pids) > 0 {
				left = append(left, m)
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Errorf("%s: still running: %q", what, left)
}

// TestTheDoubleSignalsTheProcessAlone keeps the double honest about
// envd: a signal reaches the process it names, not what that process
// started, and a command's stream ends when the command exits even if
// something it left behind still holds its output.
func TestTheDoubleSignalsTheProcessAlone(t *testing.T) {
	t.Parallel()
	f := newFixture(t, e2bdouble.Options{})
	in := f.instance(t, f.target())
	mustEnsure(t, f, in)
	reapOnCleanup(t, "sleep 29710", "sleep 29711")
	live, err := f.rt.connOf(ctxT(t), in)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(ctxT(t), 20*time.Second)
	defer cancel()
	no := false
	start := func(script string) *connect.ServerStreamForClient[process.StartResponse] {
		stream, err := live.proc.Start(ctx, connect.NewRequest(&process.StartRequest{
			Process: &process.ProcessConfig{Cmd: "sh", Args: []string{"-c", script}}, Stdin: &no}))
		if err != nil {
			t.Fatal(err)
		}
		return stream
	}
	// Left behind holding stdout: the stream still ends, with the exit.
	ended := start("sleep 29710 & echo hi")
	var out string
	exited := false
	for ended.Receive() {
		ev := ended.Msg().GetEvent()
		out += string(ev.GetData().GetStdout())
		if end := ev.GetEnd(); end != nil {
			exited = end.GetExited() && end.GetExitCode() == 0
		}
	}
	if !exited || out != "hi\n" || ended.Err() != nil {
		t.Errorf("a command that left a job behind: exited %v, %q, %v", exited, out, ended.Err())
	}
	// SIGKILL to a shell with a child: the child outlives it.
	killed := start("sleep 29711; echo never")
	if !killed.Receive() || killed.Msg().GetEvent().GetStart() == nil {
		t.Fatalf("no start event: %v", killed.Err())
	}
	pid := killed.Msg().GetEvent().GetStart().GetPid()
	waitRunning(t, "sleep 29711")
	signal(t, live.proc, pid)
	for killed.Receive() {
	}
	if len(running("sleep 29711")) == 0 {
		t.Errorf("the daemon's SIGKILL to a shell took its child along; envd signals the process alone")
	}
	if len(running("sleep 29710")) == 0 {
		t.Errorf("the job the command left behind was killed when it exited")
	}
	// The sandbox going away ends all it ran, whatever the process group.
	if err := f.rt.Destroy(ctxT(t), in); err != nil {
		t.Fatal(err)
	}
	wantGone(t, "after the sandbox was killed", "sleep 29710", "sleep 29711")
}

func signal(t *testing.T, proc processconnect.ProcessClient, pid uint32) {
	t.Helper()
	sel := &process.ProcessSelector{Selector: &process.ProcessSelector_Pid{Pid: pid}}
	if _, err := proc.SendSignal(ctxT(t), connect.NewRequest(&process.SendSignalRequest{Process: sel, Signal: process.Signal_SIGNAL_SIGKILL})); err != nil {
		t.Fatal(err)
	}
}
