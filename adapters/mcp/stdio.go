package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agents-server/agents-server/ports"
)

// stopGrace is how long a program has to exit after its stdin closes, and
// again after SIGTERM, before it is killed.
const stopGrace = 2 * time.Second

// hostEnv are the variables of the workbench's own environment a program
// on the host inherits: enough to find its tools and write its caches,
// never the keys and addresses the workbench itself was given.
var hostEnv = []string{"PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "TMPDIR", "TZ", "SYSTEMROOT", "PATHEXT", "APPDATA", "LOCALAPPDATA", "USERPROFILE"}

// program is a stdio server's running process: its stdin and stdout, how
// it ended, and how to end it.
type program struct {
	stdin  io.WriteCloser
	stdout io.ReadCloser
	pid    int           // the host process's (0 elsewhere)
	exited chan struct{} // closed once the program has ended
	status string        // how it ended, set before exited closes
	kill   func()        // ends it (and, on the host, its process group) now
	term   func()        // asks it to end (SIGTERM on the host)
}

// stop closes the program's stdin, as the MCP stdio transport says a
// client ends a session, then asks it to terminate and at last kills it.
func (p *program) stop() {
	_ = p.stdin.Close()
	if !p.exitsWithin(stopGrace) {
		p.term()
		if !p.exitsWithin(stopGrace) {
			p.kill()
		}
	}
	_ = p.stdout.Close()
}

// exitsWithin reports whether the program ends within d.
func (p *program) exitsWithin(d time.Duration) bool {
	select {
	case <-p.exited:
		return true
	case <-time.After(d):
		return false
	}
}

// dialStdio starts a stdio server's program and connects to it over its
// stdin and stdout.
func (d *Dialer) dialStdio(ctx context.Context, target ports.MCPTarget) (ports.MCPSession, error) {
	st := target.Stdio
	var p *program
	var err error
	if st.Exec != nil {
		p = startElsewhere(st)
	} else if p, err = startOnHost(st); err != nil {
		return nil, &ports.MCPError{Kind: ports.MCPUnreachable, Message: "could not start " + target.Name + ": " + err.Error(), Err: err}
	}
	// The session ends by closing the program's stdin (stop); its stdout
	// stays open until it exits, so it never writes into a closed pipe.
	transport := &sdk.IOTransport{Reader: io.NopCloser(p.stdout), Writer: p.stdin, MaxLineLength: MaxMessageBytes}
	cs, err := d.client().Connect(ctx, transport, nil)
	if err != nil {
		go p.stop()
		if p.exitsWithin(100 * time.Millisecond) {
			err = fmt.Errorf("the program %s before the handshake: %w", p.status, err)
		}
		return nil, classify(err, "could not connect to "+target.Name)
	}
	return watch(&session{cs: cs, notes: &wireNotes{}, program: p}), nil
}

// programEnv is a host program's environment: hostEnv from the
// workbench's own, then the configured variables.
func programEnv(configured map[string]string) []string {
	var env []string
	for _, k := range hostEnv {
		if v, ok := os.LookupEnv(k); ok {
			if _, over := configured[k]; !over {
				env = append(env, k+"="+v)
			}
		}
	}
	for k, v := range configured {
		env = append(env, k+"="+v)
	}
	return env
}

// startOnHost starts the program on this host, in a process group of its
// own so that what it starts (npx starts node) ends with it.
func startOnHost(st *ports.MCPStdio) (*program, error) {
	cmd := exec.Command(st.Command, st.Args...)
	cmd.Env = programEnv(st.Env)
	if st.Stderr != nil {
		cmd.Stderr = st.Stderr
	}
	// A grandchild holding stderr open must not keep Wait from returning.
	cmd.WaitDelay = stopGrace
	ownGroup(cmd)
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		_, _ = inR.Close(), inW.Close()
		return nil, err
	}
	cmd.Stdin, cmd.Stdout = inR, outW
	if err := cmd.Start(); err != nil {
		_, _, _, _ = inR.Close(), inW.Close(), outR.Close(), outW.Close()
		return nil, err
	}
	// The child holds its ends; ours closing lets EOF through.
	_, _ = inR.Close(), outW.Close()
	p := &program{stdin: inW, stdout: outR, pid: cmd.Process.Pid, exited: make(chan struct{})}
	// Signals go to the group only while its leader is unreaped (running,
	// or a zombie awaiting Wait): once reaped, its id may be another's.
	var reaped sync.Mutex
	signal := func(sig func(*exec.Cmd)) func() {
		return func() {
			reaped.Lock()
			defer reaped.Unlock()
			select {
			case <-p.exited:
			default:
				sig(cmd)
			}
		}
	}
	p.kill, p.term = signal(killGroup), signal(termGroup)
	go func() {
		// What the program started ends with it, killed while the exited
		// leader still holds the group's id.
		if awaitExit(cmd) {
			killGroup(cmd)
		}
		reaped.Lock()
		err := cmd.Wait()
		p.status = exitStatus(err)
		close(p.exited)
		reaped.Unlock()
	}()
	return p, nil
}

// startElsewhere runs the program through st.Exec (a project's sandbox),
// its stdin and stdout carried over the exec stream.
func startElsewhere(st *ports.MCPStdio) *program {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	p := &program{stdin: inW, stdout: outR, exited: make(chan struct{}), kill: cancel, term: cancel}
	go func() {
		code, err := st.Exec(ctx, ports.ExecRequest{Cmd: append([]string{st.Command}, st.Args...), Env: st.Env,
			Stdin: inR, Stdout: outW, Stderr: orDiscard(st.Stderr)})
		switch {
		case err != nil && ctx.Err() != nil:
			p.status = "was stopped"
		case err != nil:
			p.status = "could not run: " + err.Error()
		default:
			p.status = fmt.Sprintf("exited with status %d", code)
		}
		_ = outW.Close()
		_ = inR.CloseWithError(io.ErrClosedPipe)
		cancel()
		close(p.exited)
	}()
	return p
}

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}

// exitStatus says how a host program ended, in a person's words.
func exitStatus(err error) string {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return "exited with status 0"
	case errors.As(err, &ee) && ee.ExitCode() >= 0:
		return fmt.Sprintf("exited with status %d", ee.ExitCode())
	case errors.As(err, &ee):
		return "was ended by " + strings.TrimPrefix(ee.String(), "signal: ")
	}
	return "ended: " + err.Error()
}
