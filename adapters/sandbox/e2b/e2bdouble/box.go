package e2bdouble

import (
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

	"github.com/creack/pty"

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

	mu    sync.Mutex
	st    api.SandboxState
	endAt time.Time
	procs map[uint32]*proc
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

// killAll kills every process group of the sandbox.
func (b *box) killAll() {
	b.mu.Lock()
	procs := make([]*proc, 0, len(b.procs))
	for _, p := range b.procs {
		procs = append(procs, p)
	}
	b.mu.Unlock()
	for _, p := range procs {
		p.signal(syscall.SIGKILL)
		<-p.done
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

// signal signals the process's group (the helper set it up as a group
// or session leader), so what it started goes too.
func (p *proc) signal(sig syscall.Signal) {
	_ = syscall.Kill(-int(p.pid), sig)
}

// start runs a process of the sandbox through the namespace helper.
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
	p := &proc{cfg: c, tag: req.GetTag(), cmd: cmd, events: make(chan *process.ProcessEvent, 64), done: make(chan struct{})}
	var readers []io.Reader
	if size := req.GetPty().GetSize(); req.GetPty() != nil {
		attrs := namespaceAttrs()
		attrs.Setsid, attrs.Setctty = true, true
		tty, err := pty.StartWithAttrs(cmd, &pty.Winsize{Cols: uint16(size.GetCols()), Rows: uint16(size.GetRows())}, attrs)
		if err != nil {
			return nil, err
		}
		p.tty = tty
		readers = append(readers, tty)
	} else {
		attrs := namespaceAttrs()
		attrs.Setpgid = true
		cmd.SysProcAttr = attrs
		outR, outW, err := os.Pipe()
		if err != nil {
			return nil, err
		}
		errR, errW, err := os.Pipe()
		if err != nil {
			return nil, err
		}
		cmd.Stdout, cmd.Stderr = outW, errW
		if req.Stdin == nil || req.GetStdin() {
			if p.stdin, err = cmd.StdinPipe(); err != nil {
				return nil, err
			}
		}
		if err := cmd.Start(); err != nil {
			outR.Close()
			errR.Close()
			outW.Close()
			errW.Close()
			return nil, err
		}
		outW.Close()
		errW.Close()
		readers = append(readers, outR, errR)
	}
	p.pid = uint32(cmd.Process.Pid)
	b.mu.Lock()
	b.procs[p.pid] = p
	b.mu.Unlock()
	go b.watch(p, readers)
	return p, nil
}

// watch forwards a process's output as events, then its end.
func (b *box) watch(p *proc, readers []io.Reader) {
	var wg sync.WaitGroup
	for i, r := range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 32<<10)
			for {
				n, err := r.Read(buf)
				if n > 0 {
					data := &process.ProcessEvent_DataEvent{}
					chunk := append([]byte(nil), buf[:n]...)
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
				if err != nil {
					if c, ok := r.(io.Closer); ok {
						c.Close()
					}
					return
				}
			}
		}()
	}
	wg.Wait()
	err := p.cmd.Wait()
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
