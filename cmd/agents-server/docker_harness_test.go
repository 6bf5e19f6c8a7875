package main

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	dockersandbox "github.com/agents-server/agents-server/adapters/sandbox/docker"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/internal/testenv"
	"github.com/agents-server/agents-server/ports"
)

// The docker suites run against a real daemon: DOCKER_HOST (or the default
// socket) holding the image scripts/docker/up.sh builds. Without one they
// skip, saying why — unless AGENTS_CI=1, where they are required.

const sandboxImage = "agents-sandbox:test"

var (
	dockerOnce   sync.Once
	dockerReason string
)

// needDocker skips (or under AGENTS_CI=1 fails) a test without a daemon
// that runs the test image.
func needDocker(t testing.TB) {
	t.Helper()
	dockerOnce.Do(func() {
		rt := dockersandbox.New(dockersandbox.Options{})
		defer rt.Close()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		ok, out, err := rt.Test(ctx, ports.SandboxTarget{Type: domain.SandboxDocker, Config: &domain.DockerConfig{Image: sandboxImage, MemoryMB: 256, CPUs: 1}})
		switch {
		case err != nil:
			dockerReason = "no docker daemon answers: " + err.Error()
		case !ok:
			dockerReason = "the daemon cannot run " + sandboxImage + ": " + out
		}
	})
	if dockerReason == "" {
		return
	}
	testenv.Require(t, "docker suite (API on Docker)", dockerReason, dockerEnable)
}

// dockerEnable is the one command that runs the docker suites here: it
// starts the private daemon when needed and requires them.
const dockerEnable = "go tool task docker:test"

// termClient is a /ws/terminal connection.
type termClient struct {
	t  *testing.T
	ws *websocket.Conn
}

// dialTerminal authenticates and sends terminal.open; it returns the first
// control message's type and payload.
func (h *harness) dialTerminal(token, projectID string) (*termClient, string, map[string]any) {
	h.t.Helper()
	ws, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(h.base, "http")+"/ws/terminal", nil)
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { ws.Close() })
	c := &termClient{t: h.t, ws: ws}
	if err := ws.WriteJSON(map[string]any{"type": "auth", "token": token}); err != nil {
		h.t.Fatal(err)
	}
	if typ, _ := c.control(); typ != "auth.ok" {
		h.t.Fatalf("auth answered %s", typ)
	}
	if err := ws.WriteJSON(map[string]any{"type": "terminal.open", "payload": map[string]any{"project_id": projectID, "cols": 80, "rows": 24}}); err != nil {
		h.t.Fatal(err)
	}
	typ, p := c.control()
	return c, typ, p
}

// control reads the next text frame (skipping output bytes).
func (c *termClient) control() (string, map[string]any) {
	c.t.Helper()
	for {
		c.ws.SetReadDeadline(time.Now().Add(2 * time.Minute))
		mt, data, err := c.ws.ReadMessage()
		if err != nil {
			c.t.Fatalf("terminal read: %v", err)
		}
		if mt != websocket.TextMessage {
			continue
		}
		var env struct {
			Type    string         `json:"type"`
			Payload map[string]any `json:"payload"`
		}
		if err := json.Unmarshal(data, &env); err != nil {
			c.t.Fatalf("control frame %q: %v", data, err)
		}
		return env.Type, env.Payload
	}
}

// typeIn sends keystrokes as a binary frame.
func (c *termClient) typeIn(s string) {
	c.t.Helper()
	if err := c.ws.WriteMessage(websocket.BinaryMessage, []byte(s)); err != nil {
		c.t.Fatal(err)
	}
}

// expect reads output until it contains want; it fails on a control frame
// first.
func (c *termClient) expect(want string) string {
	c.t.Helper()
	var seen strings.Builder
	for !strings.Contains(seen.String(), want) {
		c.ws.SetReadDeadline(time.Now().Add(time.Minute))
		mt, data, err := c.ws.ReadMessage()
		if err != nil {
			c.t.Fatalf("waiting for %q (seen %q): %v", want, seen.String(), err)
		}
		if mt == websocket.TextMessage {
			c.t.Fatalf("waiting for %q: control %s", want, data)
		}
		seen.Write(data)
	}
	return seen.String()
}
