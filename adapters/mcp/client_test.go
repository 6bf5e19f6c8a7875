package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/internal/loopbacktest"
	"github.com/agents-server/agents-server/ports"
)

// publicOnly is a member's policy where 127.0.0.2 stands for the internet.
var publicOnly = domain.OutboundPolicy{Nets: []netip.Prefix{netip.MustParsePrefix("127.0.0.2/32")}}

// echoServer is the SDK's MCP server with a tool answering n bytes of text,
// counting the requests that reach it and what headers they carried.
type echoServer struct {
	hits    atomic.Int64
	mu      sync.Mutex
	headers []http.Header
}

func (e *echoServer) handler(jsonAnswers bool) http.Handler {
	srv := sdk.NewServer(&sdk.Implementation{Name: "echo", Version: "1"}, nil)
	type in struct {
		Bytes int `json:"bytes"`
	}
	sdk.AddTool(srv, &sdk.Tool{Name: "blob", Description: "answers n bytes"}, func(_ context.Context, _ *sdk.CallToolRequest, a in) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strings.Repeat("x", a.Bytes)}}}, nil, nil
	})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, &sdk.StreamableHTTPOptions{JSONResponse: jsonAnswers})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.hits.Add(1)
		e.mu.Lock()
		e.headers = append(e.headers, r.Header.Clone())
		e.mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

func dial(t *testing.T, target ports.MCPTarget) (ports.MCPSession, error) {
	t.Helper()
	s, err := (&Dialer{}).Dial(t.Context(), target)
	if err == nil {
		t.Cleanup(func() { s.Close() })
	}
	return s, err
}

func wantRefused(t *testing.T, what string, err error) {
	t.Helper()
	var me *ports.MCPError
	if !errors.As(err, &me) || me.Kind != ports.MCPRefused || !strings.Contains(me.Message, "outbound policy refuses 127.0.0.1") ||
		!strings.Contains(me.Message, domain.OutboundAllowPrivateSetting) {
		t.Fatalf("%s: %v, want refused by the outbound policy naming the setting", what, err)
	}
}

func TestAMembersServerReachesNoPrivateAddress(t *testing.T) {
	internal := &echoServer{}
	srv := loopbacktest.Serve(t, "127.0.0.1", internal.handler(false))
	// The public host sends the client on to the internal one.
	outside := loopbacktest.Serve(t, "127.0.0.2", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, srv.URL+"/mcp", http.StatusTemporaryRedirect)
	}))
	byName := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
	for name, endpoint := range map[string]string{"address": srv.URL + "/mcp", "name": byName + "/mcp"} {
		_, err := dial(t, ports.MCPTarget{Name: "x", Endpoint: endpoint, Outbound: publicOnly})
		wantRefused(t, name, err)
	}
	// A redirect to another origin is never followed (item: credentials
	// stay with their origin), whatever the address.
	if _, err := dial(t, ports.MCPTarget{Name: "x", Endpoint: outside.URL + "/mcp", Outbound: publicOnly}); err == nil ||
		!strings.Contains(err.Error(), "redirected to another origin") {
		t.Fatalf("via a redirect: %v", err)
	}
	if n := internal.hits.Load(); n != 0 {
		t.Fatalf("the internal server was reached %d times", n)
	}
	// An admin's server, or an allowed network, reaches it.
	for name, p := range map[string]domain.OutboundPolicy{"open": domain.OpenOutbound,
		"allowed": {Nets: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}} {
		s, err := dial(t, ports.MCPTarget{Name: "x", Endpoint: srv.URL + "/mcp", Outbound: p})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, err := s.ListTools(t.Context()); err != nil {
			t.Fatalf("%s: list tools: %v", name, err)
		}
	}
}

func TestCredentialHeadersStayWithTheirOrigin(t *testing.T) {
	other := &echoServer{}
	elsewhere := loopbacktest.Serve(t, "127.0.0.1", other.handler(false))
	own := &echoServer{}
	mcpHandler := own.handler(false)
	home := loopbacktest.Serve(t, "127.0.0.2", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/moved": // within the origin: followed, with the headers
			http.Redirect(w, r, "/mcp", http.StatusTemporaryRedirect)
		case "/away": // to another origin: refused before it is asked
			http.Redirect(w, r, elsewhere.URL+"/mcp", http.StatusTemporaryRedirect)
		default:
			mcpHandler.ServeHTTP(w, r)
		}
	}))
	headers := map[string]string{"Authorization": "Bearer secret-token", "X-Api-Key": "k-123"}
	_, err := dial(t, ports.MCPTarget{Name: "x", Endpoint: home.URL + "/away", Headers: headers, Outbound: domain.OpenOutbound})
	if err == nil || !strings.Contains(err.Error(), "redirected to another origin") || !strings.Contains(err.Error(), "set the endpoint") {
		t.Fatalf("a redirect to another origin: %v", err)
	}
	if n := other.hits.Load(); n != 0 {
		t.Fatalf("the other origin was asked %d times", n)
	}
	s, err := dial(t, ports.MCPTarget{Name: "x", Endpoint: home.URL + "/moved", Headers: headers, Outbound: domain.OpenOutbound})
	if err != nil {
		t.Fatalf("a redirect within the origin: %v", err)
	}
	if _, err := s.ListTools(t.Context()); err != nil {
		t.Fatal(err)
	}
	own.mu.Lock()
	defer own.mu.Unlock()
	if len(own.headers) == 0 {
		t.Fatal("the endpoint was never asked")
	}
	for _, h := range own.headers {
		if h.Get("Authorization") != "Bearer secret-token" || h.Get("X-Api-Key") != "k-123" {
			t.Fatalf("a request to the endpoint's origin lacked the configured headers: %v", h)
		}
	}
}

func TestAnswersAreReadUpToTheBound(t *testing.T) {
	defer func(m int) { maxMessage = m }(maxMessage)
	maxMessage = 256 << 10
	for _, jsonAnswers := range []bool{false, true} {
		t.Run(fmt.Sprintf("json=%v", jsonAnswers), func(t *testing.T) {
			e := &echoServer{}
			srv := loopbacktest.Serve(t, "127.0.0.1", e.handler(jsonAnswers))
			s, err := dial(t, ports.MCPTarget{Name: "x", Endpoint: srv.URL + "/mcp", Outbound: domain.OpenOutbound})
			if err != nil {
				t.Fatal(err)
			}
			// Many answers below the bound add up past it: each is read.
			for range 4 {
				res, err := s.CallTool(t.Context(), "blob", json.RawMessage(`{"bytes":100000}`))
				if err != nil || len(res.Content) != 1 || len(res.Content[0].Text) != 100000 {
					t.Fatalf("an answer below the bound: %v", err)
				}
			}
			_, err = s.CallTool(t.Context(), "blob", json.RawMessage(`{"bytes":400000}`))
			if err == nil || !strings.Contains(err.Error(), "larger than") {
				t.Fatalf("an answer past the bound: %v", err)
			}
		})
	}
}

// The OAuth client (discovery, registration, tokens) dials under the same
// policy: an authorization server's registration endpoint that redirects
// into the private network reaches nothing there for a member, and for an
// admin the internal answer's body is never quoted back whole.
func TestOAuthRequestsFollowTheOwnersPolicy(t *testing.T) {
	var secretHits atomic.Int64
	secret := loopbacktest.Serve(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		secretHits.Add(1)
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, strings.Repeat("INTERNAL-SECRET ", 64<<10))
	}))
	var as *httptest.Server
	as = loopbacktest.Serve(t, "127.0.0.2", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/.well-known/oauth-authorization-server":
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(oauthex.AuthServerMeta{Issuer: as.URL, AuthorizationEndpoint: as.URL + "/authorize",
				TokenEndpoint: as.URL + "/token", RegistrationEndpoint: as.URL + "/register",
				ResponseTypesSupported: []string{"code"}, CodeChallengeMethodsSupported: []string{"S256"}})
		case "/register":
			http.Redirect(w, r, secret.URL+"/secret", http.StatusTemporaryRedirect)
		default:
			http.NotFound(w, r)
		}
	}))
	var rs *httptest.Server
	rs = loopbacktest.Serve(t, "127.0.0.2", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/.well-known/oauth-protected-resource") {
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(oauthex.ProtectedResourceMetadata{Resource: rs.URL + "/mcp", AuthorizationServers: []string{as.URL}})
			return
		}
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+rs.URL+`/.well-known/oauth-protected-resource/mcp"`)
		http.Error(w, "sign in", http.StatusUnauthorized)
	}))
	oauth := func() *ports.MCPOAuth {
		return &ports.MCPOAuth{RedirectURL: "http://127.0.0.2/cb", Authorize: func(context.Context, string) (ports.MCPAuthorization, error) {
			return ports.MCPAuthorization{}, errors.New("no person here")
		}}
	}
	_, err := dial(t, ports.MCPTarget{Name: "x", Endpoint: rs.URL + "/mcp", OAuth: oauth(), Outbound: publicOnly})
	if err == nil || !strings.Contains(err.Error(), "outbound policy refuses 127.0.0.1") {
		t.Fatalf("a member's sign-in: %v, want the registration's redirect refused", err)
	}
	if n := secretHits.Load(); n != 0 {
		t.Fatalf("the internal address was reached %d times", n)
	}
	_, err = dial(t, ports.MCPTarget{Name: "x", Endpoint: rs.URL + "/mcp", OAuth: oauth(), Outbound: domain.OpenOutbound})
	if err == nil || secretHits.Load() == 0 {
		t.Fatalf("an admin's sign-in: %v after %d hits, want the redirect followed and the registration failed", err, secretHits.Load())
	}
	if msg := err.Error(); len(msg) > 600 || strings.Count(msg, "INTERNAL-SECRET") > 20 {
		t.Fatalf("the error quotes %d bytes of the internal answer: %.200s…", len(msg), msg)
	}
}
