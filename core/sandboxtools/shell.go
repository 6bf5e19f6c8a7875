package sandboxtools

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"strconv"
	"sync"

	"github.com/agents-server/agents-server/ports"
)

// pickShell runs its script argument with bash when the image has it, else
// with sh: images differ, and the model should not have to care.
const pickShell = `if command -v bash >/dev/null 2>&1; then exec bash -c "$1"; else exec sh -c "$1"; fi`

// namedShell is a persistent shell of one run, for exec_command calls that
// name a session_id: one process reads commands from its stdin, so cd and
// exported variables carry over. Each command is followed by a marker line
// on both streams carrying its exit code — that is how a call knows where
// its output ends.
type namedShell struct {
	busy   sync.Mutex // one command at a time: parallel calls queue
	stdin  *io.PipeWriter
	marker string
	out    *markedStream
	errs   *markedStream
	done   chan struct{} // closed when the shell process ends
	code   int
	err    error
	cancel context.CancelFunc
}

// openShell starts a persistent shell in the lease's instance.
func openShell(ws workspaceExec) (*namedShell, error) {
	nonce := make([]byte, 12)
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	r, w := io.Pipe()
	sh := &namedShell{stdin: w, marker: "__agents_done_" + hex.EncodeToString(nonce), done: make(chan struct{}), cancel: cancel}
	sh.out, sh.errs = newMarkedStream(sh.marker), newMarkedStream(sh.marker)
	go func() {
		defer close(sh.done)
		sh.code, sh.err = ws.Exec(ctx, ports.ExecRequest{
			Cmd:   []string{"sh", "-c", `if command -v bash >/dev/null 2>&1; then exec bash --noprofile --norc; else exec sh; fi`},
			Stdin: r, Stdout: sh.out, Stderr: sh.errs,
		})
		r.Close()
		sh.out.finish()
		sh.errs.finish()
	}()
	return sh, nil
}

// run sends one command and waits for both markers. It reports the exit
// code, or alive false when the shell ended (or must be abandoned: a
// timeout leaves the command running).
func (sh *namedShell) run(ctx context.Context, cmd, workdir string, stdout, stderr io.Writer) (code int, alive bool, err error) {
	sh.busy.Lock()
	defer sh.busy.Unlock()
	script := "{\n" + cmd + "\n} </dev/null"
	if workdir != "" {
		script = "cd -- " + shellQuote(workdir) + " && " + script
	}
	script += fmt.Sprintf("\n__agents_rc=$?; printf '\\n%s %%d\\n' \"$__agents_rc\"; printf '\\n%s\\n' >&2\n", sh.marker, sh.marker)
	sh.out.attach(stdout)
	sh.errs.attach(stderr)
	// The caller reads its writers as soon as this returns; what the shell
	// prints later (a timed-out command still running, the bytes held back
	// when the shell ends) must not reach them.
	defer sh.out.attach(nil)
	defer sh.errs.attach(nil)
	if _, err := io.WriteString(sh.stdin, script); err != nil {
		return -1, false, sh.exitErr(ctx)
	}
	outLine, okOut := sh.out.wait(ctx)
	_, okErr := sh.errs.wait(ctx)
	if ctx.Err() != nil {
		return -1, false, ctx.Err()
	}
	if !okOut || !okErr {
		return -1, false, sh.exitErr(ctx)
	}
	code, convErr := strconv.Atoi(outLine)
	if convErr != nil {
		code = -1
	}
	return code, true, nil
}

// exitErr is why the ended shell's process could not run (the instance
// unreachable, say); nil when it just exited.
func (sh *namedShell) exitErr(ctx context.Context) error {
	select {
	case <-sh.done:
		return sh.err
	case <-ctx.Done():
		return nil
	}
}

// close ends the shell and its process.
func (sh *namedShell) close() {
	sh.stdin.Close()
	sh.cancel()
}

// markedStream receives a shell's stream and splits it at marker lines:
// bytes before a marker go to the attached writer; the marker line itself
// (and the newline printed before it) never does.
type markedStream struct {
	marker  []byte
	mu      sync.Mutex
	pending []byte    // bytes that might still be the start of a marker line
	dst     io.Writer // the current command's sink
	lines   chan string
	ended   chan struct{}
}

func newMarkedStream(marker string) *markedStream {
	return &markedStream{marker: []byte("\n" + marker), lines: make(chan string, 4), ended: make(chan struct{})}
}

func (m *markedStream) attach(w io.Writer) {
	m.mu.Lock()
	m.dst = w
	m.mu.Unlock()
}

func (m *markedStream) Write(p []byte) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.pending = append(m.pending, p...)
	for {
		i := bytes.Index(m.pending, m.marker)
		if i < 0 {
			break
		}
		end := bytes.IndexByte(m.pending[i+len(m.marker):], '\n')
		if end < 0 {
			// The marker line is not complete yet: flush what precedes it.
			m.emit(m.pending[:i])
			m.pending = append(m.pending[:0], m.pending[i:]...)
			return len(p), nil
		}
		rest := bytes.TrimSpace(m.pending[i+len(m.marker) : i+len(m.marker)+end])
		m.emit(m.pending[:i])
		m.lines <- string(rest)
		m.dst = nil
		m.pending = append(m.pending[:0], m.pending[i+len(m.marker)+end+1:]...)
	}
	// Keep back a tail that could be the beginning of a marker.
	keep := min(len(m.pending), len(m.marker)-1)
	for keep > 0 && !bytes.HasPrefix(m.marker, m.pending[len(m.pending)-keep:]) {
		keep--
	}
	m.emit(m.pending[:len(m.pending)-keep])
	m.pending = append(m.pending[:0], m.pending[len(m.pending)-keep:]...)
	return len(p), nil
}

func (m *markedStream) emit(b []byte) {
	if len(b) > 0 && m.dst != nil {
		_, _ = m.dst.Write(b)
	}
}

// finish marks the stream ended: what is pending goes out.
func (m *markedStream) finish() {
	m.mu.Lock()
	m.emit(m.pending)
	m.pending = nil
	m.mu.Unlock()
	close(m.ended)
}

// wait blocks until a marker line arrives (its text after the marker) or
// the stream ends (ok false).
func (m *markedStream) wait(ctx context.Context) (string, bool) {
	select {
	case line := <-m.lines:
		return line, true
	case <-m.ended:
		select {
		case line := <-m.lines:
			return line, true
		default:
			return "", false
		}
	case <-ctx.Done():
		return "", false
	}
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + bytes.NewBuffer(bytes.ReplaceAll([]byte(s), []byte("'"), []byte(`'\''`))).String() + "'"
}
