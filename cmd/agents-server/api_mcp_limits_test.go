package main

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/agents-server/agents-server/adapters/httpapi"
)

// /mcp is held to the same per-address budgets as REST and the
// WebSockets, caps each user's open sessions, and closes idle ones.

// initializeBody is an MCP initialize request, the POST that opens a
// session.
const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",` +
	`"capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// mcpPost sends one JSON-RPC message to /mcp with token ("" for none),
// through client (nil: the default), and reads the answer whole.
func (h *harness) mcpPost(client *http.Client, token, body string) reply {
	h.t.Helper()
	req, err := http.NewRequest("POST", h.base+"/mcp", strings.NewReader(body))
	if err != nil {
		h.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return reply{Status: resp.StatusCode, Header: resp.Header, Body: data}
}

// rateLimited asserts a 429 with Retry-After and the API's envelope.
func rateLimited(t *testing.T, r reply, mentions string) {
	t.Helper()
	var env httpapi.ErrorEnvelope
	if r.Status != 429 || r.Header.Get("Retry-After") == "" || json.Unmarshal(r.Body, &env) != nil ||
		env.Error.Code != "rate_limited" || !strings.Contains(env.Error.Message, mentions) {
		t.Fatalf("want 429 rate_limited (%s) with Retry-After; got %d %q %s", mentions, r.Status, r.Header.Get("Retry-After"), r.Body)
	}
}

// Wrong tokens at /mcp spend the address's failed sign-in budget, shared
// with REST: once it is spent, /mcp refuses before looking at a token —
// even a right one — and so does REST.
func TestMCPSpendsTheFailedSignInBudget(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.HTTP.RateLimits.AuthFail = httpapi.Budget{PerSecond: 0.001, Burst: 3}
	h := startServer(t, cfg)
	for range 3 {
		if r := h.mcpPost(nil, "ags_l_wrong", initializeBody); r.Status != 401 {
			t.Fatalf("a wrong token answered %d %s", r.Status, r.Body)
		}
	}
	rateLimited(t, h.mcpPost(nil, "ags_l_wrong", initializeBody), "failed sign-in")
	rateLimited(t, h.mcpPost(nil, h.admin, initializeBody), "failed sign-in")
	h.call("GET", "/api/v1/auth/me", h.admin, nil).wantErr(t, 429, "rate_limited")
}

// Requests to /mcp spend the address's request budget of their class, the
// one REST's routes spend.
func TestMCPSpendsTheRequestBudget(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.HTTP.RateLimits.Write = httpapi.Budget{PerSecond: 0.001, Burst: 3}
	h := startServer(t, cfg)
	for range 3 {
		if r := h.mcpPost(nil, h.admin, initializeBody); r.Status != 200 {
			t.Fatalf("initialize answered %d %s", r.Status, r.Body)
		}
	}
	rateLimited(t, h.mcpPost(nil, h.admin, initializeBody), "too many requests")
	h.call("PUT", "/api/v1/settings/system_prompt", h.admin, map[string]string{"value": "hi"}).wantErr(t, 429, "rate_limited")
}

// A user holds at most max_mcp_sessions_per_user sessions; past it a new
// one is refused (429), others' are theirs, and closing one frees its
// slot.
func TestMCPSessionsPerUserAreCapped(t *testing.T) {
	t.Parallel()
	h := startServer(t, testConfig(t))
	h.call("PUT", "/api/v1/settings/max_mcp_sessions_per_user", h.admin, map[string]string{"value": "2"}).want(t, 200)
	mia := h.member("mia")
	first, err := h.mcpClient(mia)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.mcpClient(mia); err != nil {
		t.Fatal(err)
	}
	rateLimited(t, h.mcpPost(nil, mia, initializeBody), "max_mcp_sessions_per_user")
	if _, err := h.mcpClient(mia); err == nil {
		t.Fatal("a third session opened")
	}
	if _, err := h.mcpClient(h.member("otto")); err != nil {
		t.Fatalf("another user's session: %v", err)
	}
	first.Close() // DELETE: the session ends, and its slot with it
	waitFor(t, func() bool { return h.mcpPost(nil, mia, initializeBody).Status == 200 })
}
