package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agents-server/agents-server/adapters/httpapi"
	"github.com/agents-server/agents-server/adapters/sandbox/e2b/e2bdouble"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/ports/porttest"
)

// These tests run the real binary, the way a person or CI does.

var (
	binaryOnce sync.Once
	binaryPath string
	binaryErr  error
)

// agentsBinary returns the server's binary: the one the test command
// built (AGENTS_TEST_BINARY), or one built here once per test run the same
// way (scripts/build/server.sh), so the build cache serves both.
func agentsBinary(t testing.TB) string {
	t.Helper()
	if bin := os.Getenv("AGENTS_TEST_BINARY"); bin != "" {
		return bin
	}
	binaryOnce.Do(func() {
		dir, err := os.MkdirTemp("", "agents-server-bin")
		if err != nil {
			binaryErr = err
			return
		}
		binaryPath = filepath.Join(dir, "agents-server")
		out, err := exec.Command("../../scripts/build/server.sh", binaryPath).CombinedOutput()
		if err != nil {
			binaryErr = errors.New(string(out))
		}
	})
	if binaryErr != nil {
		t.Fatalf("build the binary: %v", binaryErr)
	}
	return binaryPath
}

func TestMain(m *testing.M) {
	// The E2B double re-executes the test binary to start its sandboxes'
	// processes.
	e2bdouble.RunHelperIfAsked()
	if os.Getenv(benchChildEnv) == "1" {
		os.Exit(runBenchChild())
	}
	code := m.Run()
	if binaryPath != "" {
		os.RemoveAll(filepath.Dir(binaryPath))
	}
	os.Exit(code)
}

type process struct {
	cmd    *exec.Cmd
	url    string
	token  string
	stderr *porttest.Buffer
	exited chan error
}

var readyLine = regexp.MustCompile(`^agents-server ready: (http://127\.0\.0\.1:\d+)/#token=(ags_l_[A-Za-z0-9]{40})$`)

// startBinary runs the binary on a free port and waits for its ready line.
func startBinary(t *testing.T, dataDir string, env ...string) *process {
	t.Helper()
	cmd := exec.Command(agentsBinary(t), append([]string{"--addr", "127.0.0.1:0", "--log-level", "debug"}, storeArgs(t, dataDir)...)...)
	cmd.Env = append(os.Environ(), env...)
	stdout, _ := cmd.StdoutPipe()
	p := &process{cmd: cmd, stderr: &porttest.Buffer{}, exited: make(chan error, 1)}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		io.Copy(io.Discard, stdout)
		p.exited <- cmd.Wait()
	}()
	select {
	case line, ok := <-lines:
		m := readyLine.FindStringSubmatch(line)
		if !ok || m == nil {
			t.Fatalf("no ready line (got %q); stderr:\n%s", line, p.stderr)
		}
		p.url, p.token = m[1], m[2]
	case <-time.After(60 * time.Second):
		t.Fatalf("no ready line; stderr:\n%s", p.stderr)
	}
	return p
}

// wait returns the exit code.
func (p *process) wait(t *testing.T) int {
	t.Helper()
	select {
	case err := <-p.exited:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(60 * time.Second):
		t.Fatalf("the process did not exit; stderr:\n%s", p.stderr)
	}
	return -1
}

func TestBinaryPrintsTheReadyLineAndDrainsOnSIGTERM(t *testing.T) {
	t.Parallel()
	p := startBinary(t, t.TempDir())
	req, _ := http.NewRequest("GET", p.url+"/api/v1/auth/me", nil)
	req.Header.Set("Authorization", "Bearer "+p.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("the ready line's token does not sign in: %v %v", resp, err)
	}
	resp.Body.Close()
	p.cmd.Process.Signal(syscall.SIGTERM)
	if code := p.wait(t); code != 0 {
		t.Fatalf("exit code %d after SIGTERM; stderr:\n%s", code, p.stderr)
	}
	if !strings.Contains(p.stderr.String(), "draining") || !strings.Contains(p.stderr.String(), "stopped") {
		t.Fatalf("no drain in the log:\n%s", p.stderr)
	}
}

func TestBinaryExitsAtOnceOnASecondSignal(t *testing.T) {
	t.Parallel()
	p := startBinary(t, t.TempDir())
	// A request whose body never arrives keeps the drain waiting. Its
	// "100 Continue" proves the handler is already reading it.
	conn, err := net.Dial("tcp", strings.TrimPrefix(p.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "PUT /api/v1/settings/system_prompt HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"+
		"Content-Type: application/json\r\nContent-Length: 100\r\nExpect: 100-continue\r\n\r\n", p.token)
	conn.SetReadDeadline(time.Now().Add(60 * time.Second))
	status, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil || !strings.Contains(status, "100 Continue") {
		t.Fatalf("no 100 Continue: %q %v", status, err)
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	waitFor(t, func() bool { return strings.Contains(p.stderr.String(), "draining") })
	p.cmd.Process.Signal(syscall.SIGINT)
	if code := p.wait(t); code != 1 {
		t.Fatalf("exit code %d after a second signal, want 1; stderr:\n%s", code, p.stderr)
	}
	if !strings.Contains(p.stderr.String(), "second signal") {
		t.Fatalf("no second-signal line:\n%s", p.stderr)
	}
}

func TestBinaryRefusesTheWrongSecretKey(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	key := newKey(t)
	p := startBinary(t, dir, "AGENTS_SECRET_KEY="+key)
	p.cmd.Process.Signal(syscall.SIGTERM)
	p.wait(t)

	wrong := newKey(t)
	cmd := exec.Command(agentsBinary(t), append([]string{"--addr", "127.0.0.1:0"}, storeArgs(t, dir)...)...)
	cmd.Env = append(os.Environ(), "AGENTS_SECRET_KEY="+wrong)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("started with the wrong key: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), keyID(t, key)) || !strings.Contains(string(out), keyID(t, wrong)) {
		t.Fatalf("the refusal does not name both key ids:\n%s", out)
	}
	if strings.Contains(string(out), "ready") {
		t.Fatalf("printed a ready line:\n%s", out)
	}
}

// call is a minimal JSON client for a binary under test: body is encoded
// as JSON, but for a []byte sent as it is.
func (p *process) call(t *testing.T, method, path string, body any, headers ...string) (int, map[string]any, []byte) {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	default:
		enc, _ := json.Marshal(body)
		rd = bytes.NewReader(enc)
	}
	req, _ := http.NewRequest(method, p.url+path, rd)
	req.Header.Set("Authorization", "Bearer "+p.token)
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	json.Unmarshal(raw, &out)
	return resp.StatusCode, out, raw
}

func TestAPausedRunSurvivesSIGKILLAndResumes(t *testing.T) {
	t.Parallel()
	model, modelURL := startScripted(t)
	model.SetScript("gated", gatedScript())
	dir := t.TempDir()
	p := startBinary(t, dir)
	_, prov, _ := p.call(t, "POST", "/api/v1/providers", map[string]any{"name": "m", "base_url": modelURL + "/v1", "api_key": "k"})
	_, agent, _ := p.call(t, "POST", "/api/v1/agents", map[string]any{"name": "careful", "model": "gated", "provider_id": prov["id"],
		"approval": map[string]any{"approve_tools": []string{"todo_write"}}})
	_, sess, _ := p.call(t, "POST", "/api/v1/sessions", map[string]any{"agent_config_id": agent["id"], "name": "s"})
	sid := sess["id"].(string)
	code, run, raw := p.call(t, "POST", "/api/v1/sessions/"+sid+"/runs", map[string]any{"input": "note it"}, "Prefer", "wait=30")
	if code != 200 || run["status"] != "interrupted" {
		t.Fatalf("start: %d %s", code, raw)
	}
	runID := run["run_id"].(string)

	p.cmd.Process.Signal(syscall.SIGKILL)
	p.wait(t)
	p2 := startBinary(t, dir)
	_, _, raw = p2.call(t, "GET", "/api/v1/sessions/"+sid+"/approvals", nil)
	var pending []httpapi.ApprovalView
	json.Unmarshal(raw, &pending)
	if len(pending) != 1 || pending[0].RunID != runID {
		t.Fatalf("after the kill: %s", raw)
	}
	if _, r, _ := p2.call(t, "GET", "/api/v1/runs/"+runID, nil); r["status"] != "interrupted" {
		t.Fatalf("run after the kill: %+v", r)
	}
	// Follow the run, decide, and the same run finishes.
	req, _ := http.NewRequest("GET", p2.url+"/api/v1/runs/"+runID+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+p2.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if code, d, raw := p2.call(t, "POST", "/api/v1/approvals/"+pending[0].ID+"/approve", nil); code != 200 || d["run_id"] != runID {
		t.Fatalf("approve: %d %s", code, raw)
	}
	stream, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(stream), "event: run.output") || !strings.Contains(string(stream), "all done") {
		t.Fatalf("the resumed run did not finish on the stream:\n%s", stream)
	}
	// The sequence went on from before the kill.
	if strings.Contains(string(stream), "id: 1\n") {
		t.Fatalf("the sequence restarted:\n%.300s", stream)
	}
	// No entry lost, none doubled.
	_, _, raw = p2.call(t, "GET", "/api/v1/sessions/"+sid+"/messages", nil)
	var msgs []httpapi.EntryView
	json.Unmarshal(raw, &msgs)
	var kinds []string
	seen := map[string]bool{}
	for _, m := range msgs {
		if seen[m.ID] {
			t.Fatalf("entry %s twice", m.ID)
		}
		seen[m.ID] = true
		it := domain.ParseItem(m.Item)
		kinds = append(kinds, it.Kind()+":"+it.Role)
	}
	if strings.Join(kinds, " ") != "message:user message:assistant function_call: function_call_output: message:assistant" {
		t.Fatalf("transcript: %v", kinds)
	}
}
