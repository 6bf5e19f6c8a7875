package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/mcp"
	"github.com/agents-server/agents-server/ports"
	"github.com/agents-server/agents-server/ports/porttest"
)

// openGrant opens the server's stored grant.
func (h *harness) openGrant(id string) domain.MCPGrant {
	h.t.Helper()
	plain, err := h.box.Open(grantPlace(id), h.row(id).SealedGrant)
	if err != nil {
		h.t.Fatal(err)
	}
	var g domain.MCPGrant
	if err := json.Unmarshal([]byte(plain), &g); err != nil {
		h.t.Fatalf("stored grant %q: %v", plain, err)
	}
	return g
}

// stateOf is the state parameter of an authorize URL.
func stateOf(t *testing.T, authorizeURL string) string {
	t.Helper()
	u, err := url.Parse(authorizeURL)
	if err != nil || u.Query().Get("state") == "" {
		t.Fatalf("authorize URL %q has no state", authorizeURL)
	}
	return u.Query().Get("state")
}

// signInPending creates an OAuth server named name that waits for a
// sign-in (needs_auth), with its endpoint offering one tool.
func (h *harness) signInPending(name string) (mcp.Server, *porttest.MCPEndpoint) {
	h.t.Helper()
	e := h.endpoint(name, "search")
	s := h.create(alice, domain.ScopePrivate, oauthInput(name))
	return h.waitStatus(s.ID, domain.MCPNeedsAuth), e
}

// connect calls Connect as alice and wants an authorize URL.
func (h *harness) connect(id string) string {
	h.t.Helper()
	res, err := h.svc.Connect(h.t.Context(), alice, id, callbackURL)
	if err != nil {
		h.t.Fatalf("connect: %v", err)
	}
	if res.Status != domain.MCPAuthorizing || res.AuthorizeURL == "" {
		h.t.Fatalf("connect = %+v, want authorizing with an authorize URL", res)
	}
	return res.AuthorizeURL
}

func TestOAuthSignInConnects(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	s, e := h.signInPending("drive")
	authorizeURL := h.connect(s.ID)
	u, _ := url.Parse(authorizeURL)
	if u.Query().Get("redirect_uri") != callbackURL {
		t.Errorf("authorize URL %q: want redirect_uri %s", authorizeURL, callbackURL)
	}
	if got := h.get(s.ID); got.Status != domain.MCPAuthorizing || got.HasOAuthToken {
		t.Errorf("while the person signs in: status %s, has_oauth_token %v", got.Status, got.HasOAuthToken)
	}
	targets := e.Targets()
	if o := targets[len(targets)-1].OAuth; o == nil || o.RedirectURL != callbackURL || o.Authorize == nil {
		t.Errorf("the interactive dial got OAuth %+v, want the callback as redirect and an Authorize", o)
	}

	state := stateOf(t, authorizeURL)
	if err := h.svc.Deliver(mcp.Callback{State: state, Code: "code-1", Iss: "https://as.example", Caller: &alice}); err != nil {
		t.Fatalf("deliver: %v", err)
	}
	h.waitStatus(s.ID, domain.MCPConnected)
	// Read again: a view reads the row, then the live status, so the one
	// that saw the status change may hold the row from before the save.
	got := h.get(s.ID)
	if !got.HasOAuthToken || len(got.Tools) != 1 || got.Tools[0].Name != "drive__search" {
		t.Errorf("after the sign-in: has_oauth_token %v, tools %+v", got.HasOAuthToken, got.Tools)
	}
	sealed := h.row(s.ID).SealedGrant
	if !strings.HasPrefix(sealed, "enc:") || strings.Contains(sealed, "access-code-1") {
		t.Errorf("grant stored as %q, want it sealed", sealed)
	}
	if g := h.openGrant(s.ID); g.AccessToken != "access-code-1" || g.RefreshToken != "refresh-code-1" {
		t.Errorf("stored grant = %+v, want the exchanged one", g)
	}

	// The attempt is single-shot: its state is spent.
	wantCode(t, "deliver a spent state", h.svc.Deliver(mcp.Callback{State: state, Code: "code-2", Caller: &alice}), errs.NotFound)
	// A connected server with a grant reconnects without signing in.
	res, err := h.svc.Connect(t.Context(), alice, s.ID, callbackURL)
	if err != nil || res.AuthorizeURL != "" {
		t.Errorf("connect with a grant = %+v, %v; want no authorize URL", res, err)
	}
	h.waitStatus(s.ID, domain.MCPConnected)
}

func TestDeliverWithoutAWaitingSignIn(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	s, _ := h.signInPending("wiki")
	for _, cb := range []mcp.Callback{{State: "unknown", Code: "c", Caller: &alice}, {State: "", Code: "c", Caller: &alice}} {
		wantCode(t, "deliver state "+cb.State, h.svc.Deliver(cb), errs.NotFound)
	}
	state := stateOf(t, h.connect(s.ID))
	wantCode(t, "deliver without a code", h.svc.Deliver(mcp.Callback{State: state, Caller: &alice}), errs.Validation)
	if got := h.get(s.ID); got.Status != domain.MCPAuthorizing {
		t.Errorf("a redirect without a code ended the attempt: status %s", got.Status)
	}
}

func TestConnectAgainSupersedesTheSignIn(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	s, _ := h.signInPending("mail")
	first := stateOf(t, h.connect(s.ID))
	second := stateOf(t, h.connect(s.ID))
	if first == second {
		t.Fatalf("connect again issued the same state %q", first)
	}
	if got := h.get(s.ID); got.Status != domain.MCPAuthorizing {
		t.Errorf("after connecting again: status %s, want authorizing", got.Status)
	}
	// The superseded attempt lets go of its state as its dial winds down
	// (TestDeliverToASupersededStateIsRefusedAtOnce wants it at once).
	eventually(t, "the superseded state no longer delivers", func() bool {
		return errs.Is(h.svc.Deliver(mcp.Callback{State: first, Code: "old", Caller: &alice}), errs.NotFound)
	})
	if err := h.svc.Deliver(mcp.Callback{State: second, Code: "new", Caller: &alice}); err != nil {
		t.Fatalf("deliver the current state: %v", err)
	}
	h.waitStatus(s.ID, domain.MCPConnected)
	if g := h.openGrant(s.ID); g.AccessToken != "access-new" {
		t.Errorf("stored grant %+v, want the current sign-in's", g)
	}
}

func TestDeliveredErrorFailsTheSignIn(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	s, _ := h.signInPending("crm")
	state := stateOf(t, h.connect(s.ID))
	err := h.svc.Deliver(mcp.Callback{State: state, Error: "access_denied", Description: "the user said no", Caller: &alice})
	wantCode(t, "deliver access_denied", err, errs.Upstream)
	if !strings.Contains(errs.MessageOf(err), "access_denied") {
		t.Errorf("message %q, want the authorization server's error", errs.MessageOf(err))
	}
	got := h.until(s.ID, "out of authorizing", func(s mcp.Server) bool { return s.Status != domain.MCPAuthorizing })
	if got.Status != domain.MCPNeedsAuth || !strings.Contains(got.LastError, "access_denied: the user said no") || got.HasOAuthToken {
		t.Errorf("after access_denied: status %s, last_error %q, has_oauth_token %v", got.Status, got.LastError, got.HasOAuthToken)
	}
	wantCode(t, "deliver to the failed attempt", h.svc.Deliver(mcp.Callback{State: state, Code: "late", Caller: &alice}), errs.NotFound)
}

func TestSecondAuthorizeInOneAttemptFailsFast(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	s, e := h.signInPending("strict")
	// The resource server refuses the token the sign-in yields, so the
	// dial asks for a second sign-in: there is no second popup.
	e.RejectTokens(true)
	state := stateOf(t, h.connect(s.ID))
	if err := h.svc.Deliver(mcp.Callback{State: state, Code: "c", Caller: &alice}); err != nil {
		t.Fatal(err)
	}
	// waitFor is far below the 5-minute attempt TTL: this is the fast path.
	h.until(s.ID, "out of authorizing", func(s mcp.Server) bool { return s.Status != domain.MCPAuthorizing })
	// Read again: a view reads the row, then the live status, so the one
	// that saw the status change may hold the row from before the save.
	got := h.get(s.ID)
	if !strings.Contains(got.LastError, "authorization completed but was not accepted") {
		t.Errorf("last_error %q, want the not-accepted message", got.LastError)
	}
	if got.Status == domain.MCPConnected || !got.HasOAuthToken {
		t.Errorf("status %s, has_oauth_token %v; want not connected, the exchanged token kept", got.Status, got.HasOAuthToken)
	}
}

func TestClearGrantNeedsSignInAndOldGrantsStayGone(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	s, e := h.signInPending("notes")
	if err := h.svc.Deliver(mcp.Callback{State: stateOf(t, h.connect(s.ID)), Code: "c1", Caller: &alice}); err != nil {
		t.Fatal(err)
	}
	h.waitStatus(s.ID, domain.MCPConnected)
	session := e.Open()[0]

	// A refresh mid-session writes through the one writer, again and again.
	for _, token := range []string{"refreshed-1", "refreshed-2"} {
		if err := session.Refresh(domain.MCPGrant{AccessToken: token, RefreshToken: "r", TokenURL: "t", ClientID: "c"}); err != nil {
			t.Fatalf("refresh %s: %v", token, err)
		}
		if g := h.openGrant(s.ID); g.AccessToken != token {
			t.Errorf("after refresh %s the stored grant is %+v", token, g)
		}
	}

	wantCode(t, "another member clears", func() error { _, err := h.svc.ClearGrant(t.Context(), bob, s.ID); return err }(), errs.NotFound)
	cleared, err := h.svc.ClearGrant(t.Context(), alice, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if cleared.HasOAuthToken || h.row(s.ID).SealedGrant != "" {
		t.Errorf("after ClearGrant: has_oauth_token %v, stored %q", cleared.HasOAuthToken, h.row(s.ID).SealedGrant)
	}
	eventually(t, "the old session is closed", session.Closed)
	h.waitStatus(s.ID, domain.MCPNeedsAuth)

	// The old session's refresh lands after the clear: it must not bring
	// the old grant back.
	err = session.Refresh(domain.MCPGrant{AccessToken: "stale", TokenURL: "t", ClientID: "c"})
	var me *ports.MCPError
	if !errors.As(err, &me) || me.Kind != ports.MCPNeedsAuth {
		t.Errorf("a refresh after the clear = %v, want needs_auth", err)
	}
	if got := h.row(s.ID).SealedGrant; got != "" {
		t.Errorf("a stale refresh stored a grant: %q", got)
	}
	if got := h.get(s.ID); got.HasOAuthToken || got.Status != domain.MCPNeedsAuth {
		t.Errorf("after the stale refresh: has_oauth_token %v, status %s", got.HasOAuthToken, got.Status)
	}
}

func TestConnectWithAWorkingGrantReturnsPromptly(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	e := h.endpoint("sheets", "read")
	s := h.withGrant("sheets")
	h.waitStatus(s.ID, domain.MCPConnected)
	// The token is refused for a while: the connection drops and its
	// redial ends in needs_auth, the grant still stored.
	e.RejectTokens(true)
	e.Kill(unreachable("stream closed"))
	if got := h.waitStatus(s.ID, domain.MCPNeedsAuth); !got.HasOAuthToken {
		t.Fatal("the grant was lost")
	}
	// The authorization server takes the refresh again: the person's
	// Connect starts an interactive attempt whose dial needs no sign-in.
	e.RejectTokens(false)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
	defer cancel()
	res, err := h.svc.Connect(ctx, alice, s.ID, callbackURL)
	if err != nil || res.AuthorizeURL != "" || res.Status != domain.MCPConnected {
		t.Errorf("connect = %+v, %v; want connected at once, no authorize URL (it waits for a URL that never comes)", res, err)
	}
	h.waitStatus(s.ID, domain.MCPConnected)
}

func TestDeliverToASupersededStateIsRefusedAtOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	s, _ := h.signInPending("race")
	// The window is a goroutine's wake-up: repeat to see it.
	accepted := 0
	for range 200 {
		first := stateOf(t, h.connect(s.ID))
		h.connect(s.ID)
		if err := h.svc.Deliver(mcp.Callback{State: first, Code: "old", Caller: &alice}); err == nil {
			accepted++
		}
	}
	if accepted > 0 {
		t.Errorf("%d of 200 codes for a superseded state were reported delivered, want every one not_found", accepted)
	}
}

// The sign-in completes only for who began it: Alice sends Bob her
// authorize URL; his browser's callback (no binding) and his credential
// complete nothing, and her own browser (the binding) still can.
func TestSignInCompletesOnlyForItsInitiator(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	s, _ := h.signInPending("fixation")
	res, err := h.svc.Connect(t.Context(), alice, s.ID, callbackURL)
	if err != nil || res.Binding == "" {
		t.Fatalf("connect = %+v, %v; want a binding for the browser", res, err)
	}
	state := stateOf(t, res.AuthorizeURL)
	for name, cb := range map[string]mcp.Callback{
		"bob's browser":        {State: state, Code: "bob-code"},
		"a wrong binding":      {State: state, Code: "bob-code", Bindings: map[string]string{s.ID: "guess"}},
		"another's binding":    {State: state, Code: "bob-code", Bindings: map[string]string{"other": res.Binding}},
		"bob's own credential": {State: state, Code: "bob-code", Caller: &bob},
		"bob's browser, error": {State: state, Error: "access_denied"},
	} {
		wantCode(t, name, h.svc.Deliver(cb), errs.Forbidden)
	}
	if got := h.get(s.ID); got.Status != domain.MCPAuthorizing || got.HasOAuthToken {
		t.Fatalf("after foreign callbacks: status %s, has_oauth_token %v; want still waiting for alice", got.Status, got.HasOAuthToken)
	}
	if err := h.svc.Deliver(mcp.Callback{State: state, Code: "alice-code", Bindings: map[string]string{s.ID: res.Binding}}); err != nil {
		t.Fatalf("alice's browser: %v", err)
	}
	h.waitStatus(s.ID, domain.MCPConnected)
	if g := h.openGrant(s.ID); g.AccessToken != "access-alice-code" {
		t.Errorf("stored grant %+v, want alice's", g)
	}
}

func TestCompleteTakesThePastedCallbackAsItsInitiator(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	s, _ := h.signInPending("pasted")
	state := stateOf(t, h.connect(s.ID))
	wantCode(t, "a URL without state", h.svc.Complete(alice, callbackURL+"?code=x"), errs.Validation)
	wantCode(t, "bob pastes it", h.svc.Complete(bob, callbackURL+"?state="+state+"&code=bob"), errs.Forbidden)
	if err := h.svc.Complete(alice, callbackURL+"?state="+state+"&code=mine"); err != nil {
		t.Fatalf("alice pastes it: %v", err)
	}
	h.waitStatus(s.ID, domain.MCPConnected)
}
