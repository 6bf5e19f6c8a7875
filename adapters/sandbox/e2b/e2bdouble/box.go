package e2bdouble

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/agents-server/agents-server/adapters/sandbox/e2b/gen/api"
	"github.com/agents-server/agents-server/adapters/sandbox/e2b/gen/process"
)

// box is one sandbox: its files under dir/fs, its processes, its lease.
type box struct {
	id, template, dir, token string
	autoPause, allowInternet bool
	meta                     map[string]string
	started                  time.Time
	daemon                   http.Handler

	// deadlineLead is how much sooner than forwarded the daemon's
	// deadline for a call comes (Options.DeadlineLead).
	deadlineLead time.Duration
	// deadlineSendsEnd: at that deadline the process's end event is sent
	// before the stream closes (Options.DeadlineSendsEnd).
	deadlineSendsEnd bool

	mu    sync.Mutex
	st    api.SandboxState
	endAt time.Time
	procs map[uint32]*proc
	// spaces are the mount namespaces of the processes the sandbox
	// started, by inode: the processes in them are everything it runs.
	spaces map[uint64]*os.File
}

func (b *box) state() api.SandboxState {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.st
}

func (b *box) leaseEnd() time.Time {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.endAt
}

// pause ends every process (a memory snapshot is beyond a double) and
// keeps the files.
func (b *box) pause() {
	b.killAll()
	b.mu.Lock()
	b.st = api.Paused
	b.mu.Unlock()
}

// resume makes a paused sandbox run with the lease until; a running one's
// lease is only extended. It reports whether the sandbox was paused.
func (b *box) resume(until time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	was := b.st == api.Paused
	b.st = api.Running
	if was || until.After(b.endAt) {
		b.endAt = until
	}
	return was
}

// killAll ends everything the sandbox started, as the VM going away
// would: every process in one of its mount namespaces — what its commands
// left behind included, whatever their group or session.
func (b *box) killAll() {
	b.mu.Lock()
	procs := make([]*proc, 0, len(b.procs))
	for _, p := range b.procs {
		procs = append(procs, p)
	}
	spaces := b.spaces
	b.spaces = nil
	b.mu.Unlock()
	killIn(spaces)
	for _, p := range procs {
		p.signal(syscall.SIGKILL)
		<-p.done
	}
	for _, f := range spaces {
		_ = f.Close()
	}
}

// hostPath is where a sandbox path lives on this machine.
func (b *box) hostPath(p string) string {
	return filepath.Join(b.dir, "fs", filepath.FromSlash(path.Clean("/"+p)))
}

// proc is one running process.
type proc struct {
	pid    uint32
	cfg    *process.ProcessConfig
	tag    string
	cmd    *exec.Cmd
	stdin  io.WriteCloser // nil: no stdin (or a PTY)
	tty    *os.File       // the PTY's master, for a PTY process
	events chan *process.ProcessEvent
	done   chan struct{}

	mu     sync.Mutex
	closed bool
}

// signal signals the process alone, as envd does: what it started goes
// only if it shares the fate (a PTY's session losing its terminal) or
// someone kills it too.
func (p *proc) signal(sig syscall.Signal) {
	_ = p.cmd.Process.Signal(sig)
}

// start runs a process of the sandbox through the namespace helper. Like
// envd's, a process without a PTY stays in the daemon's process group and
// session, and one with a PTY leads a session of its own with the
// terminal as its controlling one (creack/pty's way, which envd uses).
func (b *box) start(req *process.StartRequest) (*proc, error) {
	if b.state() != api.Running {
		return nil, errNotRunning
	}
	if err := Supported(); err != nil {
		return nil, err
	}
	c := req.GetProcess()
	cwd := c.GetCwd()
	if cwd == "" {
		cwd = "/root"
	}
	if fi, err := os.Stat(b.hostPath(cwd)); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("the working directory %s does not exist", cwd)
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, append([]string{helperArg, b.dir, cwd, c.GetCmd()}, c.GetArgs()...)...)
	cmd.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/root", "USER=root", "LANG=C.UTF-8"}
	for k, v := range c.GetEnvs() {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	// The helper waits at this gate until the sandbox holds its mount
	// namespace: a command that exits at once cannot take what it left
	// behind out of the sandbox's reach.
	gate, open, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer open.Close()
	cmd.ExtraFiles = []*os.File{gate}
	p := &proc{cfg: c, tag: req.GetTag(), cmd: cmd, events: make(chan *process.ProcessEvent, 64), done: make(chan struct{})}
	var readers []*os.File
	if size := req.GetPty().GetSize(); req.GetPty() != nil {
		tty, err := startPTY(cmd, namespaceAttrs(), uint16(size.GetCols()), uint16(size.GetRows()))
		gate.Close()
		if err != nil {
			return nil, err
		}
		p.tty = tty
		readers = append(readers, tty)
	} else {
		cmd.SysProcAttr = namespaceAttrs()
		outR, outW, err := os.Pipe()
		if err != nil {
			gate.Close()
			return nil, err
		}
		errR, errW, err := os.Pipe()
		if err != nil {
			gate.Close()
			outR.Close()
			outW.Close()
			return nil, err
		}
		cmd.Stdout, cmd.Stderr = outW, errW
		if req.Stdin == nil || req.GetStdin() {
			if p.stdin, err = cmd.StdinPipe(); err != nil {
				for _, f := range []*os.File{gate, outR, outW, errR, errW} {
					f.Close()
				}
				return nil, err
			}
		}
		err = cmd.Start()
		gate.Close()
		outW.Close()
		errW.Close()
		if err != nil {
			outR.Close()
			errR.Close()
			return nil, err
		}
		readers = append(readers, outR, errR)
	}
	p.pid = uint32(cmd.Process.Pid)
	ns, err := b.track(cmd.Process.Pid)
	if err != nil {
		_ = cmd.Process.Kill()
	}
	b.mu.Lock()
	b.procs[p.pid] = p
	b.mu.Unlock()
	go b.watch(p, readers, ns)
	return p, nil
}

// watch forwards a process's output as events, then its end. A PTY is
// read until every holder of the terminal has let go (envd's read of a
// terminal blocks until then); pipes until the process exits and what it
// wrote is drained — envd closes them when the process is reaped, so what
// a process it left behind writes later is nobody's output.
func (b *box) watch(p *proc, readers []*os.File, ns uint64) {
	var wg sync.WaitGroup
	for i, r := range readers {
		wg.Go(func() { p.forward(i, r) })
	}
	var err error
	if p.tty != nil {
		wg.Wait()
		err = p.cmd.Wait()
	} else {
		err = p.cmd.Wait()
		for _, r := range readers {
			// Ends the read in flight; forward drains what is left.
			_ = r.SetReadDeadline(time.Unix(1, 0))
		}
		wg.Wait()
	}
	end := &process.ProcessEvent_EndEvent{Exited: true, Status: "exit status 0"}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		end.ExitCode = int32(exit.ExitCode())
		end.Status = exit.Error()
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			end.Exited, end.ExitCode = false, -1
		}
	case err != nil:
		msg := err.Error()
		end.Exited, end.ExitCode, end.Error = false, -1, &msg
	}
	p.events <- &process.ProcessEvent{Event: &process.ProcessEvent_End{End: end}}
	close(p.events)
	b.mu.Lock()
	delete(b.procs, p.pid)
	b.mu.Unlock()
	close(p.done)
	b.release(ns)
}

// forward sends what one of a process's streams (0: stdout or the PTY,
// 1: stderr) yields as data events, until it ends. A read cut short by
// watch (the process exited) drains what the pipe still holds, without
// waiting for more.
func (p *proc) forward(i int, r *os.File) {
	defer r.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			p.send(i, buf[:n])
		}
		if err == nil {
			continue
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			_ = r.SetReadDeadline(time.Time{})
			if raw, err := r.SyscallConn(); err == nil {
				_ = raw.Read(func(fd uintptr) bool {
					for {
						n, err := syscall.Read(int(fd), buf)
						if n <= 0 || err != nil {
							return true
						}
						p.send(i, buf[:n])
					}
				})
			}
		}
		return
	}
}

// send queues a chunk of output as a data event.
func (p *proc) send(i int, b []byte) {
	data := &process.ProcessEvent_DataEvent{}
	chunk := bytes.Clone(b)
	switch {
	case p.tty != nil:
		data.Output = &process.ProcessEvent_DataEvent_Pty{Pty: chunk}
	case i == 0:
		data.Output = &process.ProcessEvent_DataEvent_Stdout{Stdout: chunk}
	default:
		data.Output = &process.ProcessEvent_DataEvent_Stderr{Stderr: chunk}
	}
	p.events <- &process.ProcessEvent{Event: &process.ProcessEvent_Data{Data: data}}
}

// find is a running process by pid (tags are not used by the backend).
func (b *box) find(sel *process.ProcessSelector) *proc {
	b.mu.Lock()
	defer b.mu.Unlock()
	if tag := sel.GetTag(); tag != "" {
		for _, p := range b.procs {
			if p.tag == tag {
				return p
			}
		}
		return nil
	}
	return b.procs[sel.GetPid()]
}
