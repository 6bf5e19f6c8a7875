//go:build unix

package mcp

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agents-server/agents-server/adapters/mcp/mcptest"
	"github.com/agents-server/agents-server/ports"
)

// lockedBuffer is a stderr sink safe to read while the program writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestAStdioServerIsStartedSpokenToAndEnded runs the reference server in
// stdio mode: its tools list and echo answers over the program's stdin and
// stdout, killing it ends the session with how it ended, and closing a
// session ends what the program started too (its process group).
func TestAStdioServerIsStartedSpokenToAndEnded(t *testing.T) {
	t.Parallel()
	node, args := mcptest.EverythingStdio(t)
	var stderr lockedBuffer
	// A shell in front starts a child that would outlive the program if
	// only the program were ended, and says its pid; exec leaves the
	// shell's pid to node.
	script := `sleep 1000 & echo "child=$!" >&2; exec "$@"`
	s, err := dial(t, ports.MCPTarget{Name: "everything", Stdio: &ports.MCPStdio{Command: "sh",
		Args: append([]string{"-c", script, "sh", node}, args...), Stderr: &stderr}})
	if err != nil {
		t.Fatal(err)
	}
	tools, err := s.ListTools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, tool := range tools {
		found = found || tool.Name == "echo"
	}
	if !found {
		t.Fatalf("tools = %+v", tools)
	}
	res, err := s.CallTool(t.Context(), "echo", []byte(`{"message":"over stdio"}`))
	if err != nil || len(res.Content) == 0 || !strings.Contains(res.Content[0].Text, "over stdio") {
		t.Fatalf("echo = %+v, %v", res, err)
	}
	child := pidAfter(t, &stderr, "child=")
	if mcptest.Ended(child) {
		t.Fatalf("the program's child %d is not running", child)
	}
	if err := s.Close(); err != nil && !strings.Contains(err.Error(), "closed") {
		t.Logf("close: %v", err)
	}
	mcptest.WaitEnded(t, child) // killed with the program's process group

	// Killed from outside: the session ends and says how.
	s2, err := dial(t, ports.MCPTarget{Name: "everything", Stdio: &ports.MCPStdio{Command: node, Args: args}})
	if err != nil {
		t.Fatal(err)
	}
	p := s2.(*session).program
	pid := programPID(t, p)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s2.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("the session outlived its program")
	}
	if err := s2.Err(); err == nil || !strings.Contains(err.Error(), "the program was ended by killed") {
		t.Fatalf("err = %v", err)
	}
}

// TestAStdioProgramGetsOnlyItsOwnEnvironment checks that a program on the
// host inherits a minimal environment, never the workbench's own
// variables (its keys), plus what it was configured with; and that one
// that exits before the handshake says how it ended.
func TestAStdioProgramGetsOnlyItsOwnEnvironment(t *testing.T) {
	t.Setenv("AGENTS_SECRET_KEY", "must-not-leak")
	var stderr lockedBuffer
	_, err := dial(t, ports.MCPTarget{Name: "env", Stdio: &ports.MCPStdio{Command: "sh", Args: []string{"-c", "env >&2; exit 3"},
		Env: map[string]string{"GIVEN": "yes"}, Stderr: &stderr}})
	var me *ports.MCPError
	if !errors.As(err, &me) || me.Kind != ports.MCPUnreachable || !strings.Contains(me.Message, "exited with status 3 before the handshake") {
		t.Fatalf("err = %v", err)
	}
	env := stderr.String()
	if !strings.Contains(env, "GIVEN=yes") || !strings.Contains(env, "PATH=") || strings.Contains(env, "must-not-leak") {
		t.Fatalf("the program's environment:\n%s", env)
	}

	_, err = dial(t, ports.MCPTarget{Name: "nothing", Stdio: &ports.MCPStdio{Command: "/no/such/program"}})
	if !errors.As(err, &me) || me.Kind != ports.MCPUnreachable || !strings.Contains(me.Message, "could not start nothing") {
		t.Fatalf("err = %v", err)
	}
}

// programPID is the pid of a host program's process.
func programPID(t *testing.T, p *program) int {
	t.Helper()
	if p == nil || p.pid == 0 {
		t.Fatal("no host program")
	}
	return p.pid
}

// pidAfter waits for "<prefix><pid>" in what the program wrote.
func pidAfter(t *testing.T, out *lockedBuffer, prefix string) int {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		for line := range strings.SplitSeq(out.String(), "\n") {
			if v, ok := strings.CutPrefix(line, prefix); ok {
				pid, err := strconv.Atoi(strings.TrimSpace(v))
				if err == nil {
					return pid
				}
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no %q in %q", prefix, out.String())
	return 0
}
