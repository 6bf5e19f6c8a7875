//go:build unix

package main

import (
	"context"
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/agents-server/agents-server/adapters/httpapi"
	"github.com/agents-server/agents-server/adapters/llm/scripted"
	"github.com/agents-server/agents-server/adapters/mcp/mcptest"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/internal/workbenchparts"
)

// protectedServer is an MCP server (the official SDK's) that only answers
// bearer tokens the authorization server signed: it serves its protected
// resource metadata (RFC 9728) naming that server, and a whoami tool that
// tells whose token called it, and which token (tokenPrint).
type protectedServer struct {
	*httptest.Server
	endpoint string
	accepted atomic.Int64 // requests with a valid token
	mu       sync.Mutex
	calls    []string // the tokenPrint of each whoami call's token, in order
}

// tokenPrint names a bearer token without showing it.
func tokenPrint(token string) string {
	sum := sha256.Sum256([]byte(token))
	return fmt.Sprintf("%x", sum[:6])
}

// whoamiCalls returns the token prints of the whoami calls so far.
func (ps *protectedServer) whoamiCalls() []string {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return slices.Clone(ps.calls)
}

func startProtected(t *testing.T, issuer string) *protectedServer {
	t.Helper()
	ps := &protectedServer{}
	srv := sdk.NewServer(&sdk.Implementation{Name: "secure", Version: "1"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "whoami", Description: "Tells whose token called"},
		func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			who, print := "nobody", ""
			if info := req.Extra.TokenInfo; info != nil {
				who = info.UserID
				print, _ = info.Extra["print"].(string)
			}
			ps.mu.Lock()
			ps.calls = append(ps.calls, print)
			ps.mu.Unlock()
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "you are " + who + " (token " + print + ")"}}}, nil, nil
		})
	mcpHandler := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	keys := &jwks{url: issuer + "/jwks"}
	mux := http.NewServeMux()
	ps.Server = httptest.NewServer(mux)
	ps.endpoint = ps.URL + "/mcp"
	prmURL := ps.URL + "/.well-known/oauth-protected-resource/mcp"
	mux.Handle("/.well-known/oauth-protected-resource/mcp", auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource: ps.endpoint, AuthorizationServers: []string{issuer}, ScopesSupported: []string{"mcp"}}))
	verify := func(ctx context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		info, err := keys.verify(ctx, token, issuer)
		if err == nil {
			ps.accepted.Add(1)
			info.Extra = map[string]any{"print": tokenPrint(token)}
		}
		return info, err
	}
	mux.Handle("/mcp", auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{ResourceMetadataURL: prmURL})(mcpHandler))
	t.Cleanup(func() {
		ps.CloseClientConnections() // a client's standing event stream must not hold Close up
		ps.Close()
	})
	return ps
}

// jwks verifies RS256 tokens against an issuer's published keys.
type jwks struct {
	url  string
	mu   sync.Mutex
	keys map[string]*rsa.PublicKey
}

func (j *jwks) key(ctx context.Context, kid string) (*rsa.PublicKey, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.keys == nil {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, j.url, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		var set struct {
			Keys []struct{ Kid, N, E string } `json:"keys"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&set); err != nil {
			return nil, err
		}
		j.keys = map[string]*rsa.PublicKey{}
		for _, k := range set.Keys {
			n, err1 := base64.RawURLEncoding.DecodeString(k.N)
			e, err2 := base64.RawURLEncoding.DecodeString(k.E)
			if err1 != nil || err2 != nil {
				return nil, fmt.Errorf("bad key %s", k.Kid)
			}
			j.keys[k.Kid] = &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}
		}
	}
	k, ok := j.keys[kid]
	if !ok {
		return nil, fmt.Errorf("no key %q", kid)
	}
	return k, nil
}

func (j *jwks) verify(ctx context.Context, token, issuer string) (*auth.TokenInfo, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return nil, fmt.Errorf("%w: not a JWT", auth.ErrInvalidToken)
	}
	var header struct{ Alg, Kid string }
	var claims struct {
		Iss   string `json:"iss"`
		Sub   string `json:"sub"`
		Exp   int64  `json:"exp"`
		Scope string `json:"scope"`
	}
	raw, err1 := base64.RawURLEncoding.DecodeString(parts[0])
	body, err2 := base64.RawURLEncoding.DecodeString(parts[1])
	sig, err3 := base64.RawURLEncoding.DecodeString(parts[2])
	if err := errors.Join(err1, err2, err3, json.Unmarshal(raw, &header), json.Unmarshal(body, &claims)); err != nil || header.Alg != "RS256" {
		return nil, fmt.Errorf("%w: malformed", auth.ErrInvalidToken)
	}
	key, err := j.key(ctx, header.Kid)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", auth.ErrInvalidToken, err)
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if err := rsa.VerifyPKCS1v15(key, crypto.SHA256, sum[:], sig); err != nil || claims.Iss != issuer {
		return nil, fmt.Errorf("%w: bad signature or issuer", auth.ErrInvalidToken)
	}
	return &auth.TokenInfo{Scopes: strings.Fields(claims.Scope), Expiration: time.Unix(claims.Exp, 0), UserID: claims.Sub}, nil
}

// newBrowser is a person's browser: it keeps the cookies the workbench
// sets and carries them back, as a browser does.
func newBrowser(t *testing.T) *http.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Jar: jar}
}

// signIn follows an authorize URL in browser b: the authorization server
// redirects straight back to the workbench's callback, whose page must
// say the sign-in went through.
func signIn(t *testing.T, b *http.Client, authorizeURL string) {
	t.Helper()
	resp, err := b.Get(authorizeURL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	page, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(string(page), "Signed in") {
		t.Fatalf("the callback answered %d: %s", resp.StatusCode, page)
	}
	// Its script (tell the opener, close the popup) may run, and only it;
	// and the popup keeps its opener although it comes back from another
	// origin.
	csp := resp.Header.Get("Content-Security-Policy")
	_, nonce, _ := strings.Cut(csp, "script-src 'nonce-")
	nonce, _, _ = strings.Cut(nonce, "'")
	if nonce == "" || !strings.Contains(string(page), `<script nonce="`+nonce+`">`) || !strings.Contains(csp, "default-src 'none'") ||
		resp.Header.Get("Cross-Origin-Opener-Policy") != "unsafe-none" {
		t.Fatalf("callback page headers %v for %s", resp.Header, page)
	}
}

// connectOAuth asks for a sign-in from browser b (which keeps the
// sign-in's binding cookie) and checks the authorize URL.
func (h *harness) connectOAuth(token, id string, b *http.Client) string {
	h.t.Helper()
	var c httpapi.MCPConnectView
	r := h.call("POST", "/api/v1/mcp-servers/"+id+"/connect", token, nil).want(h.t, 200)
	r.decode(h.t, &c)
	base, _ := url.Parse(h.base)
	b.Jar.SetCookies(base, (&http.Response{Header: r.Header}).Cookies())
	u, err := url.Parse(c.AuthorizeURL)
	if err != nil || c.Status != "authorizing" {
		h.t.Fatalf("connect = %+v", c)
	}
	q := u.Query()
	if q.Get("redirect_uri") != h.base+"/api/v1/mcp-servers/oauth/callback" || q.Get("code_challenge_method") != "S256" || q.Get("state") == "" {
		h.t.Fatalf("authorize URL %s", c.AuthorizeURL)
	}
	return c.AuthorizeURL
}

// storedGrant reads a server's grant from the store (the tests run without
// a secret key, so it is the plain JSON).
func (h *harness) storedGrant(id string) domain.MCPGrant {
	h.t.Helper()
	row, err := workbenchparts.Of(h.app.wb).DB.FindMCPServer(context.Background(), id)
	if err != nil {
		h.t.Fatal(err)
	}
	var g domain.MCPGrant
	if row.SealedGrant != "" {
		if err := json.Unmarshal([]byte(row.SealedGrant), &g); err != nil {
			h.t.Fatalf("grant %q: %v", row.SealedGrant, err)
		}
	}
	return g
}

// whoami runs the agent once and returns the tool's result.
func (h *harness) whoami(token, sessionID string) domain.ToolResultPayload {
	h.t.Helper()
	var result domain.ToolResultPayload
	for _, ev := range h.openSSE(token, h.startRun(token, sessionID, map[string]any{"input": "who am I"}), 0).all(h.t) {
		if ev.Type == domain.EventToolResult {
			result = payload[domain.ToolResultPayload](h.t, ev.Event)
		}
	}
	return result
}

// TestMCPOAuthEndToEnd signs a server in against a real authorization
// server (registering a client dynamically), refreshes silently, survives
// a restart, fails fast once the refresh token is revoked, signs in again,
// and clears the grant.
func TestMCPOAuthEndToEnd(t *testing.T) {
	t.Parallel()
	as := mcptest.OAuth(t)
	as.SetExpiresIn(t, 1) // every use of a token finds it expired: each one refreshes
	ps := startProtected(t, as.URL)
	model, murl := startScripted(t)
	model.SetScript("who", scripted.Script{Exchanges: []scripted.Exchange{{Steps: []scripted.Step{
		{ToolCalls: []scripted.ToolCall{{Name: "secure__whoami", Arguments: `{}`}}}, {Text: "done"}}}}})
	cfg := testConfig(t)
	h := startServer(t, cfg)
	tok := h.member("olga")
	olga := newBrowser(t)
	var srv httpapi.MCPServerView
	h.call("POST", "/api/v1/mcp-servers", tok, map[string]any{"name": "secure",
		"config": map[string]any{"endpoint": ps.endpoint, "auth_mode": "oauth"}}).want(t, 201).decode(t, &srv)
	if v := h.waitMCP(tok, srv.ID, "needs_auth"); v.HasOAuthToken {
		t.Fatalf("a new server has a token: %+v", v)
	}

	// Sign in: a dynamically registered client, PKCE, the callback.
	stale := h.connectOAuth(tok, srv.ID, olga)
	// Connecting again while authorizing supersedes the first attempt.
	fresh := h.connectOAuth(tok, srv.ID, olga)
	resp, err := http.Get(stale)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Fatalf("a superseded sign-in's callback answered %d", resp.StatusCode)
	}
	signIn(t, olga, fresh)
	v := h.waitMCP(tok, srv.ID, "connected")
	st := as.State(t)
	// Each attempt registered its client (the superseded one too).
	if !v.HasOAuthToken || len(v.Tools) != 1 || len(st.Registrations) != 2 || st.CodeGrants != 1 {
		t.Fatalf("after the sign-in: %+v, authorization server %+v", v, st)
	}
	if g := h.storedGrant(srv.ID); g.ClientID != st.Registrations[1].ClientID || g.RefreshToken == "" || g.TokenURL != as.URL+"/token" {
		t.Fatalf("stored grant = %+v", g)
	}
	for _, line := range []string{"authorization URL issued", "callback: authorization code delivered", "interactive connect established"} {
		if !strings.Contains(h.logs.String(), line) {
			t.Errorf("the log lacks %q", line)
		}
	}

	// The tool works, on refreshed tokens whose rotations are written back.
	prov := h.createProvider(tok, protocols(murl)["openai-chat"])
	agent := h.createAgent(tok, map[string]any{"name": "who", "model": "who", "provider_id": prov.ID, "tools": []string{"secure__whoami"}})
	s := h.createSession(tok, map[string]any{"agent_config_id": agent.ID})
	before := h.storedGrant(srv.ID)
	if r := h.whoami(tok, s.ID); r.IsError || !strings.Contains(r.Output, "you are johndoe") {
		t.Fatalf("whoami = %+v", r)
	}
	after := h.storedGrant(srv.ID)
	if as.State(t).RefreshGrants == 0 || after.RefreshToken == before.RefreshToken || !after.Expiry.After(before.Expiry) {
		t.Fatalf("no silent refresh written back: %+v; before %v %q, after %v %q", as.State(t), before.Expiry, before.RefreshToken, after.Expiry, after.RefreshToken)
	}

	// A restart reconnects on the stored grant, without a new sign-in.
	h.stop()
	h = startServer(t, cfg)
	h.waitMCP(tok, srv.ID, "connected")
	if st := as.State(t); st.CodeGrants != 1 {
		t.Fatalf("the restart signed in again: %+v", st)
	}

	// The refresh token revoked: the call fails fast, asking for a new sign-in.
	as.RevokeRefreshTokens(t)
	start := time.Now()
	r := h.whoami(tok, s.ID)
	if !r.IsError || !strings.Contains(r.Output, "connect") || time.Since(start) > 15*time.Second {
		t.Fatalf("after the revocation (%s): %+v", time.Since(start), r)
	}
	h.waitMCP(tok, srv.ID, "needs_auth")

	// Signing in again reuses the registered client.
	signIn(t, olga, h.connectOAuth(tok, srv.ID, olga))
	h.waitMCP(tok, srv.ID, "connected")
	if st := as.State(t); len(st.Registrations) != 2 || st.CodeGrants != 2 {
		t.Fatalf("the second sign-in: %+v", st)
	}
	if r := h.whoami(tok, s.ID); r.IsError {
		t.Fatalf("whoami after signing in again: %+v", r)
	}

	// Clear sign-in drops the grant.
	var cleared httpapi.MCPServerView
	h.call("DELETE", "/api/v1/mcp-servers/"+srv.ID+"/oauth-token", tok, nil).want(t, 200).decode(t, &cleared)
	if cleared.HasOAuthToken {
		t.Fatalf("cleared = %+v", cleared)
	}
	h.waitMCP(tok, srv.ID, "needs_auth")

	// A pre-registered client id is used as it is: no registration.
	var preset httpapi.MCPServerView
	h.call("POST", "/api/v1/mcp-servers", tok, map[string]any{"name": "secure-preset",
		"config": map[string]any{"endpoint": ps.endpoint, "auth_mode": "oauth", "oauth_client_id": "preset-client", "oauth_scopes": []string{"mcp"}}}).
		want(t, 201).decode(t, &preset)
	u := h.connectOAuth(tok, preset.ID, olga)
	if q, _ := url.Parse(u); q.Query().Get("client_id") != "preset-client" || !slices.Contains(strings.Fields(q.Query().Get("scope")), "mcp") {
		t.Fatalf("preset authorize URL %s", u)
	}
	signIn(t, olga, u)
	h.waitMCP(tok, preset.ID, "connected")
	if st := as.State(t); len(st.Registrations) != 2 {
		t.Fatalf("a preset client registered: %+v", st)
	}
	if ps.accepted.Load() == 0 {
		t.Fatal("the resource server never accepted a token")
	}

	// RFC 9207: an iss the metadata does not advertise is refused after the
	// browser round trip, and the log says which half failed; advertised,
	// the same sign-in goes through.
	as.SetIss(t, true, false)
	var strict httpapi.MCPServerView
	h.call("POST", "/api/v1/mcp-servers", tok, map[string]any{"name": "secure-iss",
		"config": map[string]any{"endpoint": ps.endpoint, "auth_mode": "oauth", "oauth_client_id": "iss-client"}}).want(t, 201).decode(t, &strict)
	signIn(t, olga, h.connectOAuth(tok, strict.ID, olga))
	deadline := time.Now().Add(20 * time.Second)
	v = h.mcpServer(tok, strict.ID)
	for ; v.Status != "needs_auth" || !strings.Contains(v.LastError, "iss"); v = h.mcpServer(tok, strict.ID) {
		if time.Now().After(deadline) {
			t.Fatalf("an unadvertised iss: %+v", v)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if v.HasOAuthToken || !strings.Contains(h.logs.String(), "authorization completed but was not accepted") {
		t.Fatalf("an unadvertised iss left a token (%+v) or no log line", v)
	}
	as.SetIss(t, true, true)
	signIn(t, olga, h.connectOAuth(tok, strict.ID, olga))
	h.waitMCP(tok, strict.ID, "connected")
}

// TestMCPOAuthSignInIsBoundToWhoBeganIt: Ann connects her OAuth server and
// sends the authorize URL to Bob. His browser's callback completes
// nothing — his own sign-in cookie for another server does not pass, and
// pasting the address as himself is refused — so Ann's server never calls
// the service with Bob's token. Ann's browser completes it; a sign-in Ann
// began from a script completes when she hands the address in herself.
func TestMCPOAuthSignInIsBoundToWhoBeganIt(t *testing.T) {
	t.Parallel()
	as := mcptest.OAuth(t)
	ps := startProtected(t, as.URL)
	h := startServer(t, testConfig(t))
	ann, bob := h.member("ann"), h.member("bob")
	annBrowser, bobBrowser := newBrowser(t), newBrowser(t)
	server := func(token, name string) httpapi.MCPServerView {
		var v httpapi.MCPServerView
		h.call("POST", "/api/v1/mcp-servers", token, map[string]any{"name": name,
			"config": map[string]any{"endpoint": ps.endpoint, "auth_mode": "oauth"}}).want(t, 201).decode(t, &v)
		h.waitMCP(token, v.ID, "needs_auth")
		return v
	}
	annServer, bobServer := server(ann, "ann-secure"), server(bob, "bob-secure")
	link := h.connectOAuth(ann, annServer.ID, annBrowser)
	h.connectOAuth(bob, bobServer.ID, bobBrowser) // Bob's browser holds a binding of its own

	resp, err := bobBrowser.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	landed := resp.Request.URL.String()
	if resp.StatusCode != 403 || !strings.Contains(string(page), "begun by another account or in another browser") ||
		!strings.Contains(landed, "/api/v1/mcp-servers/oauth/callback") {
		t.Fatalf("Bob's browser: %d at %s: %s", resp.StatusCode, landed, page)
	}
	h.call("POST", "/api/v1/mcp-servers/oauth/complete", bob, map[string]string{"url": landed}).wantErr(t, 403, "forbidden")
	if v := h.mcpServer(ann, annServer.ID); v.Status != "authorizing" || v.HasOAuthToken || as.State(t).CodeGrants != 0 {
		t.Fatalf("after Bob's callback: %+v, authorization server %+v", v, as.State(t))
	}
	if !strings.Contains(h.logs.String(), "the callback came back to someone other than who began the sign-in") {
		t.Error("the log does not say why the callback completed nothing")
	}

	// Ann's own browser completes her sign-in.
	signIn(t, annBrowser, link)
	h.waitMCP(ann, annServer.ID, "connected")
	if v := h.mcpServer(bob, bobServer.ID); v.Status != "authorizing" || v.HasOAuthToken {
		t.Fatalf("Bob's server moved: %+v", v)
	}

	// A sign-in begun from a script: the browser (no binding) completes
	// nothing; its address, handed in with Ann's token, does.
	h.call("DELETE", "/api/v1/mcp-servers/"+annServer.ID+"/oauth-token", ann, nil).want(t, 200)
	h.waitMCP(ann, annServer.ID, "needs_auth")
	var c httpapi.MCPConnectView
	h.call("POST", "/api/v1/mcp-servers/"+annServer.ID+"/connect", ann, nil).want(t, 200).decode(t, &c)
	resp, err = http.Get(c.AuthorizeURL)
	if err != nil {
		t.Fatal(err)
	}
	page, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 403 || !strings.Contains(string(page), "POST /api/v1/mcp-servers/oauth/complete") {
		t.Fatalf("a browser without the binding: %d %s", resp.StatusCode, page)
	}
	h.call("POST", "/api/v1/mcp-servers/oauth/complete", ann, map[string]string{"url": resp.Request.URL.String()}).want(t, 204)
	h.waitMCP(ann, annServer.ID, "connected")
}
