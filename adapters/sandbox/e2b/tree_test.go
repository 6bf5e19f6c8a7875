package e2b

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/agents-server/agents-server/adapters/sandbox/e2b/e2bdouble"
	"github.com/agents-server/agents-server/ports"
)

// TestATimedOutCommandLeavesNothingRunning: a command over its deadline
// is abandoned with the deadline's error, and what it started goes with
// it — the daemon signals only the process it started, so the backend
// must end the rest.
func TestATimedOutCommandLeavesNothingRunning(t *testing.T) {
	t.Parallel()
	f := newFixture(t, e2bdouble.Options{})
	in := f.instance(t, f.target())
	mustEnsure(t, f, in)
	reapOnCleanup(t, "sleep 29701", "sleep 29702")
	ctx, cancel := context.WithTimeout(ctxT(t), 2*time.Second)
	defer cancel()
	var out outBuf
	_, err := f.rt.Exec(ctx, in, ports.ExecRequest{Cmd: []string{"sh", "-c", "sleep 29701 & sleep 29702; echo never"}, Stdout: &out, Stderr: &out})
	if !errors.Is(err, context.DeadlineExceeded) || strings.Contains(out.String(), "never") {
		t.Errorf("Exec over its deadline = %v, %q; want the deadline", err, out.String())
	}
	wantGone(t, "after the timeout", "sleep 29701", "sleep 29702")
}

// TestACancelledCommandLeavesNothingRunning: a cancelled command's
// background job and foreground child go with it.
func TestACancelledCommandLeavesNothingRunning(t *testing.T) {
	t.Parallel()
	f := newFixture(t, e2bdouble.Options{})
	in := f.instance(t, f.target())
	mustEnsure(t, f, in)
	reapOnCleanup(t, "sleep 29703", "sleep 29704")
	ctx, cancel := context.WithCancel(ctxT(t))
	done := make(chan error, 1)
	go func() {
		_, err := f.rt.Exec(ctx, in, ports.ExecRequest{Cmd: []string{"sh", "-c", "sleep 29703 & sleep 29704"}, Stdout: io.Discard})
		done <- err
	}()
	waitRunning(t, "sleep 29703")
	waitRunning(t, "sleep 29704")
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled Exec = %v, want context.Canceled", err)
	}
	wantGone(t, "after the cancel", "sleep 29703", "sleep 29704")
}

// failingWriter refuses every write: the caller can no longer take the
// command's output.
type failingWriter struct{}

var errWriter = errors.New("the reader went away")

func (failingWriter) Write([]byte) (int, error) { return 0, errWriter }

// TestACommandWhoseOutputCannotBeDeliveredLeavesNothingRunning: a failing
// writer ends the command, and what it started.
func TestACommandWhoseOutputCannotBeDeliveredLeavesNothingRunning(t *testing.T) {
	t.Parallel()
	f := newFixture(t, e2bdouble.Options{})
	in := f.instance(t, f.target())
	mustEnsure(t, f, in)
	reapOnCleanup(t, "sleep 29705", "sleep 29706")
	_, err := f.rt.Exec(ctxT(t), in, ports.ExecRequest{Cmd: []string{"sh", "-c", "sleep 29705 & echo started; sleep 29706"}, Stdout: failingWriter{}})
	if !errors.Is(err, errWriter) {
		t.Errorf("Exec with a failing writer = %v, want its error", err)
	}
	wantGone(t, "after the writer failed", "sleep 29705", "sleep 29706")
}

// TestADeadlineTheDaemonReachesFirstIsTheTimeout: the deadline the call
// forwards may end the stream on the daemon's side a moment before the
// caller's context is done — with deadline_exceeded, or with the killed
// command's end event when that wins the race; either is the timeout, not
// a daemon failure nor an exit, and the command's tree goes as with any
// timeout.
func TestADeadlineTheDaemonReachesFirstIsTheTimeout(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name          string
		sendsEnd      bool
		first, second string
	}{
		{"the stream ends deadline_exceeded", false, "sleep 29707", "sleep 29708"},
		{"the end event comes first", true, "sleep 29720", "sleep 29721"},
	} {
		first, second, sendsEnd := c.first, c.second, c.sendsEnd
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, e2bdouble.Options{DeadlineLead: time.Second, DeadlineSendsEnd: sendsEnd})
			in := f.instance(t, f.target())
			mustEnsure(t, f, in)
			reapOnCleanup(t, first, second)
			ctx, cancel := context.WithTimeout(ctxT(t), 3*time.Second)
			defer cancel()
			_, err := f.rt.Exec(ctx, in, ports.ExecRequest{Cmd: []string{"sh", "-c", first + " & " + second + "; echo never"}, Stdout: io.Discard})
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("Exec whose deadline the daemon reached first = %v, want the deadline", err)
			}
			wantGone(t, "after the daemon's deadline", first, second)
		})
	}
}

// TestAClosedTerminalLeavesNothingRunning: closing a terminal ends the
// shell's background jobs too, not only the shell.
func TestAClosedTerminalLeavesNothingRunning(t *testing.T) {
	t.Parallel()
	f := newFixture(t, e2bdouble.Options{})
	in := f.instance(t, f.target())
	mustEnsure(t, f, in)
	reapOnCleanup(t, "sleep 29709")
	term, err := f.rt.OpenPTY(ctxT(t), in, 80, 24)
	if err != nil {
		t.Fatal(err)
	}
	go func() { _, _ = io.Copy(io.Discard, term) }()
	if _, err := term.Write([]byte("sleep 29709 &\n")); err != nil {
		t.Fatal(err)
	}
	waitRunning(t, "sleep 29709")
	if err := term.Close(); err != nil {
		t.Fatal(err)
	}
	wantGone(t, "after the terminal closed", "sleep 29709")
}
