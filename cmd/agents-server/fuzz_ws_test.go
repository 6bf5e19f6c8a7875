package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/agents-server/agents-server/adapters/ws"
)

// FuzzWSFrames sends any text frame to a signed-in WebSocket connection of
// a real server: whatever it says, the connection stays up and answers the
// next message — a malformed or unknown command gets an error envelope,
// never a closed socket or a crash.
func FuzzWSFrames(f *testing.F) {
	cfg := testConfig(f)
	a, err := newApp(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		f.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- a.serve() }()
	f.Cleanup(func() {
		_ = a.shutdown()
		<-served
	})
	conn, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(a.URL(), "http")+"/ws", nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { conn.Close() })
	if err := conn.WriteJSON(map[string]any{"type": "auth", "payload": map[string]any{}, "token": a.wb.AdminToken()}); err != nil {
		f.Fatal(err)
	}
	if _, frame, err := conn.ReadMessage(); err != nil || !strings.Contains(string(frame), "auth.ok") {
		f.Fatalf("auth: %s %v", frame, err)
	}
	for _, seed := range []string{`{}`, `{"type":"run.create","payload":{"session_id":"s","input":"hi"}}`, `{"type":"run.subscribe","payload":{"run_id":"r","from_seq":-1}}`,
		`{"type":"run.cancel","payload":{"run_id":"r","mode":"later"}}`, `{"type":"tool.approve","payload":{}}`, `{"type":"run.inject"}`, `[]`, `null`,
		`{"type":"auth","token":"x"}`, `{"type":"run.create","payload":"x"}`, "\xff", ""} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, frame []byte) {
		if len(frame) > ws.MaxFrame {
			return
		}
		if err := conn.WriteMessage(websocket.TextMessage, frame); err != nil {
			t.Fatalf("the connection closed after %q: %v", frame, err)
		}
		if err := conn.WriteJSON(map[string]any{"type": "fuzz.probe"}); err != nil {
			t.Fatalf("the connection closed after %q: %v", frame, err)
		}
		for {
			conn.SetReadDeadline(time.Now().Add(10 * time.Second))
			_, got, err := conn.ReadMessage()
			if err != nil {
				t.Fatalf("after %q the connection failed: %v", frame, err)
			}
			var env struct {
				Type    string          `json:"type"`
				Payload json.RawMessage `json:"payload"`
			}
			if json.Unmarshal(got, &env) != nil {
				t.Fatalf("after %q the server sent a frame that is not JSON: %q", frame, got)
			}
			if env.Type == "error" && strings.Contains(string(env.Payload), "fuzz.probe") {
				return
			}
		}
	})
}
