package mcp_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/mcp"
	"github.com/agents-server/agents-server/core/secrets"
)

// personalInput is a shared OAuth server each person signs in to.
func personalInput(name string) mcp.Input {
	in := oauthInput(name)
	in.Config.PerPersonAuth = true
	return in
}

// getAs reads a server as p sees it.
func (h *harness) getAs(p domain.Principal, id string) mcp.Server {
	h.t.Helper()
	s, err := h.svc.Get(h.t.Context(), p, id)
	if err != nil {
		h.t.Fatalf("get %s as %s: %v", id, p.User.ID, err)
	}
	return s
}

// untilAs polls the server as p sees it until its status is want.
func (h *harness) untilAs(p domain.Principal, id string, want domain.MCPStatus) mcp.Server {
	h.t.Helper()
	var s mcp.Server
	eventually(h.t, p.User.ID+"'s status "+string(want), func() bool {
		s = h.getAs(p, id)
		return s.Status == want
	})
	return s
}

// signInAs runs p's interactive sign-in with code to its end.
func (h *harness) signInAs(p domain.Principal, id, code string) {
	h.t.Helper()
	res, err := h.svc.Connect(h.t.Context(), p, id, callbackURL)
	if err != nil || res.AuthorizeURL == "" {
		h.t.Fatalf("connect as %s = %+v, %v; want an authorize URL", p.User.ID, res, err)
	}
	if err := h.svc.Deliver(mcp.Callback{State: stateOf(h.t, res.AuthorizeURL), Code: code, Caller: &p}); err != nil {
		h.t.Fatalf("deliver as %s: %v", p.User.ID, err)
	}
	h.untilAs(p, id, domain.MCPConnected)
}

// personalGrant opens p's stored grant for the server ("" access token
// when there is none).
func (h *harness) personalGrant(id string, p domain.Principal) domain.MCPGrant {
	h.t.Helper()
	sealed, err := h.store.FindMCPPersonalGrant(h.t.Context(), id, p.User.ID)
	if err != nil || sealed == "" {
		return domain.MCPGrant{}
	}
	plain, err := h.box.Open(secrets.Place("mcp_personal_grants", "oauth_grant", id, p.User.ID), sealed)
	if err != nil {
		h.t.Fatalf("open %s's grant: %v", p.User.ID, err)
	}
	var g domain.MCPGrant
	if err := json.Unmarshal([]byte(plain), &g); err != nil {
		h.t.Fatal(err)
	}
	return g
}

func TestPersonalSignInIsOnlyForSharedOAuthServers(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	_, err := h.svc.Create(t.Context(), alice, domain.ScopePrivate, personalInput("mine"))
	wantCode(t, "a private server each person signs in to", err, errs.Validation)
	header := headerInput("plain")
	header.Config.PerPersonAuth = true
	_, err = h.svc.Create(t.Context(), admin, domain.ScopeGlobal, header)
	wantCode(t, "a header server each person signs in to", err, errs.Validation)
	if len(h.rows()) != 0 {
		t.Fatalf("refused creates stored %+v", h.rows())
	}
	s := h.create(admin, domain.ScopeGlobal, personalInput("team"))
	_, err = h.svc.SetScope(t.Context(), admin, s.ID, domain.ScopePrivate)
	wantCode(t, "making a server each person signs in to private", err, errs.Conflict)
	_, err = h.svc.SignOut(t.Context(), alice, h.create(admin, domain.ScopeGlobal, oauthInput("svc")).ID)
	wantCode(t, "signing out of a shared sign-in", err, errs.Conflict)
}

func TestEachPersonSignsInAndCallsWithTheirOwnGrant(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	e := h.endpoint("team", "whoami")
	s := h.create(admin, domain.ScopeGlobal, personalInput("team"))
	carol := domain.Principal{User: domain.User{ID: "u-carol", Role: domain.RoleMember}}
	for _, p := range []domain.Principal{alice, bob, carol} {
		if v := h.untilAs(p, s.ID, domain.MCPNeedsAuth); v.HasOAuthToken {
			t.Fatalf("%s has a grant before signing in: %+v", p.User.ID, v)
		}
	}

	// A member signs in without edit rights: as themselves.
	h.signInAs(alice, s.ID, "code-a")
	if v := h.getAs(bob, s.ID); v.Status != domain.MCPNeedsAuth || v.HasOAuthToken {
		t.Fatalf("alice's sign-in moved bob's status: %+v", v)
	}
	h.signInAs(bob, s.ID, "code-b")
	if h.row(s.ID).SealedGrant != "" {
		t.Fatal("a personal sign-in wrote the shared grant")
	}
	if ga, gb := h.personalGrant(s.ID, alice), h.personalGrant(s.ID, bob); ga.AccessToken != "access-code-a" || gb.AccessToken != "access-code-b" {
		t.Fatalf("stored grants: alice %+v, bob %+v", ga, gb)
	}
	if v := h.getAs(alice, s.ID); !v.HasOAuthToken || len(v.Tools) != 1 {
		t.Fatalf("alice's view: %+v", v)
	}

	// Another replica (or a restart) connects each person on their own
	// stored grant when they first use the server.
	h.svc = h.newService()
	if err := h.svc.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	// Start dials everyone who keeps a grant, before anyone reads it.
	eventually(t, "start connects each person on their stored grant", func() bool {
		n := 0
		for _, ss := range e.Open() {
			if o := ss.Target().OAuth; o != nil && o.Grant != nil {
				n++
			}
		}
		return n == 2
	})
	h.untilAs(alice, s.ID, domain.MCPConnected)
	h.untilAs(bob, s.ID, domain.MCPConnected)

	// Each run's call goes through its own person's connection.
	own := domain.Ownership{Scope: domain.ScopeGlobal, OwnerID: admin.User.ID}
	for _, c := range []struct {
		p     domain.Principal
		token string
	}{{alice, "access-code-a"}, {bob, "access-code-b"}} {
		live, unavailable, err := h.svc.Resolve(t.Context(), own, c.p.User.ID, []string{"team__whoami"})
		if err != nil || len(live) != 1 || len(unavailable) != 0 {
			t.Fatalf("resolve for %s: %+v %+v %v", c.p.User.ID, live, unavailable, err)
		}
		if _, err := h.svc.Call(t.Context(), live[0], json.RawMessage(`{}`)); err != nil {
			t.Fatalf("call for %s: %v", c.p.User.ID, err)
		}
		found := false
		for _, ss := range e.Open() {
			if g := ss.Target().OAuth.Grant; g != nil && g.AccessToken == c.token && len(ss.Calls()) == 1 {
				found = true
			}
		}
		if !found {
			t.Errorf("%s's call did not go through the session holding %s", c.p.User.ID, c.token)
		}
	}
	// Carol has no grant: told why, the run goes on without the tools.
	live, unavailable, err := h.svc.Resolve(t.Context(), own, carol.User.ID, []string{"team__whoami"})
	if err != nil || len(live) != 0 || len(unavailable) != 1 || !strings.Contains(unavailable[0].Reason, "until they sign in") {
		t.Fatalf("resolve for carol: %+v %+v %v", live, unavailable, err)
	}

	// Alice signs out: bob stays connected.
	v, err := h.svc.SignOut(t.Context(), alice, s.ID)
	if err != nil || v.Status != domain.MCPNeedsAuth || v.HasOAuthToken {
		t.Fatalf("sign out = %+v, %v", v, err)
	}
	if g := h.personalGrant(s.ID, alice); g.AccessToken != "" {
		t.Fatalf("alice's grant outlived her sign-out: %+v", g)
	}
	if v := h.getAs(bob, s.ID); v.Status != domain.MCPConnected {
		t.Fatalf("bob after alice signed out: %+v", v)
	}

	// One shared sign-in again: the personal grants no longer apply.
	in := oauthInput("team")
	if _, err := h.svc.Update(t.Context(), admin, s.ID, in); err != nil {
		t.Fatal(err)
	}
	if g := h.personalGrant(s.ID, bob); g.AccessToken != "" {
		t.Fatalf("bob's grant outlived the switch to a shared sign-in: %+v", g)
	}
	h.untilAs(bob, s.ID, domain.MCPNeedsAuth)
}

// TestAPersonalSignInOnAnotherReplicaConnectsWhenRead: a replica that
// started before a person signed in on another connects them the first
// time it reads the server for them; the others stay as they were.
func TestAPersonalSignInOnAnotherReplicaConnectsWhenRead(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.endpoint("team", "whoami")
	s := h.create(admin, domain.ScopeGlobal, personalInput("team"))
	other := h.newService()
	if err := other.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	h.signInAs(alice, s.ID, "code-a")
	eventually(t, "the other replica connects alice when it reads the server for her", func() bool {
		v, err := other.Get(t.Context(), alice, s.ID)
		return err == nil && v.Status == domain.MCPConnected && v.HasOAuthToken
	})
	if v, err := other.Get(t.Context(), bob, s.ID); err != nil || v.Status != domain.MCPNeedsAuth {
		t.Fatalf("bob on the other replica: %+v, %v", v, err)
	}
}
