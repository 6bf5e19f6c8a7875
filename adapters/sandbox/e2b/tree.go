package e2b

import (
	"context"
	"errors"
	"strconv"
	"time"

	"connectrpc.com/connect"

	"github.com/agents-server/agents-server/adapters/sandbox/e2b/gen/process"
)

// The daemon signals the process it started and nothing else, and a
// command it starts without a PTY stays in the daemon's own process group
// and session: a command killed through it leaves its children running. So each
// command leads a session of its own, and a kill ends that session —
// found in the sandbox's /proc — besides the command.

// ownSession runs "$@" as the leader of a new session when sh is not a
// process-group leader already: setsid(1) then calls setsid() and execs in
// place, so the pid the daemon reports is the session's id. Under a
// daemon that does make each process a group leader, setsid would fork
// instead: the command runs as it is and is found by its group. Without
// setsid it runs as it is too, and only it is killed.
var ownSession = []string{"-c", `if read -r s 2>/dev/null </proc/$$/stat; then
s=${s##*) }; s=${s#* * }
if [ "${s%% *}" != "$$" ] && command -v setsid >/dev/null 2>&1; then exec setsid "$@"; fi
fi
exec "$@"`, "sh"}

// killSession SIGKILLs every live process whose session or process group
// is $1 (fields 3 and 4 of /proc/N/stat after the command name), pass
// after pass until one finds none: a process may fork while a pass runs.
const killSession = `sid=$1
for pass in 1 2 3 4 5 6 7 8 9 10; do
hit=
for d in /proc/[0-9]*; do
read -r s 2>/dev/null <"$d/stat" || continue
set -- ${s##*) }
[ "$1" != Z ] || continue
if [ "$3" = "$sid" ] || [ "$4" = "$sid" ]; then kill -9 "${d#/proc/}" 2>/dev/null && hit=1; fi
done
[ -n "$hit" ] || exit 0
done`

// wrapped is a command as the daemon is asked to start it: under sh,
// leading a session of its own.
func wrapped(cmd []string) (string, []string) {
	return "/bin/sh", append(append([]string{}, ownSession...), cmd...)
}

// killTree ends a command its caller gave up on, and everything in its
// session: the command first, through the daemon, then the rest with a
// kill run in the sandbox. It has a context of its own: the caller's is
// usually the one that just ended.
func (c *conn) killTree(pid uint32) {
	if pid == 0 {
		return // never started; and session 0 is the kernel's
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	c.kill(ctx, pid)
	no := false
	stream, err := c.proc.Start(ctx, connect.NewRequest(&process.StartRequest{
		Process: &process.ProcessConfig{Cmd: "/bin/sh", Args: []string{"-c", killSession, "sh", strconv.FormatUint(uint64(pid), 10)}},
		Stdin:   &no,
	}))
	if err == nil {
		defer stream.Close()
		for stream.Receive() {
			if stream.Msg().GetEvent().GetEnd() != nil {
				return
			}
		}
		err = stream.Err()
		if err == nil {
			err = errors.New("the kill's stream ended without its exit")
		}
	}
	c.r.o.Log.Warn("killing what a command started in an e2b sandbox failed", "sandbox", c.id, "pid", pid, "err", c.cfg.scrub(err.Error()))
}

// kill signals the process alone (SIGKILL) through the daemon.
func (c *conn) kill(ctx context.Context, pid uint32) {
	sel := &process.ProcessSelector{Selector: &process.ProcessSelector_Pid{Pid: pid}}
	if _, err := c.proc.SendSignal(ctx, connect.NewRequest(&process.SendSignalRequest{Process: sel, Signal: process.Signal_SIGNAL_SIGKILL})); err != nil &&
		connect.CodeOf(err) != connect.CodeNotFound {
		c.r.o.Log.Warn("killing a command in an e2b sandbox failed", "sandbox", c.id, "pid", pid, "err", c.cfg.scrub(err.Error()))
	}
}

// deadlineMargin is how near its caller's deadline a command's stream
// may end — on the daemon's side, which counts down the deadline the call
// forwarded from a moment of its own — and still be the timeout rather
// than a failure.
const deadlineMargin = 2 * time.Second

// atDeadline reports whether a stream that ended without the command's
// exit (err, possibly nil) ended for the caller's deadline: the daemon
// said deadline_exceeded, or the deadline is due within the margin.
func atDeadline(ctx context.Context, err error) bool {
	deadline, ok := ctx.Deadline()
	if !ok {
		return false
	}
	return connect.CodeOf(err) == connect.CodeDeadlineExceeded || time.Until(deadline) <= deadlineMargin
}

// awaitDeadline waits (at most the margin) for the caller's deadline and
// returns its error, so the caller sees its own context done.
func awaitDeadline(ctx context.Context) error {
	deadline, _ := ctx.Deadline()
	t := time.NewTimer(min(time.Until(deadline), deadlineMargin))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return context.DeadlineExceeded
	}
}
