package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/agents-server/agents-server/adapters/httpapi"
	"github.com/agents-server/agents-server/adapters/llm/scripted"
	"github.com/agents-server/agents-server/internal/workbenchparts"
)

func TestHealthServerInfoAndOpenAPIAreServed(t *testing.T) {
	t.Parallel()
	h := startServer(t, testConfig(t))

	var health httpapi.Health
	h.call("GET", "/health", "", nil).want(t, 200).decode(t, &health)
	if health.Status != "ok" || health.Version == "" {
		t.Fatalf("health = %+v", health)
	}
	var info httpapi.ServerInfo
	h.call("GET", "/api/v1/server", h.admin, nil).want(t, 200).decode(t, &info)
	if info.Version != health.Version || info.TimeZone == "" {
		t.Fatalf("server info = %+v", info)
	}
	doc := h.call("GET", "/api/v1/openapi.yaml", "", nil).want(t, 200)
	if ct := doc.Header.Get("Content-Type"); ct != "application/yaml" {
		t.Fatalf("openapi content type %q", ct)
	}
	if !bytes.Contains(doc.Body, []byte("openapi: 3.1.0")) {
		t.Fatalf("not an OpenAPI 3.1 document: %.200s", doc.Body)
	}
}

// Responses are gzipped for clients that accept it, except event streams,
// which must leave event by event.
func TestResponsesAreCompressedButEventStreamsAreNot(t *testing.T) {
	t.Parallel()
	h := startServer(t, testConfig(t))
	get := func(path string, header ...string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest("GET", h.base+path, nil)
		req.Header.Set("Authorization", "Bearer "+h.admin)
		req.Header.Set("Accept-Encoding", "gzip")
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	resp := get("/api/v1/openapi.yaml")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("openapi.yaml: %d, Content-Encoding %q", resp.StatusCode, resp.Header.Get("Content-Encoding"))
	}
	zr, err := gzip.NewReader(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(zr)
	if err != nil || !bytes.Contains(body, []byte("openapi:")) {
		t.Fatalf("the gzipped document does not read back: %v %.80s", err, body)
	}
	// A write's answer is never compressed, however long.
	req, _ := http.NewRequest("POST", h.base+"/api/v1/agents", strings.NewReader(`{"name":"long answer","model":"m","instructions":"`+strings.Repeat("be brief. ", 300)+`"}`))
	req.Header.Set("Authorization", "Bearer "+h.admin)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept-Encoding", "gzip")
	created, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	answer, _ := io.ReadAll(created.Body)
	created.Body.Close()
	if created.StatusCode != 201 || created.Header.Get("Content-Encoding") != "" || len(answer) < 2048 {
		t.Fatalf("POST /agents: %d, Content-Encoding %q, %d bytes", created.StatusCode, created.Header.Get("Content-Encoding"), len(answer))
	}
	// An error is still a plain envelope.
	if resp := get("/api/v1/agents/nope"); resp.Header.Get("Content-Encoding") != "" || resp.StatusCode != 404 {
		t.Fatalf("404: %d, Content-Encoding %q", resp.StatusCode, resp.Header.Get("Content-Encoding"))
	}
	// A run's event stream is never compressed.
	model, url := startScripted(t)
	model.SetScript("plain", oneStep(scripted.Step{Text: strings.Repeat("words ", 400)}))
	agent := h.agentOn(h.admin, protocols(url)["openai-chat"], map[string]any{"name": "plain", "model": "plain"})
	sess := h.createSession(h.admin, map[string]any{"agent_config_id": agent, "name": "n"})
	var run httpapi.RunStateView
	h.call("POST", "/api/v1/sessions/"+sess.ID+"/runs", h.admin, map[string]any{"input": "go"}, "Prefer", "wait=30").want(t, 200).decode(t, &run)
	resp = get("/api/v1/runs/"+run.RunID+"/events", "Accept", "text/event-stream")
	stream, _ := io.ReadAll(resp.Body)
	if resp.Header.Get("Content-Encoding") != "" || !bytes.Contains(stream, []byte("run.output")) {
		t.Fatalf("event stream: Content-Encoding %q, %d bytes", resp.Header.Get("Content-Encoding"), len(stream))
	}
}

func TestErrorEnvelopeForUnknownRoutesAndMethods(t *testing.T) {
	t.Parallel()
	h := startServer(t, testConfig(t))

	for _, path := range []string{"/api/v1/nope", "/api/server", "/api", "/api/v2/server", "/api/v1/auth/users/x/y"} {
		h.call("GET", path, h.admin, nil).wantErr(t, 404, "not_found")
	}
	r := h.call("PUT", "/api/v1/server", h.admin, "{}")
	r.wantErr(t, 405, "validation")
	if allow := r.Header.Get("Allow"); allow != "GET" {
		t.Fatalf("Allow = %q", allow)
	}
	h.call("POST", "/api/v1/auth/users/some-id", h.admin, "{}").wantErr(t, 405, "validation")
	// Everything else is the UI, with its security headers and no CORS.
	ui := h.call("GET", "/some/client/route", "", nil, "Origin", "https://evil.example").want(t, 200)
	if !strings.Contains(ui.Header.Get("Content-Security-Policy"), "default-src 'self'") {
		t.Fatalf("CSP = %q", ui.Header.Get("Content-Security-Policy"))
	}
	if ui.Header.Get("X-Content-Type-Options") != "nosniff" || ui.Header.Get("X-Frame-Options") != "DENY" {
		t.Fatalf("security headers missing: %v", ui.Header)
	}
	api := h.call("GET", "/api/v1/server", h.admin, nil, "Origin", "https://evil.example").want(t, 200)
	for name := range api.Header {
		if strings.HasPrefix(name, "Access-Control-") {
			t.Fatalf("CORS header %s sent", name)
		}
	}
}

func TestBearerTokenIsRequired(t *testing.T) {
	t.Parallel()
	h := startServer(t, testConfig(t))

	r := h.call("GET", "/api/v1/auth/me", "", nil)
	r.wantErr(t, 401, "unauthorized")
	if !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), "Bearer") {
		t.Fatalf("WWW-Authenticate = %q", r.Header.Get("WWW-Authenticate"))
	}
	h.call("GET", "/api/v1/auth/me", "ags_l_not-a-real-token", nil).wantErr(t, 401, "unauthorized")
	h.call("GET", "/api/v1/auth/me", "", nil, "Authorization", "Basic YWRtaW46eA==").wantErr(t, 401, "unauthorized")
	// A token in the query string is never read.
	h.call("GET", "/api/v1/auth/me?token="+h.admin, "", nil).wantErr(t, 401, "unauthorized")
	h.call("GET", "/api/v1/auth/me", h.admin, nil).want(t, 200)
	// The OpenAPI document and login need no token.
	h.call("GET", "/api/v1/openapi.yaml", "", nil).want(t, 200)
}

func TestDeclaredOversizeBodyIs413WithoutReadingIt(t *testing.T) {
	t.Parallel()
	h := startServer(t, testConfig(t))

	conn, err := net.Dial("tcp", strings.TrimPrefix(h.base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// Declare 2 MiB and send none of it: an answer proves the server did not
	// wait to read the body.
	fmt.Fprintf(conn, "PUT /api/v1/settings/system_prompt HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"+
		"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n", h.admin, 2<<20)
	conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer before the body was sent: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	r := reply{Status: resp.StatusCode, Header: resp.Header, Body: body}
	d := r.wantErr(t, 413, "validation")
	if !strings.Contains(d.Message, "1 MiB") {
		t.Fatalf("message %q does not name the limit", d.Message)
	}
}

func TestUndeclaredBodyIsCutAtTheCapAndFailsAsValidation(t *testing.T) {
	t.Parallel()
	h := startServer(t, testConfig(t))

	big := `{"value":"` + strings.Repeat("x", 1<<20+100) + `"}`
	// io.MultiReader hides the length, so the client sends it chunked.
	req, _ := http.NewRequest("PUT", h.base+"/api/v1/settings/system_prompt", io.MultiReader(strings.NewReader(big)))
	req.Header.Set("Authorization", "Bearer "+h.admin)
	req.Header.Set("Content-Type", "application/json")
	if req.ContentLength != 0 {
		t.Fatalf("request would declare its length (%d)", req.ContentLength)
	}
	d := h.send(req, []byte(big)).wantErr(t, 400, "validation")
	if !strings.Contains(d.Message, "exceeds the 1 MiB limit") {
		t.Fatalf("message %q", d.Message)
	}
	// Nothing was written.
	var list []httpapi.SettingView
	h.call("GET", "/api/v1/settings", h.admin, nil).want(t, 200).decode(t, &list)
	for _, s := range list {
		if s.Key == "system_prompt" && s.Set {
			t.Fatalf("system_prompt was stored by a refused request")
		}
	}
}

func TestBodiesAreStrict(t *testing.T) {
	t.Parallel()
	h := startServer(t, testConfig(t))
	path := "/api/v1/settings/trace_span_data_kb"

	d := h.call("PUT", path, h.admin, `{"value":"12","colour":"blue"}`).wantErr(t, 400, "validation")
	if d.Fields["colour"] == "" || !strings.Contains(d.Message, "colour") {
		t.Fatalf("unknown field not named: %+v", d)
	}
	// Case matters: encoding/json alone would accept "Value".
	h.call("PUT", path, h.admin, `{"Value":"12"}`).wantErr(t, 400, "validation")
	d = h.call("PUT", path, h.admin, `{"value":12}`).wantErr(t, 400, "validation")
	if d.Fields["value"] == "" {
		t.Fatalf("type error not on the field: %+v", d)
	}
	h.call("PUT", path, h.admin, `{"value":`).wantErr(t, 400, "validation")
	h.call("PUT", path, h.admin, `["value"]`).wantErr(t, 400, "validation")
	h.call("PUT", path, h.admin, ``).wantErr(t, 400, "validation")
	h.call("PUT", path, h.admin, `{"value":"12"} trailing`).wantErr(t, 400, "validation")

	// Sending back the whole object that was read is fine: fields only the
	// server writes are accepted and ignored.
	var got httpapi.SettingView
	h.call("PUT", path, h.admin, `{"value":"12"}`).want(t, 200).decode(t, &got)
	got.Value = "13"
	var again httpapi.SettingView
	h.call("PUT", path, h.admin, got).want(t, 200).decode(t, &again)
	if again.Key != "trace_span_data_kb" || again.Value != "13" || !again.Set {
		t.Fatalf("round-trip write = %+v", again)
	}
	// Read-only fields cannot redirect the write.
	h.call("PUT", path, h.admin, `{"value":"14","key":"approval_ttl_minutes"}`).want(t, 200).decode(t, &again)
	if again.Key != "trace_span_data_kb" || again.Value != "14" {
		t.Fatalf("key in body changed the target: %+v", again)
	}
}

func TestRateLimitsAnswer429WithRetryAfter(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.HTTP.RateLimits = httpapi.RateLimits{
		Read:     httpapi.Budget{PerSecond: 0.01, Burst: 5},
		Write:    httpapi.Budget{PerSecond: 0.01, Burst: 3},
		AuthFail: httpapi.Budget{PerSecond: 1000, Burst: 10000},
	}
	h := startServer(t, cfg)
	// startServer spent one read on the OpenAPI document.
	for i := 0; i < 4; i++ {
		h.call("GET", "/api/v1/auth/me", h.admin, nil).want(t, 200)
	}
	r := h.call("GET", "/api/v1/auth/me", h.admin, nil)
	r.wantErr(t, 429, "rate_limited")
	secs, err := strconv.Atoi(r.Header.Get("Retry-After"))
	if err != nil || secs < 1 {
		t.Fatalf("Retry-After = %q", r.Header.Get("Retry-After"))
	}
	// Writes have their own budget.
	for i := 0; i < 3; i++ {
		h.call("PUT", "/api/v1/settings/system_prompt", h.admin, map[string]string{"value": "hi"}).want(t, 200)
	}
	h.call("PUT", "/api/v1/settings/system_prompt", h.admin, map[string]string{"value": "hi"}).wantErr(t, 429, "rate_limited")
}

func TestFailedAuthenticationSpendsAStricterBudget(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.HTTP.RateLimits.AuthFail = httpapi.Budget{PerSecond: 0.001, Burst: 3}
	h := startServer(t, cfg)
	h.createUser("carol", "carol-password", "member")

	h.call("GET", "/api/v1/auth/me", "ags_l_guess1", nil).wantErr(t, 401, "unauthorized")
	h.call("POST", "/api/v1/auth/login", "", map[string]string{"username": "carol", "password": "wrong-password"}).
		wantErr(t, 401, "unauthorized")
	h.call("GET", "/api/v1/auth/me", "ags_l_guess2", nil).wantErr(t, 401, "unauthorized")
	// The budget is spent: the next credential from this address is refused
	// before it is checked, even a right one.
	r := h.call("GET", "/api/v1/auth/me", "ags_l_guess3", nil)
	r.wantErr(t, 429, "rate_limited")
	if r.Header.Get("Retry-After") == "" {
		t.Fatal("429 without Retry-After")
	}
	h.call("GET", "/api/v1/auth/me", h.admin, nil).wantErr(t, 429, "rate_limited")
	h.call("POST", "/api/v1/auth/login", "", map[string]string{"username": "carol", "password": "carol-password"}).
		wantErr(t, 429, "rate_limited")
}

// The WebSockets share the REST API's failed-authentication budget: a
// token cannot be guessed faster over /ws or /ws/terminal.
func TestWebSocketsSpendTheSameAuthBudget(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.HTTP.RateLimits.AuthFail = httpapi.Budget{PerSecond: 0.001, Burst: 3}
	h := startServer(t, cfg)
	wsBase := "ws" + strings.TrimPrefix(h.base, "http")

	// guess signs in with a wrong token and reads the refusal.
	guess := func(path string) {
		t.Helper()
		ws, _, err := websocket.DefaultDialer.Dial(wsBase+path, nil)
		if err != nil {
			t.Fatalf("dial %s: %v", path, err)
		}
		defer ws.Close()
		ws.WriteJSON(map[string]string{"type": "auth", "token": "ags_l_wrong"})
		var env struct {
			Type    string `json:"type"`
			Payload struct {
				Code string `json:"code"`
			} `json:"payload"`
		}
		if err := ws.ReadJSON(&env); err != nil || env.Type != "error" || env.Payload.Code != "unauthorized" {
			t.Fatalf("%s with a wrong token answered %+v, %v", path, env, err)
		}
	}
	guess("/ws")
	guess("/ws/terminal")
	h.call("GET", "/api/v1/auth/me", "ags_l_guess", nil).wantErr(t, 401, "unauthorized")

	// Spent: both sockets refuse before the upgrade, with the envelope and
	// Retry-After, even for a right token; so does REST.
	for _, path := range []string{"/ws", "/ws/terminal"} {
		_, resp, err := websocket.DefaultDialer.Dial(wsBase+path, nil)
		if err == nil || resp == nil || resp.StatusCode != 429 || resp.Header.Get("Retry-After") == "" {
			t.Fatalf("%s after the budget: %v %+v", path, err, resp)
		}
		var body struct {
			Error struct{ Code string } `json:"error"`
		}
		if json.NewDecoder(resp.Body).Decode(&body); body.Error.Code != "rate_limited" {
			t.Fatalf("%s refusal body = %+v", path, body)
		}
	}
	h.call("GET", "/api/v1/auth/me", h.admin, nil).wantErr(t, 429, "rate_limited")
}

func TestDrainRefusesNewWorkWhileInFlightRequestsFinish(t *testing.T) {
	t.Parallel()
	h := startServer(t, testConfig(t))

	// Hold a request in flight: its body never ends until we say so.
	pr, pw := io.Pipe()
	held, _ := http.NewRequest("PUT", h.base+"/api/v1/settings/system_prompt", pr)
	held.Header.Set("Authorization", "Bearer "+h.admin)
	held.Header.Set("Content-Type", "application/json")
	heldDone := make(chan reply, 1)
	go func() {
		resp, err := http.DefaultClient.Do(held)
		if err != nil {
			heldDone <- reply{Status: -1, Body: []byte(err.Error())}
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		heldDone <- reply{Status: resp.StatusCode, Header: resp.Header, Body: b}
	}()
	io.WriteString(pw, `{"value":`)
	waitFor(t, func() bool { return workbenchparts.Of(h.app.wb).API.InFlight() > 0 })

	drained := make(chan error, 1)
	h.stopped = true // this test stops the server itself
	go func() { drained <- h.app.shutdown() }()
	waitFor(t, workbenchparts.Of(h.app.wb).API.Draining)

	r := h.call("PUT", "/api/v1/settings/system_prompt", h.admin, map[string]string{"value": "late"})
	r.wantErr(t, 503, "unavailable")
	if r.Header.Get("Retry-After") == "" {
		t.Fatal("503 without Retry-After")
	}
	h.call("POST", "/api/v1/auth/login", "", map[string]string{"username": "a", "password": "b"}).wantErr(t, 503, "unavailable")
	h.call("GET", "/health", "", nil).wantErr(t, 503, "unavailable")
	h.call("GET", "/api/v1/auth/me", h.admin, nil).want(t, 200) // reads still answer

	io.WriteString(pw, `"finished in flight"}`)
	pw.Close()
	got := <-heldDone
	if got.Status != 200 || !strings.Contains(string(got.Body), "finished in flight") {
		t.Fatalf("in-flight request: %d %s", got.Status, got.Body)
	}
	select {
	case err := <-drained:
		if err != nil {
			t.Fatalf("shutdown: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("drain did not finish after the last request")
	}
	if err := <-h.served; err != nil {
		t.Fatalf("serve: %v", err)
	}
}

// waitFor polls cond until it holds, failing after a generous bound; it
// orders steps, it does not time them.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	waitForUpTo(t, 30*time.Second, cond)
}

// waitForUpTo polls cond until it holds, failing the test after limit.
func waitForUpTo(t *testing.T, limit time.Duration, cond func() bool) {
	t.Helper()
	pollUntil(t, limit, 5*time.Millisecond, cond)
}

// pollUntil checks cond every interval until it holds, failing the test
// after limit.
func pollUntil(t *testing.T, limit, every time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition never held")
		}
		time.Sleep(every)
	}
}

func TestStoreOutageIsUnavailableAndLeaksNoDetail(t *testing.T) {
	t.Parallel()
	h := startServer(t, testConfig(t))
	workbenchparts.Of(h.app.wb).DB.Close()
	r := h.call("GET", "/api/v1/settings", h.admin, nil)
	r.wantErr(t, 503, "unavailable")
	if bytes.Contains(r.Body, []byte("sql")) || bytes.Contains(r.Body, []byte("closed")) {
		t.Fatalf("store detail leaked: %s", r.Body)
	}
	h.call("GET", "/health", "", nil).wantErr(t, 503, "unavailable")
	// The WebSocket says the same, and never counts it as a wrong token.
	ws, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(h.base, "http")+"/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	ws.WriteJSON(map[string]string{"type": "auth", "token": h.admin})
	var env struct {
		Type    string                         `json:"type"`
		Payload struct{ Code, Message string } `json:"payload"`
	}
	if err := ws.ReadJSON(&env); err != nil || env.Type != "error" || env.Payload.Code != "unavailable" ||
		strings.Contains(env.Payload.Message, "sql") {
		t.Fatalf("ws during an outage: %+v %v", env, err)
	}
}
