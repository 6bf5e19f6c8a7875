package sandboxtools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/tools"
	"github.com/agents-server/agents-server/ports"
)

// workspaceRoot is where a project's tree is mounted.
const workspaceRoot = "/workspace"

// Exec time limits: a default, and a ceiling the model cannot raise.
const (
	execDefaultTimeout = 600
	execMaxTimeout     = 3600
)

// toolArgs decodes a sandbox tool's arguments. Models send null, 0 or
// false for an optional string they mean to leave out: those read as "".
type toolArgs map[string]json.RawMessage

func parseToolArgs(raw string) (toolArgs, error) {
	var a toolArgs
	if err := json.Unmarshal([]byte(raw), &a); err != nil {
		return nil, fmt.Errorf("the arguments are not a JSON object: %v", err)
	}
	return a, nil
}

func (a toolArgs) str(name string, required bool) (string, error) {
	raw, ok := a[name]
	t := strings.TrimSpace(string(raw))
	if !ok || t == "null" || t == "0" || t == "false" || t == `""` {
		if required {
			return "", fmt.Errorf("%s is required", name)
		}
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("%s must be a string", name)
	}
	return s, nil
}

// text is a string argument whose empty value is meaningful (file content).
func (a toolArgs) text(name string) (string, error) {
	raw, ok := a[name]
	if !ok {
		return "", fmt.Errorf("%s is required", name)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("%s must be a string", name)
	}
	return s, nil
}

func (a toolArgs) int(name string, def int) (int, error) {
	raw, ok := a[name]
	if !ok || string(raw) == "null" {
		return def, nil
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil || f != float64(int(f)) {
		return 0, fmt.Errorf("%s must be an integer", name)
	}
	if f == 0 {
		return def, nil
	}
	return int(f), nil
}

func (a toolArgs) bool(name string) bool {
	var b bool
	_ = json.Unmarshal(a[name], &b)
	return b
}

// inTree resolves a model-given path against /workspace.
func inTree(p string) string {
	if p == "" {
		return workspaceRoot
	}
	if !path.IsAbs(p) {
		p = path.Join(workspaceRoot, p)
	}
	return path.Clean(p)
}

// Result is what a sandbox tool call answers: its output for the model,
// whether that output reports a failure, and how a client shows it.
type Result struct {
	Output  string
	IsError bool
	Display *domain.Display
}

// Progress receives a command's output as it streams (terminal text).
type Progress func(delta string)

// Run executes one sandbox tool call (one of tools.Sandbox). A failure the
// model can act on — bad arguments, a missing file, a command that failed,
// the sandbox unreachable — is its output with IsError set, never an error.
func (w *Workspace) Run(ctx context.Context, call domain.Item, progress Progress) Result {
	var r Result
	args, err := parseToolArgs(call.Arguments)
	if err == nil {
		switch call.Name {
		case tools.ExecCommand:
			r, err = w.execCommand(ctx, call, args, progress)
		case tools.ReadFile:
			r, err = w.readFile(ctx, args)
		case tools.ListFiles:
			r, err = w.listFiles(ctx, args)
		case tools.WriteFile:
			r, err = w.writeFile(ctx, args)
		case tools.EditFile:
			r, err = w.editFile(ctx, args)
		case tools.ApplyPatch:
			r, err = w.applyPatch(ctx, args)
		default:
			err = fmt.Errorf("%s is not a sandbox tool", call.Name)
		}
	}
	if err != nil {
		r = Result{IsError: true, Output: "Error: " + toolErrorText(err)}
	}
	return r
}

func toolErrorText(err error) string {
	if code := errs.CodeOf(err); code != errs.Internal {
		return errs.MessageOf(err)
	}
	return err.Error()
}

// execCommand runs a shell command, one-shot or in a named shell, streaming
// its output live as run.tool_progress with the terminal renderer.
func (w *Workspace) execCommand(ctx context.Context, call domain.Item, a toolArgs, progress Progress) (Result, error) {
	r := Result{}
	cmd, err := a.str("cmd", true)
	if err != nil {
		return r, err
	}
	workdir, err := a.str("workdir", false)
	if err != nil {
		return r, err
	}
	session, err := a.str("session_id", false)
	if err != nil {
		return r, err
	}
	timeout, err := a.int("timeout_seconds", execDefaultTimeout)
	if err != nil {
		return r, err
	}
	timeout = max(1, min(timeout, execMaxTimeout))
	live := newProgress(progress)
	defer live.Close()
	stdout, stderr := newHeadTail(execStreamCap), newHeadTail(execStreamCap)
	outW, errW := teeWriter(stdout, live), teeWriter(stderr, live)
	cctx, cancel := context.WithTimeout(ctx, time.Duration(timeout)*time.Second)
	defer cancel()
	code, note, timedOut := 0, "", false
	if session == "" {
		l, err := w.hold(ctx)
		if err != nil {
			return r, err
		}
		wd := workspaceRoot
		if workdir != "" {
			wd = inTree(workdir)
		}
		code, err = l.Exec(cctx, ports.ExecRequest{Cmd: []string{"sh", "-c", pickShell, "sh", cmd}, WorkDir: wd, Stdout: outW, Stderr: errW})
		timedOut = timedOutBy(cctx, err)
		if err != nil && !timedOut {
			return r, err
		}
	} else {
		sh, err := w.shell(ctx, session)
		if err != nil {
			return r, err
		}
		wd := ""
		if workdir != "" {
			wd = inTree(workdir)
		}
		var alive bool
		code, alive, err = sh.run(cctx, cmd, wd, outW, errW)
		timedOut = timedOutBy(cctx, err)
		if !alive {
			w.drop(session)
			if !timedOut && ctx.Err() == nil {
				note = fmt.Sprintf("The shell %q exited; the next call with this session_id opens a fresh one.", session)
			}
		}
		if err != nil && !timedOut {
			return r, err
		}
	}
	live.Close()
	if ctx.Err() != nil {
		return r, ctx.Err()
	}
	if timedOut {
		code = -1
		note = fmt.Sprintf("Timed out after %d seconds; the command was abandoned.", timeout)
		if session != "" {
			note += fmt.Sprintf(" The shell %q was closed; the next call opens a fresh one.", session)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "exit_code: %d\n", code)
	if note != "" {
		b.WriteString(note + "\n")
	}
	if out := stdout.String(); out != "" {
		b.WriteString("stdout:\n" + out)
		if !strings.HasSuffix(out, "\n") {
			b.WriteString("\n")
		}
	}
	if out := stderr.String(); out != "" {
		b.WriteString("stderr:\n" + out)
	}
	r.Output = strings.TrimRight(b.String(), "\n")
	r.IsError = code != 0
	r.Display = &domain.Display{Kind: "command", Title: oneLine(cmd, 120), Summary: "exit " + strconv.Itoa(code), Renderer: "terminal"}
	return r, nil
}

// timedOutBy reports whether a command under cctx ran out of its time:
// cctx is done, or the backend already said the deadline passed — a
// backend whose far end counts the deadline down may see it first, a
// moment before cctx is done here. A deadline error the backend wrapped
// in a coded error is its own failure, reported as such.
func timedOutBy(cctx context.Context, err error) bool {
	if cctx.Err() != nil {
		return true
	}
	var coded *errs.Error
	return errors.Is(err, context.DeadlineExceeded) && !errors.As(err, &coded)
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// teeWriter writes to the capture and the live stream.
func teeWriter(capture *headTail, live *progress) *tee { return &tee{capture: capture, live: live} }

type tee struct {
	capture *headTail
	live    *progress
}

func (t *tee) Write(p []byte) (int, error) {
	_, _ = t.capture.Write(p)
	return t.live.Write(p)
}

// loadFile reads a whole file within the sandbox's read limit.
func (w *Workspace) loadFile(ctx context.Context, p string) ([]byte, error) {
	l, err := w.hold(ctx)
	if err != nil {
		return nil, err
	}
	data, err := l.ReadFile(ctx, p)
	var big *ports.FileTooLargeError
	if errors.As(err, &big) {
		return nil, fmt.Errorf("%s is %d bytes, over this sandbox's read limit of %d bytes (max_read_file_bytes): "+
			"read parts of it with exec_command (head, sed -n, grep)", p, big.Size, l.ReadLimit())
	}
	return data, err
}

func (w *Workspace) readFile(ctx context.Context, a toolArgs) (Result, error) {
	r := Result{}
	raw, err := a.str("path", true)
	if err != nil {
		return r, err
	}
	offset, err := a.int("offset", 1)
	if err != nil {
		return r, err
	}
	limit, err := a.int("limit", 0)
	if err != nil {
		return r, err
	}
	p := inTree(raw)
	data, err := w.loadFile(ctx, p)
	if err != nil {
		return r, err
	}
	if bytes.IndexByte(data, 0) >= 0 {
		return r, fmt.Errorf("%s is a binary file (%d bytes): inspect it with exec_command", p, len(data))
	}
	lines := strings.SplitAfter(string(data), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	total := len(lines)
	if offset < 1 {
		offset = 1
	}
	if offset > total && total > 0 {
		return r, fmt.Errorf("%s has %d lines; offset %d is past the end", p, total, offset)
	}
	lines = lines[min(offset-1, total):]
	if limit > 0 && limit < len(lines) {
		lines = lines[:limit]
	}
	var b strings.Builder
	shown := 0
	for _, line := range lines {
		if b.Len()+len(line) > fileShowCap {
			break
		}
		b.WriteString(line)
		shown++
	}
	r.Output = b.String()
	last := offset + shown - 1
	if shown < total-(offset-1) {
		if shown == 0 {
			r.Output = validUTF8(lines[0][:fileShowCap])
		}
		r.Output += fmt.Sprintf("\n… [showing lines %d-%d of %d; read on with offset %d] …", offset, last, total, last+1)
	}
	r.Display = &domain.Display{Kind: "file", Title: p, Summary: fmt.Sprintf("%d lines", total)}
	return r, nil
}

const listCap = 2000

func (w *Workspace) listFiles(ctx context.Context, a toolArgs) (Result, error) {
	r := Result{}
	raw, err := a.str("path", false)
	if err != nil {
		return r, err
	}
	depth, err := a.int("depth", 2)
	if err != nil {
		return r, err
	}
	depth = max(1, min(depth, 10))
	p := inTree(raw)
	l, err := w.hold(ctx)
	if err != nil {
		return r, err
	}
	listed, err := l.ListFiles(ctx, p, depth)
	if errs.Is(err, errs.NotFound) {
		return r, fmt.Errorf("listing %s failed: %s", p, errs.MessageOf(err))
	}
	if err != nil {
		return r, err
	}
	var entries []string
	for _, line := range listed {
		if line == "" || strings.HasPrefix(line, ".git/") && line != ".git/" {
			continue
		}
		entries = append(entries, line)
	}
	slices.Sort(entries)
	total := len(entries)
	if total > listCap {
		entries = entries[:listCap]
	}
	r.Output = p + ":\n" + strings.Join(entries, "\n")
	if total == 0 {
		r.Output = p + " is empty."
	}
	if total > listCap {
		r.Output += fmt.Sprintf("\n… [%d more entries; list a subdirectory or lower the depth] …", total-listCap)
	}
	r.Display = &domain.Display{Kind: "files", Title: p, Summary: fmt.Sprintf("%d entries", total)}
	return r, nil
}

func (w *Workspace) storeFile(ctx context.Context, p string, content []byte) error {
	l, err := w.hold(ctx)
	if err != nil {
		return err
	}
	return l.WriteFile(ctx, p, content)
}

func (w *Workspace) writeFile(ctx context.Context, a toolArgs) (Result, error) {
	r := Result{}
	raw, err := a.str("path", true)
	if err != nil {
		return r, err
	}
	content, err := a.text("content")
	if err != nil {
		return r, err
	}
	p := inTree(raw)
	if err := w.storeFile(ctx, p, []byte(content)); err != nil {
		return r, err
	}
	r.Output = fmt.Sprintf("Wrote %d bytes to %s.", len(content), p)
	r.Display = &domain.Display{Kind: "file_write", Title: p, Summary: fmt.Sprintf("%d bytes", len(content))}
	return r, nil
}

func (w *Workspace) editFile(ctx context.Context, a toolArgs) (Result, error) {
	r := Result{}
	raw, err := a.str("path", true)
	if err != nil {
		return r, err
	}
	oldS, err := a.text("old_string")
	if err != nil {
		return r, err
	}
	newS, err := a.text("new_string")
	if err != nil {
		return r, err
	}
	if oldS == "" {
		return r, errors.New("old_string must not be empty: use write_file to create a file")
	}
	p := inTree(raw)
	data, err := w.loadFile(ctx, p)
	if err != nil {
		return r, err
	}
	n := strings.Count(string(data), oldS)
	switch {
	case n == 0:
		return r, fmt.Errorf("old_string was not found in %s (it must match exactly, whitespace included)", p)
	case n > 1 && !a.bool("replace_all"):
		return r, fmt.Errorf("old_string appears %d times in %s: include more context to make it unique, or set replace_all", n, p)
	}
	updated := strings.Replace(string(data), oldS, newS, map[bool]int{true: -1, false: 1}[a.bool("replace_all")])
	if err := w.storeFile(ctx, p, []byte(updated)); err != nil {
		return r, err
	}
	if !a.bool("replace_all") {
		n = 1
	}
	r.Output = fmt.Sprintf("Edited %s: %d replacement(s).", p, n)
	r.Display = &domain.Display{Kind: "file_edit", Title: p, Summary: fmt.Sprintf("%d replacement(s)", n)}
	return r, nil
}
