package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/agents-server/agents-server/adapters/httpapi"
	"github.com/agents-server/agents-server/adapters/llm/openai"
	"github.com/agents-server/agents-server/adapters/llm/scripted"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/ports"
)

// BenchmarkStreamOverhead compares one streamed answer of 2,000 deltas read
// straight from the scripted model (through the official SDK, as the server
// reads it) with the same answer read through the whole server: run start,
// model adapter, hub, the WebSocket bus (what the UI reads), client. The
// ratio is the server's overhead.
//
//	go test -run '^$' -bench StreamOverhead ./cmd/agents-server
func BenchmarkStreamOverhead(b *testing.B) {
	const deltas = 2000
	model := scripted.New(scripted.Options{})
	model.SetScript("stream", oneStep(scripted.Step{Text: strings.Repeat("tok", deltas), ChunkSize: 3}))
	modelSrv := httptest.NewServer(model.Handler())
	defer modelSrv.Close()
	endpoint := ports.ProviderEndpoint{Name: "bench", Type: "openai", API: "responses", BaseURL: modelSrv.URL + "/v1", APIKey: "k",
		Outbound: domain.OpenOutbound} // a loopback model: as an admin's provider reaches it

	var direct, served time.Duration
	b.Run("direct", func(b *testing.B) {
		llm := openai.New(openai.Options{})
		start := time.Now()
		for b.Loop() {
			n := 0
			_, err := llm.Generate(context.Background(), ports.ModelRequest{Endpoint: endpoint, Model: "stream",
				Input: []json.RawMessage{json.RawMessage(`{"type":"message","role":"user","content":[{"type":"input_text","text":"go"}]}`)}},
				func(ports.ModelDelta) { n++ })
			if err != nil || n != deltas {
				b.Fatalf("%d deltas, %v", n, err)
			}
		}
		direct = time.Since(start) / time.Duration(b.N)
	})

	dir := b.TempDir()
	cfg := config{Addr: "127.0.0.1:0", DataDir: dir, DatabaseURL: databaseFor(b, dir), LogLevel: "error", LogFormat: "text",
		HTTP: httpapi.Config{BodyLimit: httpapi.DefaultBodyLimit, RateLimits: roomyLimits}, PasswordParams: fastPasswords, DrainTimeout: time.Second}
	a, err := newApp(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		b.Fatal(err)
	}
	go a.serve()
	defer a.shutdown()
	call := benchCall(b, a)
	prov := call("POST", "/api/v1/providers", `{"name":"bench","base_url":"`+modelSrv.URL+`/v1","api":"responses","api_key":"k"}`)
	agent := call("POST", "/api/v1/agents", `{"name":"bench","model":"stream","provider_id":"`+prov["id"].(string)+`"}`)
	b.Run("through-server", func(b *testing.B) {
		ws, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(a.URL(), "http")+"/ws", nil)
		if err != nil {
			b.Fatal(err)
		}
		defer ws.Close()
		ws.WriteJSON(map[string]string{"type": "auth", "token": a.wb.AdminToken()})
		ws.ReadMessage()
		start := time.Now()
		for b.Loop() {
			sess := call("POST", "/api/v1/sessions", `{"agent_config_id":"`+agent["id"].(string)+`"}`)
			call("POST", "/api/v1/sessions/"+sess["id"].(string)+"/runs", `{"input":"go"}`)
			n := 0
			for {
				_, frame, err := ws.ReadMessage()
				if err != nil {
					b.Fatal(err)
				}
				if bytes.HasPrefix(frame, []byte(`{"type":"run.step"`)) {
					n++
				}
				if bytes.HasPrefix(frame, []byte(`{"type":"run.output"`)) || bytes.HasPrefix(frame, []byte(`{"type":"run.error"`)) {
					break
				}
			}
			if n != deltas {
				b.Fatalf("%d deltas", n)
			}
		}
		served = time.Since(start) / time.Duration(b.N)
	})
	if direct > 0 && served > 0 {
		b.Logf("per answer: direct %s, through the server %s: %.2f×", direct, served, float64(served)/float64(direct))
	}
}

// benchCall is a benchmark's JSON client for srv, as its bootstrap admin.
func benchCall(b *testing.B, srv *app) func(method, path, body string) map[string]any {
	return func(method, path, body string) map[string]any {
		req, _ := http.NewRequest(method, srv.URL()+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+srv.wb.AdminToken())
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		json.NewDecoder(resp.Body).Decode(&out)
		return out
	}
}
