package providers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/providers"
	"github.com/agents-server/agents-server/core/secrets"
	"github.com/agents-server/agents-server/ports"
	"github.com/agents-server/agents-server/ports/porttest"
)

// authServer is a scripted ports.ChatGPTAuth: it checks the PKCE round
// trip (the verifier an exchange sends is the one its authorize URL
// carried), answers refreshes and revocations with what the test sets,
// and counts them.
type authServer struct {
	clock     *porttest.Clock // tokens it issues live an hour from its now
	mu        sync.Mutex
	verifiers map[string]string // state → verifier, from AuthorizeURL
	codes     map[string]string // code → the verifier it needs
	refresh   func(ctx context.Context, refreshToken string) (domain.ChatGPTToken, error)
	revoke    func(ctx context.Context, refreshToken string) error
	refreshes []string
	revoked   []string
	exchange  error // fails the next exchange
}

func (a *authServer) AuthorizeURL(state, verifier string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.verifiers == nil {
		a.verifiers = map[string]string{}
	}
	a.verifiers[state] = verifier
	return "https://auth.example/oauth/authorize?state=" + url.QueryEscape(state)
}

// authorize is the person signing in: the code the auth server hands
// back for state.
func (a *authServer) authorize(state string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.codes == nil {
		a.codes = map[string]string{}
	}
	code := fmt.Sprintf("code-%d", len(a.codes)+1)
	a.codes[code] = a.verifiers[state]
	return code
}

func (a *authServer) Exchange(_ context.Context, code, verifier string) (domain.ChatGPTToken, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.exchange; err != nil {
		a.exchange = nil
		return domain.ChatGPTToken{}, err
	}
	if want, ok := a.codes[code]; !ok || want != verifier {
		return domain.ChatGPTToken{}, errs.E(errs.Upstream, "invalid_grant: the code or its verifier does not match")
	}
	return domain.ChatGPTToken{AccessToken: "access-" + code, RefreshToken: "refresh-" + code, IDToken: "id-" + code,
		AccountID: "acct-1", Email: "ann@example.com", Plan: "plus", ExpiresAt: a.clock.Now().Add(time.Hour)}, nil
}

func (a *authServer) Refresh(ctx context.Context, refreshToken string) (domain.ChatGPTToken, error) {
	a.mu.Lock()
	a.refreshes = append(a.refreshes, refreshToken)
	refresh := a.refresh
	a.mu.Unlock()
	if refresh == nil {
		return domain.ChatGPTToken{}, errs.E(errs.Upstream, "no refresh scripted")
	}
	return refresh(ctx, refreshToken)
}

func (a *authServer) Revoke(ctx context.Context, refreshToken string) error {
	a.mu.Lock()
	a.revoked = append(a.revoked, refreshToken)
	revoke := a.revoke
	a.mu.Unlock()
	if revoke == nil {
		return nil
	}
	return revoke(ctx, refreshToken)
}

func (a *authServer) counts() (refreshes, revoked []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string{}, a.refreshes...), append([]string{}, a.revoked...)
}

// gptWorld is a world whose providers sign in with ChatGPT.
type gptWorld struct {
	*world
	auth *authServer
	gpt  *porttest.ChatGPTStore
	log  *porttest.Buffer
	bobs string // a provider of bob's, where a test needs one
}

func newGPTWorld(t *testing.T) *gptWorld {
	t.Helper()
	w := &gptWorld{world: newWorld(t), log: &porttest.Buffer{}}
	w.auth = &authServer{clock: w.clock}
	w.gpt = &porttest.ChatGPTStore{Config: w.store}
	svc, err := providers.New(providers.Deps{Store: w.store, Box: w.box, IDs: &porttest.IDs{}, Clock: w.clock,
		ChatGPT: w.auth, ChatGPTStore: w.gpt, Log: slog.New(slog.NewTextHandler(w.log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	w.svc = svc
	return w
}

// signIn takes p through a whole sign-in of the provider.
func (w *gptWorld) signIn(t *testing.T, p domain.Principal, providerID string) domain.Provider {
	t.Helper()
	ctx := context.Background()
	l, err := w.svc.ChatGPTLogin(ctx, p, providerID)
	if err != nil {
		t.Fatal(err)
	}
	state := stateOf(t, l.AuthorizeURL)
	pr, err := w.svc.ChatGPTComplete(ctx, p, providerID, callback(state, "code="+w.auth.authorize(state)))
	if err != nil {
		t.Fatal(err)
	}
	return pr
}

func stateOf(t *testing.T, authorizeURL string) string {
	t.Helper()
	u, err := url.Parse(authorizeURL)
	if err != nil || u.Query().Get("state") == "" {
		t.Fatalf("the authorize URL %q carries no state", authorizeURL)
	}
	return u.Query().Get("state")
}

func callback(state, rest string) string {
	return ports.ChatGPTRedirectURI + "?state=" + url.QueryEscape(state) + "&" + rest
}

// tokenPlace is where a provider's sign-in is sealed, as the service
// seals it.
func tokenPlace(providerID string) string {
	return secrets.Place("providers", "chatgpt_token", providerID)
}

// sealToken is tok as the service stores it: another replica's write.
func sealToken(t *testing.T, w *gptWorld, providerID string, tok domain.ChatGPTToken) string {
	t.Helper()
	raw, err := json.Marshal(tok)
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := w.box.Seal(tokenPlace(providerID), string(raw))
	if err != nil {
		t.Fatal(err)
	}
	return sealed
}

func endpoint(id string) ports.ProviderEndpoint { return ports.ProviderEndpoint{ProviderID: id} }

// TestAChatGPTSignInRedeemsItsCallbackOnce holds the sign-in's round trip:
// a state and verifier per sign-in, kept for LoginTTL; the callback's
// code exchanged with the verifier its URL carried; the tokens stored
// sealed; the account named only to those who manage the provider.
func TestAChatGPTSignInRedeemsItsCallbackOnce(t *testing.T) {
	w := newGPTWorld(t)
	ctx := context.Background()
	pr := mustCreate(t, w.world, admin, domain.ScopeGlobal, providers.Input{Name: "ChatGPT", AuthMode: domain.AuthChatGPTLogin})

	l1, err := w.svc.ChatGPTLogin(ctx, admin, pr.ID)
	if err != nil || l1.RedirectURI != ports.ChatGPTRedirectURI || !l1.ExpiresAt.Equal(start.Add(providers.LoginTTL)) {
		t.Fatalf("login %+v, %v", l1, err)
	}
	l2, _ := w.svc.ChatGPTLogin(ctx, admin, pr.ID)
	s1, s2 := stateOf(t, l1.AuthorizeURL), stateOf(t, l2.AuthorizeURL)
	if s1 == s2 || len(s1) != 43 || w.auth.verifiers[s1] == w.auth.verifiers[s2] || len(w.auth.verifiers[s1]) != 43 {
		t.Fatalf("two sign-ins share a state or verifier, or one is not 43 characters: %q %q", s1, s2)
	}
	code := w.auth.authorize(s1)
	got, err := w.svc.ChatGPTComplete(ctx, admin, pr.ID, callback(s1, "code="+code))
	if err != nil || !got.ChatGPTLoggedIn() {
		t.Fatalf("complete: %+v, %v", got, err)
	}
	stored, _ := w.store.FindProvider(ctx, pr.ID)
	if !strings.HasPrefix(stored.SealedChatGPTToken, "enc:v2:") || strings.Contains(stored.SealedChatGPTToken, "access-") {
		t.Fatalf("the sign-in is stored as %q, want it sealed", stored.SealedChatGPTToken)
	}
	if _, err := w.svc.ChatGPTComplete(ctx, admin, pr.ID, callback(s1, "code="+code)); !strings.Contains(errs.FieldsOf(err)["callback_url"], "already used") {
		t.Fatalf("the same callback twice: %v", err)
	}

	st, err := w.svc.ChatGPTStatus(ctx, admin, pr.ID)
	want := providers.ChatGPTStatus{LoggedIn: true, Email: "ann@example.com", Plan: "plus", AccountID: "acct-1", ExpiresAt: start.Add(time.Hour)}
	if err != nil || st != want {
		t.Fatalf("the manager's status %+v, %v; want %+v", st, err, want)
	}
	st, err = w.svc.ChatGPTStatus(ctx, ann, pr.ID)
	if err != nil || !st.LoggedIn || st.Plan != "plus" || st.Email != "" || st.AccountID != "" {
		t.Fatalf("a user of the shared provider sees %+v, %v; want signed in, no account", st, err)
	}
	if acc, err := w.svc.ChatGPTAccess(ctx, endpoint(pr.ID)); err != nil || acc != (ports.ChatGPTAccess{AccessToken: "access-" + code, AccountID: "acct-1"}) {
		t.Fatalf("access %+v, %v", acc, err)
	}
	if refreshes, _ := w.auth.counts(); len(refreshes) != 0 {
		t.Fatalf("a fresh token was refreshed: %v", refreshes)
	}
	if _, err := w.svc.ChatGPTComplete(ctx, ann, pr.ID, callback(s2, "code=x")); errs.CodeOf(err) != errs.Forbidden {
		t.Fatalf("a member completes a sign-in of a shared provider: %v", err)
	}
}

// TestAChatGPTCallbackIsRefusedWithItsReason holds that each way a pasted
// callback can be wrong is a validation error on callback_url saying
// what to do, and that a failed exchange is the auth server's upstream.
func TestAChatGPTCallbackIsRefusedWithItsReason(t *testing.T) {
	for _, tc := range []struct {
		name     string
		callback func(w *gptWorld, state string) string
		code     errs.Code
		says     string
	}{
		{"not a URL", func(*gptWorld, string) string { return "::" }, errs.Validation, "carries no state"},
		{"no state", func(*gptWorld, string) string { return ports.ChatGPTRedirectURI + "?code=x" }, errs.Validation, "carries no state"},
		{"a NUL in the state", func(*gptWorld, string) string { return callback("a\x00b", "code=x") }, errs.Validation, "carries a state that"},
		{"an unknown state", func(*gptWorld, string) string { return callback("forged", "code=x") }, errs.Validation, "belongs to no waiting sign-in"},
		{"another person's sign-in", func(w *gptWorld, _ string) string {
			l, _ := w.svc.ChatGPTLogin(context.Background(), bob, w.bobs)
			u, _ := url.Parse(l.AuthorizeURL)
			return callback(u.Query().Get("state"), "code=x")
		}, errs.Validation, "another provider or person"},
		{"an expired sign-in", func(w *gptWorld, state string) string {
			w.clock.Advance(providers.LoginTTL)
			return callback(state, "code=x")
		}, errs.Validation, "it expired (a sign-in waits 10 minutes for its address)"},
		{"a refused authorization", func(_ *gptWorld, state string) string {
			return callback(state, "error=access_denied&error_description=the+user+said+no")
		}, errs.Validation, "refused (access_denied: the user said no)"},
		{"no code", func(_ *gptWorld, state string) string { return callback(state, "scope=openid") }, errs.Validation, "no authorization code"},
		{"a code the auth server refuses", func(_ *gptWorld, state string) string { return callback(state, "code=stolen") }, errs.Upstream, "invalid_grant"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newGPTWorld(t)
			ctx := context.Background()
			pr := mustCreate(t, w.world, ann, "", providers.Input{Name: "ChatGPT", AuthMode: domain.AuthChatGPTLogin})
			w.bobs = mustCreate(t, w.world, bob, "", providers.Input{Name: "Bob's", AuthMode: domain.AuthChatGPTLogin}).ID
			l, _ := w.svc.ChatGPTLogin(ctx, ann, pr.ID)
			_, err := w.svc.ChatGPTComplete(ctx, ann, pr.ID, tc.callback(w, stateOf(t, l.AuthorizeURL)))
			if errs.CodeOf(err) != tc.code || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("%v, want %s saying %q", err, tc.code, tc.says)
			}
			if tc.code == errs.Validation && errs.FieldsOf(err)["callback_url"] == "" {
				t.Fatalf("%v names no callback_url", err)
			}
			if got, _ := w.store.FindProvider(ctx, pr.ID); got.ChatGPTLoggedIn() {
				t.Fatal("a refused callback signed the provider in")
			}
		})
	}
}

// TestOnlyAChatGPTProviderSignsIn holds the refusals of a sign-in that
// cannot be: a provider taking a key, a server without ChatGPT sign-in.
func TestOnlyAChatGPTProviderSignsIn(t *testing.T) {
	ctx := context.Background()
	w := newGPTWorld(t)
	keyed := mustCreate(t, w.world, ann, "", providers.Input{Name: "Keyed", APIKey: "sk-1"})
	if _, err := w.svc.ChatGPTLogin(ctx, ann, keyed.ID); errs.CodeOf(err) != errs.Validation || !strings.Contains(err.Error(), "takes an API key") {
		t.Fatalf("sign in a keyed provider: %v", err)
	}
	if _, err := w.svc.ChatGPTLogin(ctx, ann, "missing"); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("sign in a missing provider: %v", err)
	}
	if st, err := w.svc.ChatGPTStatus(ctx, ann, keyed.ID); err != nil || st.LoggedIn {
		t.Fatalf("the status of a keyed provider: %+v, %v", st, err)
	}

	plain := newWorld(t) // no ChatGPT sign-in
	pr := mustCreate(t, plain, ann, "", providers.Input{Name: "ChatGPT", AuthMode: domain.AuthChatGPTLogin})
	if _, err := plain.svc.ChatGPTLogin(ctx, ann, pr.ID); errs.CodeOf(err) != errs.Unavailable {
		t.Fatalf("sign in on a server without ChatGPT sign-in: %v", err)
	}
	if _, err := plain.svc.ChatGPTLogout(ctx, ann, pr.ID); errs.CodeOf(err) != errs.Unavailable {
		t.Fatalf("sign out on a server without ChatGPT sign-in: %v", err)
	}
	if _, err := plain.svc.ChatGPTAccess(ctx, endpoint(pr.ID)); errs.CodeOf(err) != errs.Validation || !strings.Contains(err.Error(), "is not signed in") {
		t.Fatalf("access to a provider never signed in: %v", err)
	}
}

// TestASignInTheProviderForgetsIsRevoked holds that a sign-out, a sign-in
// over another, a switch to a key and a delete each revoke the refresh
// token the provider no longer holds — best effort: a revocation that
// fails is logged, and the sign-out stands.
func TestASignInTheProviderForgetsIsRevoked(t *testing.T) {
	w := newGPTWorld(t)
	ctx := context.Background()
	pr := mustCreate(t, w.world, ann, "", providers.Input{Name: "ChatGPT", AuthMode: domain.AuthChatGPTLogin})

	w.signIn(t, ann, pr.ID)
	w.signIn(t, ann, pr.ID) // over the first
	if _, revoked := w.auth.counts(); len(revoked) != 1 || revoked[0] != "refresh-code-1" {
		t.Fatalf("a second sign-in revoked %v, want the first's refresh token", revoked)
	}

	w.auth.revoke = func(context.Context, string) error { return errs.E(errs.Upstream, "auth server down") }
	got, err := w.svc.ChatGPTLogout(ctx, ann, pr.ID)
	if err != nil || got.ChatGPTLoggedIn() {
		t.Fatalf("a sign-out whose revocation fails: %+v, %v", got, err)
	}
	if st, _ := w.svc.ChatGPTStatus(ctx, ann, pr.ID); st.LoggedIn {
		t.Fatal("still signed in after the sign-out")
	}
	if _, revoked := w.auth.counts(); len(revoked) != 2 || revoked[1] != "refresh-code-2" {
		t.Fatalf("the sign-out revoked %v", revoked)
	}
	if !strings.Contains(w.log.String(), "could not be revoked") || !strings.Contains(w.log.String(), pr.ID) {
		t.Fatalf("the failed revocation was not logged: %q", w.log.String())
	}
	w.auth.revoke = nil
	if _, err := w.svc.ChatGPTLogout(ctx, ann, pr.ID); err != nil {
		t.Fatalf("a second sign-out: %v", err)
	}
	if _, revoked := w.auth.counts(); len(revoked) != 2 {
		t.Fatalf("signing out a signed-out provider revoked %v", revoked)
	}

	w.signIn(t, ann, pr.ID)
	if _, err := w.svc.Update(ctx, ann, pr.ID, providers.Input{Name: "Keyed now", APIKey: "sk-1"}); err != nil {
		t.Fatal(err)
	}
	if _, revoked := w.auth.counts(); len(revoked) != 3 || revoked[2] != "refresh-code-3" {
		t.Fatalf("a switch to a key revoked %v", revoked)
	}

	other := mustCreate(t, w.world, ann, "", providers.Input{Name: "Other", AuthMode: domain.AuthChatGPTLogin})
	w.signIn(t, ann, other.ID)
	if err := w.svc.Delete(ctx, ann, other.ID); err != nil {
		t.Fatal(err)
	}
	if _, revoked := w.auth.counts(); len(revoked) != 4 || revoked[3] != "refresh-code-4" {
		t.Fatalf("a delete revoked %v", revoked)
	}
}

// TestARevocationOutlivesItsCallerWithinItsBound holds that the revocation
// of a forgotten sign-in runs on when the caller has gone, and that an
// auth server that never answers holds a sign-out for 5 seconds at most.
func TestARevocationOutlivesItsCallerWithinItsBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newGPTWorld(t)
		pr := mustCreate(t, w.world, ann, "", providers.Input{Name: "ChatGPT", AuthMode: domain.AuthChatGPTLogin})
		w.signIn(t, ann, pr.ID)
		ctx, cancel := context.WithCancel(context.Background())
		var waited time.Duration
		w.auth.revoke = func(rctx context.Context, _ string) error {
			cancel() // the person leaves mid-logout
			began := time.Now()
			<-rctx.Done() // an auth server that never answers
			waited = time.Since(began)
			return rctx.Err()
		}
		if _, err := w.svc.ChatGPTLogout(ctx, ann, pr.ID); err != nil {
			t.Fatalf("sign-out: %v", err)
		}
		if waited != 5*time.Second {
			t.Fatalf("the revocation waited %v, want the 5s bound (not the caller's gone context)", waited)
		}
		if !strings.Contains(w.log.String(), "deadline exceeded") {
			t.Fatalf("the timed-out revocation was not logged: %q", w.log.String())
		}
	})
}

// TestAnAccessTokenIsRefreshedBeforeItExpires holds that ChatGPTAccess
// hands out a token with more than 5 minutes left as it is, and refreshes
// one closer to expiry first, keeping what the refresh leaves out.
func TestAnAccessTokenIsRefreshedBeforeItExpires(t *testing.T) {
	w := newGPTWorld(t)
	ctx := context.Background()
	pr := mustCreate(t, w.world, ann, "", providers.Input{Name: "ChatGPT", AuthMode: domain.AuthChatGPTLogin})
	w.signIn(t, ann, pr.ID) // expires at start+1h
	w.auth.refresh = func(_ context.Context, rt string) (domain.ChatGPTToken, error) {
		return domain.ChatGPTToken{AccessToken: "access-2", ExpiresAt: w.clock.Now().Add(time.Hour)}, nil
	}
	w.clock.Advance(55*time.Minute - time.Millisecond)
	if acc, _ := w.svc.ChatGPTAccess(ctx, endpoint(pr.ID)); acc.AccessToken != "access-code-1" {
		t.Fatalf("a token with just over 5 minutes left was replaced by %q", acc.AccessToken)
	}
	w.clock.Advance(time.Millisecond)
	acc, err := w.svc.ChatGPTAccess(ctx, endpoint(pr.ID))
	if err != nil || acc != (ports.ChatGPTAccess{AccessToken: "access-2", AccountID: "acct-1"}) {
		t.Fatalf("access within 5 minutes of expiry: %+v, %v", acc, err)
	}
	if refreshes, _ := w.auth.counts(); len(refreshes) != 1 || refreshes[0] != "refresh-code-1" {
		t.Fatalf("refreshed with %v", refreshes)
	}
	// The refresh kept the refresh token, the account and the plan.
	st, _ := w.svc.ChatGPTStatus(ctx, ann, pr.ID)
	if st.AccountID != "acct-1" || st.Email != "ann@example.com" || st.Plan != "plus" || !st.ExpiresAt.Equal(w.clock.Now().Add(time.Hour)) {
		t.Fatalf("after the refresh: %+v", st)
	}
	w.clock.Advance(time.Hour)
	if _, err := w.svc.ChatGPTAccess(ctx, endpoint(pr.ID)); err != nil {
		t.Fatal(err)
	}
	if refreshes, _ := w.auth.counts(); len(refreshes) != 2 || refreshes[1] != "refresh-code-1" {
		t.Fatalf("the second refresh used %v, want the kept refresh token", refreshes)
	}

	// A refresh that fails passes the auth server's error on and leaves
	// the sign-in as it was.
	w.clock.Advance(time.Hour)
	w.auth.refresh = func(context.Context, string) (domain.ChatGPTToken, error) {
		return domain.ChatGPTToken{}, errs.E(errs.Upstream, "auth server: 503")
	}
	if _, err := w.svc.ChatGPTAccess(ctx, endpoint(pr.ID)); errs.CodeOf(err) != errs.Upstream {
		t.Fatalf("a failing refresh: %v", err)
	}
	if st, _ := w.svc.ChatGPTStatus(ctx, ann, pr.ID); !st.LoggedIn {
		t.Fatal("a failing refresh signed the provider out")
	}
}

// readCounter is a ConfigStore that signals every provider read outside a
// transaction, so a test knows when racing callers have looked.
type readCounter struct {
	*porttest.ConfigStore
	reads chan struct{}
}

func (c readCounter) FindProvider(ctx context.Context, id string) (domain.Provider, error) {
	c.reads <- struct{}{}
	return c.ConfigStore.FindProvider(ctx, id)
}

// TestRacingCallersShareOneRefresh holds that callers who all found the
// token due a refresh wait for one refresh and all get its token.
func TestRacingCallersShareOneRefresh(t *testing.T) {
	w := newGPTWorld(t)
	pr := mustCreate(t, w.world, ann, "", providers.Input{Name: "ChatGPT", AuthMode: domain.AuthChatGPTLogin})
	w.signIn(t, ann, pr.ID)
	w.clock.Advance(time.Hour)
	counted := readCounter{ConfigStore: w.store, reads: make(chan struct{}, 100)}
	svc, err := providers.New(providers.Deps{Store: counted, Box: w.box, IDs: &porttest.IDs{}, Clock: w.clock, ChatGPT: w.auth, ChatGPTStore: w.gpt})
	if err != nil {
		t.Fatal(err)
	}
	const racers = 5
	var held sync.Once
	w.auth.refresh = func(context.Context, string) (domain.ChatGPTToken, error) {
		// The first refresher read twice (before and under the lock); hold
		// its refresh until every other racer has read the stale token too.
		held.Do(func() {
			for range racers + 1 {
				select {
				case <-counted.reads:
				case <-time.After(10 * time.Second):
					t.Error("the racers never read the token")
					return
				}
			}
		})
		return domain.ChatGPTToken{AccessToken: "access-2", RefreshToken: "refresh-2", ExpiresAt: w.clock.Now().Add(time.Hour)}, nil
	}
	got := make([]string, racers)
	var wg sync.WaitGroup
	for i := range got {
		wg.Go(func() {
			acc, err := svc.ChatGPTAccess(context.Background(), endpoint(pr.ID))
			if err != nil {
				t.Error(err)
			}
			got[i] = acc.AccessToken
		})
	}
	wg.Wait()
	if refreshes, _ := w.auth.counts(); len(refreshes) != 1 {
		t.Fatalf("%d refreshes for %d racing callers, want 1", len(refreshes), racers)
	}
	for _, tok := range got {
		if tok != "access-2" {
			t.Fatalf("the racers got %v, want the one refreshed token", got)
		}
	}
}

// TestARejectedAccessTokenIsReplacedOnce holds ChatGPTRefresh: the token
// the backend rejected is refreshed even before its expiry, but a caller
// still holding the rejected one after another replaced it gets the
// replacement without a second refresh.
func TestARejectedAccessTokenIsReplacedOnce(t *testing.T) {
	w := newGPTWorld(t)
	ctx := context.Background()
	pr := mustCreate(t, w.world, ann, "", providers.Input{Name: "ChatGPT", AuthMode: domain.AuthChatGPTLogin})
	w.signIn(t, ann, pr.ID)
	w.auth.refresh = func(context.Context, string) (domain.ChatGPTToken, error) {
		return domain.ChatGPTToken{AccessToken: "access-2", RefreshToken: "refresh-2", AccountID: "acct-2", ExpiresAt: start.Add(2 * time.Hour)}, nil
	}
	for range 2 {
		acc, err := w.svc.ChatGPTRefresh(ctx, endpoint(pr.ID), "access-code-1")
		if err != nil || acc != (ports.ChatGPTAccess{AccessToken: "access-2", AccountID: "acct-2"}) {
			t.Fatalf("refresh of the rejected token: %+v, %v", acc, err)
		}
	}
	if refreshes, _ := w.auth.counts(); len(refreshes) != 1 {
		t.Fatalf("%d refreshes, want 1", len(refreshes))
	}
	// A refresh naming a new account is the account now.
	if st, _ := w.svc.ChatGPTStatus(ctx, ann, pr.ID); st.AccountID != "acct-2" || st.Email != "" {
		t.Fatalf("status %+v, want the refreshed account alone", st)
	}
}

// TestARevokedSignInSignsTheProviderOut holds that a refresh the auth
// server refuses for good clears the sign-in and says so to every caller
// until someone signs in again — unless another replica refreshed
// meanwhile, whose token is used.
func TestARevokedSignInSignsTheProviderOut(t *testing.T) {
	w := newGPTWorld(t)
	ctx := context.Background()
	pr := mustCreate(t, w.world, ann, "", providers.Input{Name: "ChatGPT", AuthMode: domain.AuthChatGPTLogin})
	w.signIn(t, ann, pr.ID)
	w.clock.Advance(time.Hour)
	w.auth.refresh = func(context.Context, string) (domain.ChatGPTToken, error) {
		return domain.ChatGPTToken{}, fmt.Errorf("refresh: %w", ports.ErrChatGPTRevoked)
	}
	for i := range 2 {
		_, err := w.svc.ChatGPTAccess(ctx, endpoint(pr.ID))
		if errs.CodeOf(err) != errs.Validation || !strings.Contains(err.Error(), "was revoked or has expired") {
			t.Fatalf("access %d after the revocation: %v", i, err)
		}
	}
	if st, _ := w.svc.ChatGPTStatus(ctx, ann, pr.ID); st.LoggedIn {
		t.Fatal("a revoked sign-in still shows signed in")
	}
	if refreshes, _ := w.auth.counts(); len(refreshes) != 1 {
		t.Fatalf("a revoked sign-in was refreshed %d times", len(refreshes))
	}
	// Signing in again ends the explanation.
	w.signIn(t, ann, pr.ID)
	if acc, err := w.svc.ChatGPTAccess(ctx, endpoint(pr.ID)); err != nil || acc.AccessToken != "access-code-2" {
		t.Fatalf("access after signing in again: %+v, %v", acc, err)
	}
	if _, err := w.svc.ChatGPTLogout(ctx, ann, pr.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := w.svc.ChatGPTAccess(ctx, endpoint(pr.ID)); !strings.Contains(err.Error(), "is not signed in") {
		t.Fatalf("after a sign-out by hand: %v, want not signed in (not revoked)", err)
	}

	// Another replica refreshed while ours was refused: its rotation made
	// ours stale, and its token stands.
	w.signIn(t, ann, pr.ID)
	w.clock.Advance(time.Hour)
	w.auth.refresh = func(ctx context.Context, _ string) (domain.ChatGPTToken, error) {
		cur, _ := w.store.FindProvider(ctx, pr.ID)
		sealed := sealToken(t, w, pr.ID, domain.ChatGPTToken{AccessToken: "access-other", RefreshToken: "refresh-other", ExpiresAt: w.clock.Now().Add(time.Hour)})
		if ok, err := w.gpt.SwapChatGPTToken(ctx, pr.ID, cur.SealedChatGPTToken, sealed); !ok || err != nil {
			t.Fatalf("the other replica's swap: %v, %v", ok, err)
		}
		return domain.ChatGPTToken{}, ports.ErrChatGPTRevoked
	}
	if acc, err := w.svc.ChatGPTAccess(ctx, endpoint(pr.ID)); err != nil || acc.AccessToken != "access-other" {
		t.Fatalf("access when another replica refreshed: %+v, %v", acc, err)
	}
	if st, _ := w.svc.ChatGPTStatus(ctx, ann, pr.ID); !st.LoggedIn {
		t.Fatal("the other replica's sign-in was cleared")
	}
}

// TestASignOutDuringARefreshStands holds that a refresh whose write-back
// finds the sign-in changed underneath does not sign the provider back
// in: what is stored now wins.
func TestASignOutDuringARefreshStands(t *testing.T) {
	w := newGPTWorld(t)
	ctx := context.Background()
	pr := mustCreate(t, w.world, ann, "", providers.Input{Name: "ChatGPT", AuthMode: domain.AuthChatGPTLogin})
	w.signIn(t, ann, pr.ID)
	w.clock.Advance(time.Hour)
	w.auth.refresh = func(ctx context.Context, _ string) (domain.ChatGPTToken, error) {
		if _, err := w.svc.ChatGPTLogout(ctx, ann, pr.ID); err != nil {
			t.Errorf("sign-out mid-refresh: %v", err)
		}
		return domain.ChatGPTToken{AccessToken: "access-2", RefreshToken: "refresh-2", ExpiresAt: w.clock.Now().Add(time.Hour)}, nil
	}
	if _, err := w.svc.ChatGPTAccess(ctx, endpoint(pr.ID)); !strings.Contains(err.Error(), "is not signed in") {
		t.Fatalf("access when signed out mid-refresh: %v", err)
	}
	if st, _ := w.svc.ChatGPTStatus(ctx, ann, pr.ID); st.LoggedIn {
		t.Fatal("the refresh signed the provider back in")
	}
}

// TestAProviderWithoutChatGPTSignInCannotRefresh holds that a token due a
// refresh on a server without ChatGPT sign-in is unavailable, not sent.
func TestAProviderWithoutChatGPTSignInCannotRefresh(t *testing.T) {
	w := newGPTWorld(t)
	ctx := context.Background()
	pr := mustCreate(t, w.world, ann, "", providers.Input{Name: "ChatGPT", AuthMode: domain.AuthChatGPTLogin})
	w.signIn(t, ann, pr.ID)
	w.clock.Advance(time.Hour)
	plain, err := providers.New(providers.Deps{Store: w.store, Box: w.box, IDs: &porttest.IDs{}, Clock: w.clock}) // the same store, no ChatGPT
	if err != nil {
		t.Fatal(err)
	}
	if _, err := plain.ChatGPTAccess(ctx, endpoint(pr.ID)); errs.CodeOf(err) != errs.Unavailable {
		t.Fatalf("a refresh without ChatGPT sign-in: %v", err)
	}
	w.clock.Set(start)
	if acc, err := plain.ChatGPTAccess(ctx, endpoint(pr.ID)); err != nil || acc.AccessToken != "access-code-1" {
		t.Fatalf("a fresh token without ChatGPT sign-in: %+v, %v", acc, err)
	}
}

// TestADamagedSignInSaysSo holds that a stored sign-in that does not
// decode is an internal error naming the provider, not a crash or a
// token handed out.
func TestADamagedSignInSaysSo(t *testing.T) {
	w := newGPTWorld(t)
	ctx := context.Background()
	pr := mustCreate(t, w.world, ann, "", providers.Input{Name: "ChatGPT", AuthMode: domain.AuthChatGPTLogin})
	sealed, err := w.box.Seal(tokenPlace(pr.ID), "{not json")
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := w.gpt.SwapChatGPTToken(ctx, pr.ID, "", sealed); !ok || err != nil {
		t.Fatal(ok, err)
	}
	_, err = w.svc.ChatGPTStatus(ctx, ann, pr.ID)
	if errs.CodeOf(err) != errs.Internal || !strings.Contains(err.Error(), `provider "ChatGPT" is damaged`) {
		t.Fatalf("a damaged sign-in: %v", err)
	}
	if _, err := w.svc.ChatGPTAccess(ctx, endpoint(pr.ID)); errs.CodeOf(err) != errs.Internal {
		t.Fatalf("access through a damaged sign-in: %v", err)
	}
}
