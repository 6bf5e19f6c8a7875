package e2b

import (
	"bytes"
	"context"
	"errors"
	"io"
	"maps"
	"sync"

	"connectrpc.com/connect"

	"github.com/agents-server/agents-server/adapters/sandbox/e2b/gen/process"
	"github.com/agents-server/agents-server/ports"
)

// loginShell becomes bash when the template has it, else sh.
var loginShell = []string{"/bin/sh", "-c", `if command -v bash >/dev/null 2>&1; then exec bash -l; else exec sh -l; fi`}

// OpenPTY implements ports.SandboxBackend: a login shell on a PTY of the
// daemon's process service, in /workspace.
func (r *Runtime) OpenPTY(ctx context.Context, in ports.ProjectInstance, cols, rows uint) (ports.PTY, error) {
	live, err := r.connOf(ctx, in)
	if err != nil {
		return nil, err
	}
	// The terminal outlives the request that opened it: only Close ends it.
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stopLease := live.keepAlive(sctx)
	envs := maps.Clone(in.Env)
	if envs == nil {
		envs = map[string]string{}
	}
	envs["TERM"] = "xterm-256color"
	cwd := workspaceDir
	stream, err := live.proc.Start(sctx, connect.NewRequest(&process.StartRequest{
		Process: &process.ProcessConfig{Cmd: loginShell[0], Args: loginShell[1:], Envs: envs, Cwd: &cwd},
		Pty:     &process.PTY{Size: &process.PTY_Size{Cols: uint32(cols), Rows: uint32(rows)}},
	}))
	if err != nil {
		stopLease()
		cancel()
		return nil, live.cfg.daemonFail(ctx, err, "opening a terminal in e2b sandbox %s", live.id)
	}
	if !stream.Receive() || stream.Msg().GetEvent().GetStart() == nil {
		err := stream.Err()
		_ = stream.Close()
		stopLease()
		cancel()
		if err == nil {
			err = errors.New("the shell did not start")
		}
		return nil, live.cfg.daemonFail(ctx, err, "opening a terminal in e2b sandbox %s", live.id)
	}
	pr, pw := io.Pipe()
	// Input and resizes have a context of their own, ended only by Close:
	// the keystroke that ends the shell must not see its call cancelled
	// by the end it caused.
	calls, endCalls := context.WithCancel(context.WithoutCancel(ctx))
	p := &pty{live: live, pid: stream.Msg().GetEvent().GetStart().GetPid(), out: pr, ctx: calls, done: make(chan struct{}), code: -1}
	p.stop = func() {
		stopLease()
		cancel()
	}
	p.endCalls = endCalls
	go func() {
		defer close(p.done)
		defer p.stop()
		defer stream.Close()
		for stream.Receive() {
			ev := stream.Msg().GetEvent()
			if b := ev.GetData().GetPty(); len(b) > 0 {
				if _, err := pw.Write(b); err != nil {
					return
				}
			}
			if end := ev.GetEnd(); end != nil {
				p.code = int(end.GetExitCode())
				_ = pw.Close()
				return
			}
		}
		err := stream.Err()
		if err == nil {
			err = io.EOF
		}
		p.err = live.cfg.daemonFail(context.Background(), err, "the terminal of e2b sandbox %s", live.id)
		_ = pw.CloseWithError(io.EOF)
	}()
	return p, nil
}

// pty is one terminal: output from the stream, input and resizes as calls.
type pty struct {
	live *conn
	pid  uint32
	out  *io.PipeReader
	ctx  context.Context // the input and resize calls'
	stop func()          // ends the stream and the lease keep-alive
	// endCalls cancels ctx.
	endCalls context.CancelFunc

	done chan struct{}
	code int
	err  error

	wmu       sync.Mutex
	closeOnce sync.Once
}

func (p *pty) sel() *process.ProcessSelector {
	return &process.ProcessSelector{Selector: &process.ProcessSelector_Pid{Pid: p.pid}}
}

// Read implements io.Reader: the terminal's output.
func (p *pty) Read(b []byte) (int, error) { return p.out.Read(b) }

// Write implements io.Writer: keystrokes, in order.
func (p *pty) Write(b []byte) (int, error) {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	in := &process.ProcessInput{Input: &process.ProcessInput_Pty{Pty: bytes.Clone(b)}}
	if _, err := p.live.proc.SendInput(p.ctx, connect.NewRequest(&process.SendInputRequest{Process: p.sel(), Input: in})); err != nil {
		return 0, p.live.cfg.daemonFail(p.ctx, err, "typing into the terminal of e2b sandbox %s", p.live.id)
	}
	return len(b), nil
}

// Resize implements ports.PTY.
func (p *pty) Resize(cols, rows uint) error {
	_, err := p.live.proc.Update(p.ctx, connect.NewRequest(&process.UpdateRequest{Process: p.sel(),
		Pty: &process.PTY{Size: &process.PTY_Size{Cols: uint32(cols), Rows: uint32(rows)}}}))
	return p.live.cfg.daemonFail(p.ctx, err, "resizing the terminal of e2b sandbox %s", p.live.id)
}

// Wait implements ports.PTY.
func (p *pty) Wait() (int, error) {
	<-p.done
	if p.code >= 0 || p.err == nil {
		return p.code, nil
	}
	return -1, p.err
}

// Close implements io.Closer: the shell is killed with its session — its
// jobs, background ones included — and the stream ends.
func (p *pty) Close() error {
	p.closeOnce.Do(func() {
		select {
		case <-p.done:
		default:
			p.live.killTree(p.pid)
		}
		p.stop()
		p.endCalls()
		_ = p.out.Close()
	})
	return nil
}

var _ ports.PTY = (*pty)(nil)
