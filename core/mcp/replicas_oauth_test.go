package mcp_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/mcp"
)

// The tests of a sign-in whose callback reaches another replica: two
// Services over one store, one dialer (one MCP server and authorization
// server) and one key, as two replicas over one database are.

// untilOn polls svc's view of the server until ok accepts it.
func (h *harness) untilOn(svc *mcp.Service, id, what string, ok func(mcp.Server) bool) mcp.Server {
	h.t.Helper()
	deadline := time.Now().Add(waitFor)
	for {
		s, err := svc.Get(context.Background(), admin, id)
		if err != nil {
			h.t.Fatalf("get %s: %v", id, err)
		}
		if ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("server %s never became %s there: status %s, last_error %q", s.Name, what, s.Status, s.LastError)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// replicaPair is the harness's service (A, where sign-ins begin) and a
// second, started one (B, where callbacks land); B has tried the server
// and waits for a sign-in too.
func replicaPair(t *testing.T, name string) (h *harness, b *mcp.Service, srv mcp.Server) {
	h = newHarness(t)
	if err := h.svc.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	srv, _ = h.signInPending(name)
	b = h.newService()
	if err := b.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	h.untilOn(b, srv.ID, "needs_auth", func(s mcp.Server) bool { return s.Status == domain.MCPNeedsAuth })
	return h, b, srv
}

func TestSignInBegunOnOneReplicaCompletesOnAnother(t *testing.T) {
	t.Parallel()
	h, b, srv := replicaPair(t, "shared")
	res, err := h.svc.Connect(t.Context(), alice, srv.ID, callbackURL)
	if err != nil || res.AuthorizeURL == "" || res.Binding == "" {
		t.Fatalf("connect on A = %+v, %v", res, err)
	}
	state := stateOf(t, res.AuthorizeURL)
	// B knows nothing of the attempt but what the store keeps: the
	// browser's binding is checked there.
	wantCode(t, "a foreign browser on B", b.Deliver(mcp.Callback{State: state, Code: "x", Bindings: map[string]string{srv.ID: "guess"}}),
		errs.Forbidden)
	wantCode(t, "bob on B", b.Deliver(mcp.Callback{State: state, Code: "x", Caller: &bob}), errs.Forbidden)
	if err := b.Deliver(mcp.Callback{State: state, Code: "code-b", Iss: "https://as.example", Bindings: map[string]string{srv.ID: res.Binding}}); err != nil {
		t.Fatalf("alice's browser on B: %v", err)
	}
	// Single use: a replay anywhere is refused, whether or not A took the
	// code yet, and changes nothing.
	for name, svc := range map[string]*mcp.Service{"A": h.svc, "B": b} {
		err := svc.Deliver(mcp.Callback{State: state, Code: "replayed", Bindings: map[string]string{srv.ID: res.Binding}})
		if !errs.Is(err, errs.Conflict) && !errs.Is(err, errs.NotFound) {
			t.Errorf("a replayed callback on %s = %v, want conflict or not_found", name, err)
		}
	}
	// A, whose dial waited, exchanges the code and connects.
	h.waitStatus(srv.ID, domain.MCPConnected)
	if g := h.openGrant(srv.ID); g.AccessToken != "access-code-b" {
		t.Errorf("stored grant %+v, want the one code-b was exchanged for", g)
	}
	// B, which waited for a sign-in, sees the new grant and connects too.
	got := h.untilOn(b, srv.ID, "connected", func(s mcp.Server) bool { return s.Status == domain.MCPConnected })
	if !got.HasOAuthToken || len(got.Tools) != 1 {
		t.Errorf("B after the sign-in: has_oauth_token %v, tools %+v", got.HasOAuthToken, got.Tools)
	}
	// The sign-in is over: its state delivers nothing on either replica.
	wantCode(t, "the spent state on B", b.Deliver(mcp.Callback{State: state, Code: "late", Caller: &alice}), errs.NotFound)
	if _, err := h.store.FindMCPSignIn(t.Context(), state); !errs.Is(err, errs.NotFound) {
		t.Errorf("the finished sign-in stays in the store: %v", err)
	}
}

func TestSignInCompletedByPasteOnAnotherReplica(t *testing.T) {
	t.Parallel()
	h, b, srv := replicaPair(t, "pasted-b")
	state := stateOf(t, h.connect(srv.ID))
	if err := b.Complete(alice, callbackURL+"?state="+state+"&code=pasted"); err != nil {
		t.Fatalf("alice pastes on B: %v", err)
	}
	h.waitStatus(srv.ID, domain.MCPConnected)
}

func TestRefusalFiledOnAnotherReplicaFailsTheSignIn(t *testing.T) {
	t.Parallel()
	h, b, srv := replicaPair(t, "refused-b")
	state := stateOf(t, h.connect(srv.ID))
	wantCode(t, "access_denied on B", b.Deliver(mcp.Callback{State: state, Error: "access_denied", Description: "no", Caller: &alice}), errs.Upstream)
	got := h.until(srv.ID, "out of authorizing", func(s mcp.Server) bool { return s.Status != domain.MCPAuthorizing })
	if got.Status != domain.MCPNeedsAuth || got.HasOAuthToken || !strings.HasPrefix(got.LastError, "the authorization server refused the sign-in: access_denied: no") {
		t.Errorf("A after the refusal: status %s, has_oauth_token %v, last_error %q", got.Status, got.HasOAuthToken, got.LastError)
	}
}

func TestExpiredSignInIsRefusedOnEveryReplica(t *testing.T) {
	t.Parallel()
	h, b, srv := replicaPair(t, "expired-b")
	state := stateOf(t, h.connect(srv.ID))
	// The store's clock passes the sign-in's life (the dial's own timer is
	// real time and still runs): no replica hands it a code.
	h.clock.Advance(mcp.AttemptTTL)
	wantCode(t, "deliver on B after the TTL", b.Deliver(mcp.Callback{State: state, Code: "late", Caller: &alice}), errs.NotFound)
	wantCode(t, "deliver on A after the TTL", h.svc.Deliver(mcp.Callback{State: state, Code: "late", Caller: &alice}), errs.NotFound)
	if got := h.get(srv.ID); got.Status != domain.MCPAuthorizing || got.HasOAuthToken {
		t.Errorf("after refused late callbacks: status %s, has_oauth_token %v", got.Status, got.HasOAuthToken)
	}
}

func TestSupersededSignInIsRefusedOnAnotherReplica(t *testing.T) {
	t.Parallel()
	h, b, srv := replicaPair(t, "superseded-b")
	first := stateOf(t, h.connect(srv.ID))
	second := stateOf(t, h.connect(srv.ID))
	// Connect again returned: the first sign-in is gone from the store.
	wantCode(t, "the superseded state on B", b.Deliver(mcp.Callback{State: first, Code: "old", Caller: &alice}), errs.NotFound)
	if err := b.Deliver(mcp.Callback{State: second, Code: "new", Caller: &alice}); err != nil {
		t.Fatalf("the current state on B: %v", err)
	}
	h.waitStatus(srv.ID, domain.MCPConnected)
	if g := h.openGrant(srv.ID); g.AccessToken != "access-new" {
		t.Errorf("stored grant %+v, want the current sign-in's", g)
	}
}

func TestAServerCreatedOnAnotherReplicaConnectsWhenRead(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	b := h.newService()
	if err := b.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	e := h.endpoint("elsewhere", "lookup")
	srv := h.create(alice, domain.ScopePrivate, headerInput("elsewhere"))
	h.waitStatus(srv.ID, domain.MCPConnected)
	dials := len(e.Targets())
	// B never heard of the server; reading it there dials it once.
	got := h.untilOn(b, srv.ID, "connected", func(s mcp.Server) bool { return s.Status == domain.MCPConnected })
	if len(got.Tools) != 1 || len(e.Targets()) != dials+1 {
		t.Errorf("B: tools %+v after %d dials, want one tool after one more dial than A's %d", got.Tools, len(e.Targets()), dials)
	}
}
