//go:build unix

package main

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agents-server/agents-server/adapters/mcp/mcptest"
	"github.com/agents-server/agents-server/adapters/sqlstore/pgtest"
)

// An MCP OAuth sign-in behind a load balancer: the person clicks Connect
// on replica A, and the authorization server's redirect — the browser's
// callback — reaches replica B. B finds the sign-in in the database,
// checks the browser's binding and files the code; A, whose dial holds the
// PKCE verifier, exchanges it and connects; B connects on the stored grant.
func TestReplicasMCPOAuthCallbackOnAnotherReplica(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t, "replica MCP OAuth suite on Postgres")
	as := mcptest.OAuth(t)
	ps := startProtected(t, as.URL)

	a := startReplica(t, url)
	must := func(p *process, method, path string, body any, want int) map[string]any {
		t.Helper()
		code, out, raw := p.call(t, method, path, body)
		if code != want {
			t.Fatalf("%s %s on %s: %d %s\nits log:\n%s", method, path, p.url, code, raw, p.stderr)
		}
		return out
	}
	// The MCP and authorization servers listen on loopback; set before B
	// starts, so B reads it as A does.
	must(a, "PUT", "/api/v1/settings/outbound_allow_private", map[string]string{"value": "true"}, 200)
	b := startReplica(t, url)

	id := must(a, "POST", "/api/v1/mcp-servers", map[string]any{"name": "secure",
		"config": map[string]any{"endpoint": ps.endpoint, "auth_mode": "oauth"}}, 201)["id"].(string)
	status := func(p *process) string {
		t.Helper()
		s, _ := must(p, "GET", "/api/v1/mcp-servers/"+id, nil, 200)["status"].(string)
		return s
	}
	slowPoll(t, func() bool { return status(a) == "needs_auth" })
	slowPoll(t, func() bool { return status(b) == "needs_auth" })

	// Connect on A, from a browser that keeps the sign-in's binding cookie.
	browser := newBrowser(t)
	req, _ := http.NewRequest("POST", a.url+"/api/v1/mcp-servers/"+id+"/connect", nil)
	req.Header.Set("Authorization", "Bearer "+a.token)
	resp, err := browser.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var connect struct {
		Status       string `json:"status"`
		AuthorizeURL string `json:"authorize_url"`
	}
	err = json.NewDecoder(resp.Body).Decode(&connect)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("connect on A: %d %v", resp.StatusCode, err)
	}
	if connect.Status != "authorizing" || !strings.Contains(connect.AuthorizeURL, "state=") {
		t.Fatalf("connect on A = %+v", connect)
	}

	// The authorization server approves at once and redirects to the
	// callback; the balancer sends the browser to B (same host, so the
	// binding cookie goes along, as behind one balancer's address).
	noFollow := *browser
	noFollow.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err = noFollow.Get(connect.AuthorizeURL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	callback := resp.Header.Get("Location")
	if !strings.HasPrefix(callback, a.url+"/api/v1/mcp-servers/oauth/callback?") {
		t.Fatalf("the authorization server redirected to %q (%d), want A's callback", callback, resp.StatusCode)
	}
	onB := b.url + strings.TrimPrefix(callback, a.url)

	// A browser without the binding completes nothing on B.
	if code, page := getPage(t, http.DefaultClient, onB); code != 403 || !strings.Contains(page, "begun by another account or in another browser") {
		t.Fatalf("a foreign browser on B: %d %s", code, page)
	}
	delivered := time.Now()
	if code, page := getPage(t, browser, onB); code != 200 || !strings.Contains(page, "Signed in") {
		t.Fatalf("the callback on B: %d %s\nB's log:\n%s", code, page, b.stderr)
	}
	// Single use: the same callback again, on either replica, completes
	// nothing more.
	for _, p := range []*process{a, b} {
		if code, _ := getPage(t, browser, p.url+strings.TrimPrefix(callback, a.url)); code != 404 && code != 409 {
			t.Errorf("the callback replayed on %s answered %d, want 404 or 409", p.url, code)
		}
	}

	slowPoll(t, func() bool { return status(a) == "connected" })
	t.Logf("A connected %s after the callback reached B", time.Since(delivered).Round(time.Millisecond))
	slowPoll(t, func() bool { return status(b) == "connected" })
	for _, p := range []*process{a, b} {
		v := must(p, "GET", "/api/v1/mcp-servers/"+id, nil, 200)
		if v["has_oauth_token"] != true || len(v["tools"].([]any)) != 1 {
			t.Fatalf("on %s after the sign-in: %v", p.url, v)
		}
	}
	if st := as.State(t); st.CodeGrants != 1 {
		t.Fatalf("the authorization server exchanged %d codes, want 1", st.CodeGrants)
	}
	if !strings.Contains(b.stderr.String(), "callback: authorization code delivered") ||
		!strings.Contains(a.stderr.String(), "interactive connect established") {
		t.Fatalf("B filed the code, A connected: logs say otherwise\nA:\n%s\nB:\n%s", a.stderr, b.stderr)
	}
}

// getPage GETs u with c and returns the status and body.
func getPage(t *testing.T, c *http.Client, u string) (int, string) {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	page, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(page)
}
