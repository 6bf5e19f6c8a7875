package main

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/gorilla/websocket"

	"github.com/agents-server/agents-server/adapters/httpapi"
	"github.com/agents-server/agents-server/adapters/llm/scripted"
	"github.com/agents-server/agents-server/core/domain"
)

// Peers and clients for run tests: the scripted model over real HTTP, an SSE
// reader and a WebSocket client.

// startScripted serves a scripted model for the test.
func startScripted(t *testing.T) (*scripted.Server, string) {
	t.Helper()
	s := scripted.New(scripted.Options{})
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	return s, srv.URL
}

// protocols are the three wire protocols, as provider bodies pointing at
// the scripted model.
func protocols(url string) map[string]map[string]any {
	return map[string]map[string]any{
		"openai-responses": {"name": "scripted-responses", "type": "openai", "api": "responses", "base_url": url + "/v1", "api_key": "sk-test"},
		"openai-chat":      {"name": "scripted-chat", "type": "openai", "api": "chat_completions", "base_url": url + "/v1", "api_key": "sk-test"},
		"anthropic":        {"name": "scripted-anthropic", "type": "anthropic", "base_url": url, "api_key": "sk-ant-test"},
	}
}

// agentOn creates a provider and an agent on it and returns the agent's id.
func (h *harness) agentOn(token string, provider map[string]any, agent map[string]any) string {
	h.t.Helper()
	p := h.createProvider(token, provider)
	agent["provider_id"] = p.ID
	return h.createAgent(token, agent).ID
}

// startRun posts a run and returns its id.
func (h *harness) startRun(token, sessionID string, body map[string]any) string {
	h.t.Helper()
	var r httpapi.RunStateView
	h.call("POST", "/api/v1/sessions/"+sessionID+"/runs", token, body).want(h.t, 201).decode(h.t, &r)
	if r.RunID == "" || r.Status != "running" {
		h.t.Fatalf("started = %+v", r)
	}
	return r.RunID
}

// sseEvent is one event read off an SSE stream.
type sseEvent struct {
	ID    int64
	Type  string
	Event domain.Event
}

// sseStream reads a run's SSE stream; every event read is checked against
// the document's ServerEvent.
type sseStream struct {
	resp   *http.Response
	rd     *bufio.Reader
	events *openapi3.Schema
}

func (h *harness) openSSE(token, runID string, lastEventID int64) *sseStream {
	h.t.Helper()
	req, _ := http.NewRequest("GET", h.base+"/api/v1/runs/"+runID+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	if lastEventID > 0 {
		req.Header.Set("Last-Event-ID", strconv.FormatInt(lastEventID, 10))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	// The stream is never read whole, so only the request and the status are
	// checked against the document.
	h.checkExchange(req, nil, resp.StatusCode)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		h.t.Fatalf("events: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	h.t.Cleanup(func() { resp.Body.Close() })
	return &sseStream{resp: resp, rd: bufio.NewReaderSize(resp.Body, 1<<16), events: h.eventSchema()}
}

// next reads one event; ok is false at the end of the stream.
func (s *sseStream) next(t *testing.T) (sseEvent, bool) {
	t.Helper()
	var ev sseEvent
	var data string
	for {
		line, err := s.rd.ReadString('\n')
		if err != nil {
			return ev, false
		}
		line = strings.TrimRight(line, "\n")
		switch {
		case line == "":
			if data == "" {
				continue // a keep-alive comment ended
			}
			if err := json.Unmarshal([]byte(data), &ev.Event); err != nil {
				t.Fatalf("bad data %q: %v", data, err)
			}
			checkEvent(t, s.events, []byte(data))
			if ev.Type != ev.Event.Type {
				t.Errorf("SSE event %q carries a %q envelope", ev.Type, ev.Event.Type)
			}
			return ev, true
		case strings.HasPrefix(line, ":"):
		case strings.HasPrefix(line, "id: "):
			ev.ID, _ = strconv.ParseInt(line[4:], 10, 64)
		case strings.HasPrefix(line, "event: "):
			ev.Type = line[7:]
		case strings.HasPrefix(line, "data: "):
			data = line[6:]
		}
	}
}

// all reads to the end of the stream.
func (s *sseStream) all(t *testing.T) []sseEvent {
	t.Helper()
	var out []sseEvent
	for {
		ev, ok := s.next(t)
		if !ok {
			return out
		}
		out = append(out, ev)
	}
}

func (s *sseStream) close() { s.resp.Body.Close() }

// eventSchema is the served document's union of every event, which the
// events the tests read are validated against: the document cannot state a
// payload the server does not send.
func (h *harness) eventSchema() *openapi3.Schema {
	h.t.Helper()
	u := h.doc.Components.Schemas["ServerEvent"]
	if u == nil || u.Value == nil {
		h.t.Fatal("the OpenAPI document has no ServerEvent component")
	}
	return u.Value
}

// checkEvent validates one event frame against events (nil: not checked).
func checkEvent(t *testing.T, events *openapi3.Schema, frame []byte) {
	t.Helper()
	if events == nil {
		return
	}
	var v any
	if err := json.Unmarshal(frame, &v); err != nil {
		t.Errorf("event frame %s: %v", frame, err)
		return
	}
	if err := events.VisitJSON(v); err != nil {
		t.Errorf("an event does not match the OpenAPI document's ServerEvent: %v\nframe: %s", err, frame)
	}
}

// payload decodes an event's payload.
func payload[T any](t *testing.T, ev domain.Event) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(ev.Payload, &v); err != nil {
		t.Fatalf("payload of %s: %v", ev.Type, err)
	}
	return v
}

// wsClient is an authenticated WebSocket connection. On the bus every
// event read is checked against the document's ServerEvent.
type wsClient struct {
	t      *testing.T
	ws     *websocket.Conn
	events *openapi3.Schema // nil off the bus (the terminal)
}

func (h *harness) dialWS(token string) *wsClient {
	h.t.Helper()
	url := "ws" + strings.TrimPrefix(h.base, "http") + "/ws"
	ws, _, err := websocket.DefaultDialer.Dial(url, nil)
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { ws.Close() })
	c := &wsClient{t: h.t, ws: ws, events: h.eventSchema()}
	c.send("auth", map[string]any{}, "token", token)
	if env := c.read(); env.Type != "auth.ok" {
		h.t.Fatalf("auth answered %+v", env)
	}
	return c
}

// send writes {type, payload} (plus top-level extra fields, for auth).
func (c *wsClient) send(typ string, payload any, extra ...string) {
	c.t.Helper()
	msg := map[string]any{"type": typ, "payload": payload}
	for i := 0; i+1 < len(extra); i += 2 {
		msg[extra[i]] = extra[i+1]
	}
	if err := c.ws.WriteJSON(msg); err != nil {
		c.t.Fatal(err)
	}
}

func (c *wsClient) read() domain.Event {
	c.t.Helper()
	c.ws.SetReadDeadline(time.Now().Add(30 * time.Second))
	_, frame, err := c.ws.ReadMessage()
	var ev domain.Event
	if err == nil {
		err = json.Unmarshal(frame, &ev)
	}
	if err != nil {
		c.t.Fatalf("ws read: %v", err)
	}
	// auth.ok and the error envelope answer the connection, not a run.
	if ev.Type != "auth.ok" && ev.Type != "error" {
		checkEvent(c.t, c.events, frame)
	}
	return ev
}

// until reads events of a run until a final one.
func (c *wsClient) until(runID string) []domain.Event {
	c.t.Helper()
	var out []domain.Event
	for {
		ev := c.read()
		var p struct {
			RunID string `json:"run_id"`
		}
		json.Unmarshal(ev.Payload, &p)
		if p.RunID != runID && ev.Type != domain.EventError {
			continue
		}
		out = append(out, ev)
		if ev.Final() {
			return out
		}
	}
}

func websocketDial(url string) (*websocket.Conn, *http.Response, error) {
	return websocket.DefaultDialer.Dial(url, nil)
}

// isClose reports whether err is a close frame with code.
func isClose(err error, code int) bool { return websocket.IsCloseError(err, code) }
