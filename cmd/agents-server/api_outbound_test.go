package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/agents-server/agents-server/adapters/httpapi"
	"github.com/agents-server/agents-server/adapters/llm/scripted"
	"github.com/agents-server/agents-server/internal/loopbacktest"
)

// counted answers with h and counts the requests that reach it.
func counted(n *atomic.Int64, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		h.ServeHTTP(w, r)
	})
}

// redirectTo sends every request on to the same path at base.
func redirectTo(base string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, base+r.URL.RequestURI(), http.StatusTemporaryRedirect)
	})
}

func wantPolicy(t *testing.T, what, msg string) {
	t.Helper()
	if !strings.Contains(msg, "outbound policy refuses 127.0.0.1") || !strings.Contains(msg, "outbound_allow_private") ||
		!strings.Contains(msg, "outbound_allowed_hosts") {
		t.Fatalf("%s: %q, want the outbound policy's refusal naming its settings", what, msg)
	}
}

// TestOutboundPolicyKeepsMembersOffThePrivateNetwork: what a member
// configures (a provider's base URL, an MCP endpoint and its OAuth
// servers, a skill import) reaches no private address — directly, by a
// name that resolves to one, or through a redirect from a public host —
// while an admin's configuration, and a member's once an admin allows it,
// does.
func TestOutboundPolicyKeepsMembersOffThePrivateNetwork(t *testing.T) {
	t.Parallel()
	h := startServer(t, testConfig(t))
	h.setOutboundAllowPrivate(false)
	h.call("PUT", "/api/v1/settings/outbound_allowed_hosts", h.admin, map[string]string{"value": "127.0.0.2"}).want(t, 200)
	member := h.member("mia")

	// The internal services: a model API and an MCP server.
	var modelHits, mcpHits, asHits atomic.Int64
	internalModel := loopbacktest.Serve(t, "127.0.0.1", counted(&modelHits, scripted.New(scripted.Options{}).Handler()))
	srv := sdk.NewServer(&sdk.Implementation{Name: "internal", Version: "1"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "secrets", Description: "internal"}, func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "internal data"}}}, nil, nil
	})
	internalMCP := loopbacktest.Serve(t, "127.0.0.1", counted(&mcpHits, sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)))
	internalAS := loopbacktest.Serve(t, "127.0.0.1", counted(&asHits, http.NotFoundHandler()))
	// The public host: it redirects into the network, and its MCP
	// endpoint names the internal authorization server.
	outside := loopbacktest.Serve(t, "127.0.0.2", redirectTo(internalModel.URL))
	var protected *httptest.Server
	protected = loopbacktest.Serve(t, "127.0.0.2", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/.well-known/oauth-protected-resource") {
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(oauthex.ProtectedResourceMetadata{Resource: protected.URL + "/mcp", AuthorizationServers: []string{internalAS.URL}})
			return
		}
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+protected.URL+`/.well-known/oauth-protected-resource/mcp"`)
		http.Error(w, "sign in", http.StatusUnauthorized)
	}))
	byName := strings.Replace(internalModel.URL, "127.0.0.1", "localhost", 1)

	// Providers: the test probe, the model list and a run.
	for name, base := range map[string]string{"address": internalModel.URL, "name": byName, "redirect": outside.URL} {
		prov := h.createProvider(member, map[string]any{"name": "p-" + name, "base_url": base + "/v1", "api_key": "k"})
		var probe httpapi.ProviderTestView
		h.call("POST", "/api/v1/providers/"+prov.ID+"/test", member, nil).want(t, 200).decode(t, &probe)
		if probe.OK {
			t.Fatalf("%s: the probe reached the model", name)
		}
		models := h.call("GET", "/api/v1/providers/"+prov.ID+"/models", member, nil)
		if name == "redirect" {
			// The vendor SDKs follow no redirect off the base URL's origin
			// either; the dial would be refused if they did.
			models.wantErr(t, 503, "unavailable")
			continue
		}
		wantPolicy(t, name+": the probe", probe.Error)
		wantPolicy(t, name+": the model list", models.wantErr(t, 400, "validation").Message)
	}
	// MCP: the endpoint, and the OAuth discovery of a public endpoint.
	for name, endpoint := range map[string]string{"address": internalMCP.URL, "name": strings.Replace(internalMCP.URL, "127.0.0.1", "localhost", 1)} {
		var s httpapi.MCPServerView
		h.call("POST", "/api/v1/mcp-servers", member, map[string]any{"name": "m-" + name, "config": map[string]any{"endpoint": endpoint}}).
			want(t, 201).decode(t, &s)
		v := h.waitMCP(member, s.ID, "disconnected")
		wantPolicy(t, name+": the MCP server", v.LastError)
	}
	var oauthServer httpapi.MCPServerView
	h.call("POST", "/api/v1/mcp-servers", member, map[string]any{"name": "m-oauth",
		"config": map[string]any{"endpoint": protected.URL + "/mcp", "auth_mode": "oauth"}}).want(t, 201).decode(t, &oauthServer)
	d := h.call("POST", "/api/v1/mcp-servers/"+oauthServer.ID+"/connect", member, nil).wantErr(t, 502, "upstream")
	wantPolicy(t, "the OAuth discovery", d.Message)
	// Skill imports.
	d = h.call("POST", "/api/v1/skill-imports", member, map[string]any{"url": byName + "/SKILL.md"}).wantErr(t, 400, "validation")
	wantPolicy(t, "a skill import", d.Message)
	if modelHits.Load()+mcpHits.Load()+asHits.Load() != 0 {
		t.Fatalf("the internal services were reached: model %d, MCP %d, authorization server %d", modelHits.Load(), mcpHits.Load(), asHits.Load())
	}

	// An admin's configuration reaches them.
	prov := h.createProvider(h.admin, map[string]any{"name": "admin-p", "base_url": byName + "/v1", "api_key": "k"})
	var probe httpapi.ProviderTestView
	h.call("POST", "/api/v1/providers/"+prov.ID+"/test", h.admin, nil).want(t, 200).decode(t, &probe)
	if !probe.OK || modelHits.Load() == 0 {
		t.Fatalf("an admin's provider: %+v", probe)
	}
	var adminMCP httpapi.MCPServerView
	h.call("POST", "/api/v1/mcp-servers", h.admin, map[string]any{"name": "admin-m", "config": map[string]any{"endpoint": internalMCP.URL}}).
		want(t, 201).decode(t, &adminMCP)
	h.waitMCP(h.admin, adminMCP.ID, "connected")

	// And a member's, once an admin allows the private network.
	h.setOutboundAllowPrivate(true)
	memberProv := h.createProvider(member, map[string]any{"name": "allowed", "base_url": internalModel.URL + "/v1", "api_key": "k"})
	h.call("POST", "/api/v1/providers/"+memberProv.ID+"/test", member, nil).want(t, 200).decode(t, &probe)
	if !probe.OK {
		t.Fatalf("a member's provider with the setting on: %+v", probe)
	}
}
