package runs

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

// runSandboxTool executes one sandbox tool call. A failure the model can
// act on is its output (isError); an error stops the run only when the
// sandbox itself cannot be reached.
func (s *Service) runSandboxTool(ctx context.Context, rc *runCtx, call domain.Item) toolResult {
	r := toolResult{callID: call.CallID, name: call.Name}
	args, err := parseToolArgs(call.Arguments)
	if err == nil {
		switch call.Name {
		case tools.ExecCommand:
			r, err = s.execCommand(ctx, rc, call, args)
		case tools.ReadFile:
			r, err = s.readFile(ctx, rc, call, args)
		case tools.ListFiles:
			r, err = s.listFiles(ctx, rc, call, args)
		case tools.WriteFile:
			r, err = s.writeFile(ctx, rc, call, args)
		case tools.EditFile:
			r, err = s.editFile(ctx, rc, call, args)
		case tools.ApplyPatch:
			r, err = s.applyPatch(ctx, rc, call, args)
		}
	}
	if err != nil {
		r.callID, r.name, r.isError = call.CallID, call.Name, true
		r.output = "Error: " + toolErrorText(err)
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
func (s *Service) execCommand(ctx context.Context, rc *runCtx, call domain.Item, a toolArgs) (toolResult, error) {
	r := toolResult{callID: call.CallID, name: call.Name}
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
	live := newProgress(func(delta string) {
		s.publish(rc.lr, domain.EventToolProgress, domain.ToolProgressPayload{RunID: rc.lr.run.ID, CallID: call.CallID,
			ToolName: call.Name, Delta: delta, Renderer: "terminal"})
	})
	defer live.Close()
	stdout, stderr := newHeadTail(execStreamCap), newHeadTail(execStreamCap)
	outW, errW := teeWriter(stdout, live), teeWriter(stderr, live)
	cctx, cancel := context.WithTimeout(ctx, time.Duration(timeout)*time.Second)
	defer cancel()
	code, note := 0, ""
	if session == "" {
		l, err := rc.ws.hold(ctx)
		if err != nil {
			return r, err
		}
		wd := workspaceRoot
		if workdir != "" {
			wd = inTree(workdir)
		}
		code, err = l.Exec(cctx, ports.ExecRequest{Cmd: []string{"sh", "-c", pickShell, "sh", cmd}, WorkDir: wd, Stdout: outW, Stderr: errW})
		if err != nil && cctx.Err() == nil {
			return r, err
		}
	} else {
		sh, err := rc.ws.shell(ctx, session)
		if err != nil {
			return r, err
		}
		wd := ""
		if workdir != "" {
			wd = inTree(workdir)
		}
		var alive bool
		code, alive, err = sh.run(cctx, cmd, wd, outW, errW)
		if !alive {
			rc.ws.drop(session)
			if cctx.Err() == nil && ctx.Err() == nil {
				note = fmt.Sprintf("The shell %q exited; the next call with this session_id opens a fresh one.", session)
			}
		}
		if err != nil && cctx.Err() == nil {
			return r, err
		}
	}
	live.Close()
	if ctx.Err() != nil {
		return r, ctx.Err()
	}
	if cctx.Err() != nil {
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
	r.output = strings.TrimRight(b.String(), "\n")
	r.isError = code != 0
	r.display = &domain.Display{Kind: "command", Title: oneLine(cmd, 120), Summary: "exit " + strconv.Itoa(code), Renderer: "terminal"}
	return r, nil
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

// fileScript runs a small POSIX script over argv in the tree: paths never
// pass through a shell's parser.
func fileScript(ctx context.Context, rc *runCtx, script string, stdin []byte, argv ...string) (int, []byte, string, error) {
	l, err := rc.ws.hold(ctx)
	if err != nil {
		return 0, nil, "", err
	}
	var out bytes.Buffer
	errOut := newHeadTail(4 << 10)
	req := ports.ExecRequest{Cmd: append([]string{"sh", "-c", script, "sh"}, argv...), WorkDir: workspaceRoot, Stdout: &out, Stderr: errOut}
	if stdin != nil {
		req.Stdin = bytes.NewReader(stdin)
	}
	code, err := l.Exec(ctx, req)
	return code, out.Bytes(), strings.TrimSpace(errOut.String()), err
}

// Exit codes of the read script.
const (
	readMissing = 3
	readIsDir   = 4
	readTooBig  = 5
)

const readScript = `f="$1"; max="$2"
[ -e "$f" ] || { echo "no such file: $f" >&2; exit 3; }
[ -d "$f" ] && { echo "$f is a directory: use list_files" >&2; exit 4; }
n=$(wc -c < "$f") || exit 1
[ "$n" -gt "$max" ] && { echo "$n" >&2; exit 5; }
cat -- "$f"`

// loadFile reads a whole file within the sandbox's read limit.
func (s *Service) loadFile(ctx context.Context, rc *runCtx, p string) ([]byte, error) {
	l, err := rc.ws.hold(ctx)
	if err != nil {
		return nil, err
	}
	limit := l.ReadLimit()
	code, out, stderr, err := fileScript(ctx, rc, readScript, nil, p, strconv.FormatInt(limit, 10))
	if err != nil {
		return nil, err
	}
	switch code {
	case 0:
		return out, nil
	case readTooBig:
		return nil, fmt.Errorf("%s is %s bytes, over this sandbox's read limit of %d bytes (max_read_file_bytes): "+
			"read parts of it with exec_command (head, sed -n, grep)", p, stderr, limit)
	case readMissing, readIsDir:
		return nil, errors.New(stderr)
	}
	return nil, fmt.Errorf("reading %s failed (exit %d): %s", p, code, stderr)
}

func (s *Service) readFile(ctx context.Context, rc *runCtx, call domain.Item, a toolArgs) (toolResult, error) {
	r := toolResult{callID: call.CallID, name: call.Name}
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
	data, err := s.loadFile(ctx, rc, p)
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
	r.output = b.String()
	last := offset + shown - 1
	if shown < total-(offset-1) {
		if shown == 0 {
			r.output = validUTF8(lines[0][:fileShowCap])
		}
		r.output += fmt.Sprintf("\n… [showing lines %d-%d of %d; read on with offset %d] …", offset, last, total, last+1)
	}
	r.display = &domain.Display{Kind: "file", Title: p, Summary: fmt.Sprintf("%d lines", total)}
	return r, nil
}

// listScript lists a tree with what every find has: directories first
// get a trailing slash.
const listScript = `p="$1"; d="$2"
[ -d "$p" ] || { echo "not a directory: $p" >&2; exit 3; }
cd -- "$p" && find . -mindepth 1 -maxdepth "$d" -type d | sed 's|$|/|' && find . -mindepth 1 -maxdepth "$d" ! -type d`

const listCap = 2000

func (s *Service) listFiles(ctx context.Context, rc *runCtx, call domain.Item, a toolArgs) (toolResult, error) {
	r := toolResult{callID: call.CallID, name: call.Name}
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
	code, out, stderr, err := fileScript(ctx, rc, listScript, nil, p, strconv.Itoa(depth))
	if err != nil {
		return r, err
	}
	if code != 0 {
		return r, fmt.Errorf("listing %s failed: %s", p, stderr)
	}
	var entries []string
	for _, line := range strings.Split(string(out), "\n") {
		line = strings.TrimPrefix(line, "./")
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
	r.output = p + ":\n" + strings.Join(entries, "\n")
	if total == 0 {
		r.output = p + " is empty."
	}
	if total > listCap {
		r.output += fmt.Sprintf("\n… [%d more entries; list a subdirectory or lower the depth] …", total-listCap)
	}
	r.display = &domain.Display{Kind: "files", Title: p, Summary: fmt.Sprintf("%d entries", total)}
	return r, nil
}

const writeScript = `d=$(dirname -- "$1") && mkdir -p -- "$d" && cat > "$1"`

func (s *Service) storeFile(ctx context.Context, rc *runCtx, p string, content []byte) error {
	code, _, stderr, err := fileScript(ctx, rc, writeScript, content, p)
	if err != nil {
		return err
	}
	if code != 0 {
		return fmt.Errorf("writing %s failed: %s", p, stderr)
	}
	return nil
}

func (s *Service) writeFile(ctx context.Context, rc *runCtx, call domain.Item, a toolArgs) (toolResult, error) {
	r := toolResult{callID: call.CallID, name: call.Name}
	raw, err := a.str("path", true)
	if err != nil {
		return r, err
	}
	content, err := a.text("content")
	if err != nil {
		return r, err
	}
	p := inTree(raw)
	if err := s.storeFile(ctx, rc, p, []byte(content)); err != nil {
		return r, err
	}
	r.output = fmt.Sprintf("Wrote %d bytes to %s.", len(content), p)
	r.display = &domain.Display{Kind: "file_write", Title: p, Summary: fmt.Sprintf("%d bytes", len(content))}
	return r, nil
}

func (s *Service) editFile(ctx context.Context, rc *runCtx, call domain.Item, a toolArgs) (toolResult, error) {
	r := toolResult{callID: call.CallID, name: call.Name}
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
	data, err := s.loadFile(ctx, rc, p)
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
	if err := s.storeFile(ctx, rc, p, []byte(updated)); err != nil {
		return r, err
	}
	if !a.bool("replace_all") {
		n = 1
	}
	r.output = fmt.Sprintf("Edited %s: %d replacement(s).", p, n)
	r.display = &domain.Display{Kind: "file_edit", Title: p, Summary: fmt.Sprintf("%d replacement(s)", n)}
	return r, nil
}
