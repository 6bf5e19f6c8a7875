//go:build unix

package main

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/agents-server/agents-server/adapters/httpapi"
	"github.com/agents-server/agents-server/adapters/llm/scripted"
	"github.com/agents-server/agents-server/adapters/mcp/mcptest"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/internal/workbenchparts"
)

// personalGrant reads a person's grant for a server from the store (plain
// JSON: the tests run without a secret key).
func (h *harness) personalGrant(serverID, userID string) domain.MCPGrant {
	h.t.Helper()
	sealed, err := workbenchparts.Of(h.app.wb).DB.FindMCPPersonalGrant(context.Background(), serverID, userID)
	if err != nil {
		h.t.Fatal(err)
	}
	var g domain.MCPGrant
	if sealed != "" {
		if err := json.Unmarshal([]byte(sealed), &g); err != nil {
			h.t.Fatalf("grant %q: %v", sealed, err)
		}
	}
	return g
}

// person is a member with their own agent (selecting the shared server's
// whoami) and a conversation on it.
type person struct {
	id, token, session, agent string
}

// TestMCPPersonalSignIns: an admin shares an OAuth MCP server that each
// person signs in to. Two members sign in with their own accounts against
// the real authorization server; each run's tool call carries its own
// person's token; a third member without a grant sees needs_auth while the
// others see connected, and their run is told the tools wait for their
// sign-in; one signing out leaves the other connected; a trigger's run
// uses its owner's grant.
func TestMCPPersonalSignIns(t *testing.T) {
	t.Parallel()
	as := mcptest.OAuth(t)
	ps := startProtected(t, as.URL)
	model, murl := startScripted(t)
	model.SetScript("who", scripted.Script{Exchanges: []scripted.Exchange{{Steps: []scripted.Step{
		{ToolCalls: []scripted.ToolCall{{Name: "team__whoami", Arguments: `{}`}}}, {Text: "done"}}}}})
	h := startServer(t, testConfig(t))

	var srv httpapi.MCPServerView
	// Each person signs in: only for a shared server.
	h.call("POST", "/api/v1/mcp-servers", h.admin, map[string]any{"name": "mine", "config": map[string]any{
		"endpoint": ps.endpoint, "auth_mode": "oauth", "per_person_auth": true}}).wantErr(t, 400, "validation")
	h.call("POST", "/api/v1/mcp-servers", h.admin, map[string]any{"name": "team", "scope": "global", "config": map[string]any{
		"endpoint": ps.endpoint, "auth_mode": "oauth", "per_person_auth": true}}).want(t, 201).decode(t, &srv)
	if !srv.Config.PerPersonAuth {
		t.Fatalf("created %+v", srv)
	}

	people := map[string]*person{}
	for _, name := range []string{"ann", "bob", "cy"} {
		p := &person{id: h.createUser(name, "password-of-"+name, "member")}
		p.token = h.login(name, "password-of-"+name)
		prov := h.createProvider(p.token, protocols(murl)["openai-chat"])
		p.agent = h.createAgent(p.token, map[string]any{"name": "who-" + name, "model": "who", "provider_id": prov.ID,
			"tools": []string{"team__whoami"}}).ID
		p.session = h.createSession(p.token, map[string]any{"agent_config_id": p.agent}).ID
		if v := h.waitMCP(p.token, srv.ID, "needs_auth"); v.HasOAuthToken {
			t.Fatalf("%s has a grant before signing in: %+v", name, v)
		}
		people[name] = p
	}
	ann, bob, cy := people["ann"], people["bob"], people["cy"]

	// Two members sign in, each in their own browser, as themselves.
	for _, p := range []*person{ann, bob} {
		b := newBrowser(t)
		signIn(t, b, h.connectOAuth(p.token, srv.ID, b))
		h.waitMCP(p.token, srv.ID, "connected")
	}
	if v := h.mcpServer(cy.token, srv.ID); v.Status != "needs_auth" || v.HasOAuthToken || len(v.Tools) != 0 {
		t.Fatalf("cy, who never signed in: %+v", v)
	}
	for _, p := range []*person{ann, bob} {
		if v := h.mcpServer(p.token, srv.ID); v.Status != "connected" || !v.HasOAuthToken || len(v.Tools) != 1 {
			t.Fatalf("a member who signed in: %+v", v)
		}
	}
	if g := h.storedGrant(srv.ID); g.AccessToken != "" {
		t.Fatalf("a personal sign-in wrote the shared grant: %+v", g)
	}
	annToken, bobToken := h.personalGrant(srv.ID, ann.id).AccessToken, h.personalGrant(srv.ID, bob.id).AccessToken
	if annToken == "" || bobToken == "" || annToken == bobToken {
		t.Fatalf("the stored grants: ann %q, bob %q", annToken, bobToken)
	}

	// Each run's tool call carries its own person's token.
	for _, c := range []struct {
		p     *person
		token string
	}{{ann, annToken}, {bob, bobToken}, {ann, annToken}} {
		before := len(ps.whoamiCalls())
		r := h.whoami(c.p.token, c.p.session)
		calls := ps.whoamiCalls()
		if r.IsError || len(calls) != before+1 || calls[before] != tokenPrint(c.token) || !strings.Contains(r.Output, tokenPrint(c.token)) {
			t.Fatalf("a run for %s: %+v, calls %v, want token %s", c.p.id, r, calls, tokenPrint(c.token))
		}
	}

	// Cy's run goes on without the tools, and the model is told why.
	before, asked := len(ps.whoamiCalls()), len(model.Requests())
	h.whoami(cy.token, cy.session)
	if len(ps.whoamiCalls()) != before {
		t.Fatal("a run for a person without a grant called the server")
	}
	told := false
	for _, r := range model.Requests()[asked:] {
		body := string(r.Body)
		told = told || (strings.Contains(body, "until they sign in") && !strings.Contains(body, `"name":"team__whoami"`))
	}
	if !told {
		t.Fatal("the model was not told the tools wait for the person's sign-in")
	}

	// Ann signs out: her grant goes, Bob's stays, and so does his connection.
	var out httpapi.MCPServerView
	h.call("DELETE", "/api/v1/mcp-servers/"+srv.ID+"/my-sign-in", ann.token, nil).want(t, 200).decode(t, &out)
	if out.Status != "needs_auth" || out.HasOAuthToken {
		t.Fatalf("after signing out: %+v", out)
	}
	if g := h.personalGrant(srv.ID, ann.id); g.AccessToken != "" {
		t.Fatalf("ann's grant outlived her sign-out: %+v", g)
	}
	if v := h.mcpServer(bob.token, srv.ID); v.Status != "connected" || !v.HasOAuthToken {
		t.Fatalf("bob after ann signed out: %+v", v)
	}

	// A trigger's run uses its owner's grant.
	var tr httpapi.TriggerSecretView
	h.call("POST", "/api/v1/triggers", bob.token, map[string]any{"kind": "webhook", "target": "agent", "agent_config_id": bob.agent,
		"session_id": bob.session, "brief": "Who am I?"}).want(t, 201).decode(t, &tr)
	before = len(ps.whoamiCalls())
	h.call("POST", "/api/v1/triggers/"+tr.ID+"/fire", bob.token, nil).want(t, 201)
	waitFor(t, func() bool { return len(ps.whoamiCalls()) > before })
	if calls := ps.whoamiCalls(); !slices.Equal(calls[before:], []string{tokenPrint(bobToken)}) {
		t.Fatalf("the trigger's run called with %v, want bob's token %s", calls[before:], tokenPrint(bobToken))
	}

	// A shared sign-in is not one to sign out of.
	var shared httpapi.MCPServerView
	h.call("POST", "/api/v1/mcp-servers", h.admin, map[string]any{"name": "svc", "scope": "global", "config": map[string]any{
		"endpoint": ps.endpoint, "auth_mode": "oauth"}}).want(t, 201).decode(t, &shared)
	h.call("DELETE", "/api/v1/mcp-servers/"+shared.ID+"/my-sign-in", bob.token, nil).wantErr(t, 409, "conflict")

	// The audit log holds each person's own sign-in and ann's sign-out,
	// never a token.
	recs := h.auditLog("&kind=mcp_server&object=" + srv.ID)
	for _, who := range []*person{ann, bob} {
		found := false
		for _, r := range recs {
			found = found || r.Action == "mcp_server.signin" && r.ActorID == who.id && slices.Equal(r.Fields, []string{"oauth_grant"})
		}
		if !found {
			t.Fatalf("no sign-in recorded for %s in %+v", who.id, recs)
		}
	}
	if r := findAudit(t, recs, "mcp_server.signout", srv.ID, ""); r.ActorID != ann.id || r.Address != "127.0.0.1" {
		t.Fatalf("ann's sign-out: %+v", r)
	}
	noSecretIn(t, h, annToken, bobToken)
}
