package providers

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"log/slog"
	"net/url"
	"sync"
	"time"

	"github.com/agents-server/agents-server/core/audit"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/secrets"
	"github.com/agents-server/agents-server/ports"
)

// LoginTTL is how long a ChatGPT sign-in waits for its pasted callback URL.
const LoginTTL = 10 * time.Minute

// refreshMargin is how long before expiry an access token is refreshed, so
// a call never leaves with a token that dies on the way.
const refreshMargin = 5 * time.Minute

// refreshTimeout bounds one refresh and its write-back. Both run detached
// from the caller's context: the refresh token rotates, so a refresh
// abandoned between the auth server's answer and the write-back would
// lose the sign-in.
const refreshTimeout = 30 * time.Second

// revokeTimeout bounds the revocation of a forgotten sign-in: the caller
// waits for it, and it changes nothing here whatever its outcome.
const revokeTimeout = 5 * time.Second

// chatgpt is the ChatGPT sign-in's state on the Service.
type chatgpt struct {
	auth  ports.ChatGPTAuth
	store ports.ChatGPTStore
	log   *slog.Logger // a revocation that failed
	mu    sync.Mutex
	locks map[string]*sync.Mutex // one refresh at a time per provider
	// revoked names the providers whose sign-in a refused refresh cleared,
	// so the calls that waited on that refresh say why too.
	revoked map[string]bool
}

func tokenPlace(providerID string) string {
	return secrets.Place("providers", "chatgpt_token", providerID)
}

func verifierPlace(state string) string { return secrets.Place("chatgpt_logins", "verifier", state) }

// ChatGPTLogin is a started sign-in: the URL the person opens.
type ChatGPTLogin struct {
	AuthorizeURL string
	RedirectURI  string
	ExpiresAt    time.Time
}

// ChatGPTStatus is a provider's sign-in as the person may see it: never a
// token.
type ChatGPTStatus struct {
	LoggedIn  bool
	Email     string
	Plan      string
	AccountID string
	ExpiresAt time.Time // the access token's; it is refreshed before then
}

// signInTarget is a provider the caller may sign in or out: their own (or
// an admin's reach), speaking chatgpt_login. Returns not_found, forbidden,
// validation, or unavailable when the server has no ChatGPT sign-in.
func (s *Service) signInTarget(ctx context.Context, p domain.Principal, id string) (domain.Provider, error) {
	pr, err := s.Get(ctx, p, id)
	if err != nil {
		return pr, err
	}
	if err := pr.CheckUpdate(p, what); err != nil {
		return pr, err
	}
	if pr.AuthMode != domain.AuthChatGPTLogin {
		return pr, errs.E(errs.Validation, "provider %q takes an API key; only chatgpt_login providers sign in with ChatGPT", pr.Name)
	}
	if s.gpt == nil {
		return pr, errs.E(errs.Unavailable, "this server has no ChatGPT sign-in configured")
	}
	return pr, nil
}

// ChatGPTLogin starts a sign-in: a fresh state and PKCE verifier, kept for
// LoginTTL, and the authorize URL that carries them. Returns not_found,
// forbidden, validation, unavailable.
func (s *Service) ChatGPTLogin(ctx context.Context, p domain.Principal, id string) (ChatGPTLogin, error) {
	pr, err := s.signInTarget(ctx, p, id)
	if err != nil {
		return ChatGPTLogin{}, err
	}
	state, verifier := randomToken(), randomToken()
	sealed, err := s.box.Seal(verifierPlace(state), verifier)
	if err != nil {
		return ChatGPTLogin{}, err
	}
	now := s.clock.Now()
	l := domain.ChatGPTLogin{State: state, ProviderID: pr.ID, UserID: p.User.ID, SealedVerifier: sealed, ExpiresAt: now.Add(LoginTTL)}
	if err := s.gpt.store.InsertChatGPTLogin(ctx, l, now); err != nil {
		return ChatGPTLogin{}, err
	}
	return ChatGPTLogin{AuthorizeURL: s.gpt.auth.AuthorizeURL(state, verifier), RedirectURI: ports.ChatGPTRedirectURI, ExpiresAt: l.ExpiresAt}, nil
}

// ChatGPTComplete redeems the URL the browser landed on after the person
// authorized: its state names the waiting sign-in (used once), its code is
// exchanged server-side, and the tokens are stored sealed on the provider.
// A sign-in it replaces is revoked (see revokeForgotten). Returns
// not_found, forbidden, validation (a URL that is not a callback, an
// expired or foreign sign-in, a refused authorization), upstream when the
// exchange fails.
func (s *Service) ChatGPTComplete(ctx context.Context, p domain.Principal, id, callbackURL string) (domain.Provider, error) {
	pr, err := s.signInTarget(ctx, p, id)
	if err != nil {
		return pr, err
	}
	u, err := url.Parse(callbackURL)
	q := url.Values{}
	if err == nil {
		q = u.Query()
	}
	if q.Get("state") == "" {
		return pr, errs.Field("callback_url", "carries no state: paste the whole address the browser landed on after signing in (it starts with %s)", ports.ChatGPTRedirectURI)
	}
	if domain.HasNUL(q.Get("state")) {
		return pr, errs.Field("callback_url", "carries a state that %s", domain.NULMessage)
	}
	// The store takes the sign-in only for the person who started it on
	// this provider: another's paste must not use up (or cancel) theirs.
	l, err := s.gpt.store.TakeChatGPTLogin(ctx, q.Get("state"), pr.ID, p.User.ID, s.clock.Now())
	switch {
	case errs.Is(err, errs.NotFound):
		return pr, errs.Field("callback_url", "belongs to no waiting sign-in: it expired (a sign-in waits %d minutes for its address) "+
			"or was already used; sign in again", int(LoginTTL.Minutes()))
	case errs.Is(err, errs.Forbidden):
		return pr, errs.Field("callback_url", "belongs to a sign-in started for another provider or person; sign in again")
	case err != nil:
		return pr, err
	}
	if e := q.Get("error"); e != "" {
		if d := q.Get("error_description"); d != "" {
			e += ": " + d
		}
		return pr, errs.Field("callback_url", "says the sign-in was refused (%s); sign in again", e)
	}
	if q.Get("code") == "" {
		return pr, errs.Field("callback_url", "carries no authorization code; sign in again")
	}
	verifier, err := s.box.Open(verifierPlace(l.State), l.SealedVerifier)
	if err != nil {
		return pr, err
	}
	tok, err := s.gpt.auth.Exchange(ctx, q.Get("code"), verifier)
	if err != nil {
		return pr, err
	}
	tok.RefreshedAt = s.clock.Now()
	actx := audit.Change(ctx, tok.RefreshedAt, "provider.chatgpt_signin", audit.Object{Kind: "provider", ID: pr.ID, Name: pr.Name}, "chatgpt_token")
	pr, replaced, err := s.writeToken(actx, pr.ID, &tok)
	if err == nil {
		s.revokeForgotten(ctx, pr, replaced)
	}
	return pr, err
}

// ChatGPTLogout drops a provider's sign-in, then revokes its refresh token
// at the auth server, as the Codex CLI's logout does (see
// revokeForgotten). Returns not_found, forbidden, validation, unavailable.
func (s *Service) ChatGPTLogout(ctx context.Context, p domain.Principal, id string) (domain.Provider, error) {
	target, err := s.signInTarget(ctx, p, id)
	if err != nil {
		return domain.Provider{}, err
	}
	actx := audit.Change(ctx, s.clock.Now(), "provider.chatgpt_signout", audit.Object{Kind: "provider", ID: id, Name: target.Name}, "chatgpt_token")
	pr, dropped, err := s.writeToken(actx, id, nil)
	if err == nil {
		s.revokeForgotten(ctx, pr, dropped)
	}
	return pr, err
}

// revokeForgotten revokes the refresh token of a sign-in the provider no
// longer holds (sealed as it was stored; "" for none), so it stops working
// at the auth server too. It is best effort, as the Codex CLI's logout:
// the sign-in is already gone here, so a failure is logged, never
// returned. It runs detached from the caller's context (a person who
// leaves mid-logout still gets it), within revokeTimeout.
func (s *Service) revokeForgotten(ctx context.Context, pr domain.Provider, sealed string) {
	if sealed == "" || s.gpt == nil {
		return
	}
	pr.SealedChatGPTToken = sealed
	tok, err := s.openToken(pr)
	if err == nil && tok.RefreshToken != "" {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), revokeTimeout)
		defer cancel()
		err = s.gpt.auth.Revoke(rctx, tok.RefreshToken)
	}
	if err != nil {
		s.gpt.log.Warn("the ChatGPT sign-in a provider forgot could not be revoked at the auth server",
			"provider_id", pr.ID, "err", err)
	}
}

// ChatGPTStatus reads a provider's sign-in; the account is named only to
// those who may sign it in or out. Returns not_found.
func (s *Service) ChatGPTStatus(ctx context.Context, p domain.Principal, id string) (ChatGPTStatus, error) {
	pr, err := s.Get(ctx, p, id)
	if err != nil || !pr.ChatGPTLoggedIn() {
		return ChatGPTStatus{}, err
	}
	tok, err := s.openToken(pr)
	if err != nil {
		return ChatGPTStatus{}, err
	}
	st := ChatGPTStatus{LoggedIn: true, Plan: tok.Plan, ExpiresAt: tok.ExpiresAt}
	// Whose account it is, is for those who manage the provider: the
	// others using a shared one see only that it is signed in.
	if pr.CheckUpdate(p, what) == nil {
		st.Email, st.AccountID = tok.Email, tok.AccountID
	}
	return st, nil
}

// writeToken stores tok (nil: none) as the provider's sign-in, whatever it
// held, and returns the provider as written and the sealed sign-in it
// replaced ("" for none).
func (s *Service) writeToken(ctx context.Context, id string, tok *domain.ChatGPTToken) (domain.Provider, string, error) {
	next := ""
	if tok != nil {
		raw, err := json.Marshal(tok)
		if err != nil {
			return domain.Provider{}, "", err
		}
		if next, err = s.box.Seal(tokenPlace(id), string(raw)); err != nil {
			return domain.Provider{}, "", err
		}
	}
	for range 5 {
		pr, err := s.store.FindProvider(ctx, id)
		if err != nil {
			return pr, "", err
		}
		if pr.AuthMode != domain.AuthChatGPTLogin {
			return pr, "", errs.E(errs.Conflict, "provider %q no longer signs in with ChatGPT", pr.Name)
		}
		ok, err := s.gpt.store.SwapChatGPTToken(ctx, id, pr.SealedChatGPTToken, next)
		if err != nil {
			return pr, "", err
		}
		if ok {
			s.gpt.setRevoked(id, false) // signed in or out by hand: no longer a revocation to explain
			replaced := pr.SealedChatGPTToken
			pr.SealedChatGPTToken = next
			return pr, replaced, nil
		}
	}
	return domain.Provider{}, "", errs.E(errs.Conflict, "the provider's sign-in kept changing underneath; try again")
}

func (s *Service) openToken(pr domain.Provider) (domain.ChatGPTToken, error) {
	var tok domain.ChatGPTToken
	plain, err := s.box.Open(tokenPlace(pr.ID), pr.SealedChatGPTToken)
	if err != nil {
		return tok, err
	}
	if err := json.Unmarshal([]byte(plain), &tok); err != nil {
		return tok, errs.Wrap(errs.Internal, err, "the stored ChatGPT sign-in of provider %q is damaged; sign in again", pr.Name)
	}
	return tok, nil
}

// fresh reports whether tok may be used now without a refresh.
func (s *Service) fresh(tok domain.ChatGPTToken) bool {
	return tok.ExpiresAt.IsZero() || s.clock.Now().Add(refreshMargin).Before(tok.ExpiresAt)
}

// ChatGPTAccess implements ports.ChatGPTCredentials: the provider's access
// token, refreshed first when it is within refreshMargin of expiry. One
// refresh runs per provider at a time in this process, and the write-back
// is a compare-and-swap, so callers racing on one or several replicas
// share one refresh. A refresh the auth server refuses for good clears the
// sign-in, so the provider shows signed out. Returns validation naming the
// missing or revoked sign-in, upstream when the auth server fails.
func (s *Service) ChatGPTAccess(ctx context.Context, ep ports.ProviderEndpoint) (ports.ChatGPTAccess, error) {
	return s.chatgptAccess(ctx, ep.ProviderID, s.fresh)
}

// ChatGPTRefresh implements ports.ChatGPTCredentials: the backend refused
// rejected, so a token other than it — refreshed now unless another call
// already did. Returns what ChatGPTAccess returns.
func (s *Service) ChatGPTRefresh(ctx context.Context, ep ports.ProviderEndpoint, rejected string) (ports.ChatGPTAccess, error) {
	return s.chatgptAccess(ctx, ep.ProviderID, func(tok domain.ChatGPTToken) bool {
		return tok.AccessToken != rejected && s.fresh(tok)
	})
}

// chatgptAccess returns the provider's access token when usable says it
// may be used, else refreshes it first.
func (s *Service) chatgptAccess(ctx context.Context, providerID string, usable func(domain.ChatGPTToken) bool) (ports.ChatGPTAccess, error) {
	pr, tok, err := s.currentToken(ctx, providerID)
	if errs.Is(err, errs.Validation) && s.gpt != nil && s.gpt.wasRevoked(providerID) {
		return ports.ChatGPTAccess{}, revokedErr(pr)
	}
	if err != nil || usable(tok) {
		return access(tok), err
	}
	if s.gpt == nil {
		return ports.ChatGPTAccess{}, errs.E(errs.Unavailable, "the ChatGPT sign-in of provider %q needs a refresh, and this server has no ChatGPT sign-in configured", pr.Name)
	}
	lock := s.gpt.lock(providerID)
	lock.Lock()
	defer lock.Unlock()
	// Whoever held the lock may have refreshed already, or found the
	// sign-in revoked.
	pr, tok, err = s.currentToken(ctx, providerID)
	if errs.Is(err, errs.Validation) && s.gpt.wasRevoked(providerID) {
		return ports.ChatGPTAccess{}, revokedErr(pr)
	}
	if err != nil || usable(tok) {
		return access(tok), err
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), refreshTimeout)
	defer cancel()
	next, err := s.gpt.auth.Refresh(rctx, tok.RefreshToken)
	if errors.Is(err, ports.ErrChatGPTRevoked) {
		// Clear it unless another replica refreshed in the meantime (whose
		// rotation is what made ours stale).
		if _, serr := s.gpt.store.SwapChatGPTToken(rctx, providerID, pr.SealedChatGPTToken, ""); serr != nil {
			return ports.ChatGPTAccess{}, serr
		}
		if _, now, cerr := s.currentToken(rctx, providerID); cerr == nil && usable(now) {
			return access(now), nil
		}
		s.gpt.setRevoked(providerID, true)
		return ports.ChatGPTAccess{}, revokedErr(pr)
	}
	if err != nil {
		return ports.ChatGPTAccess{}, err
	}
	if next.RefreshToken == "" {
		next.RefreshToken = tok.RefreshToken
	}
	if next.AccountID == "" {
		next.AccountID, next.Email, next.Plan = tok.AccountID, tok.Email, tok.Plan
	}
	if next.IDToken == "" {
		next.IDToken = tok.IDToken
	}
	next.RefreshedAt = s.clock.Now()
	raw, err := json.Marshal(next)
	if err != nil {
		return ports.ChatGPTAccess{}, err
	}
	sealed, err := s.box.Seal(tokenPlace(providerID), string(raw))
	if err != nil {
		return ports.ChatGPTAccess{}, err
	}
	ok, err := s.gpt.store.SwapChatGPTToken(rctx, providerID, pr.SealedChatGPTToken, sealed)
	if err != nil {
		return ports.ChatGPTAccess{}, err
	}
	if !ok {
		// Signed out (or in again) while refreshing: what is stored now wins.
		_, now, err := s.currentToken(rctx, providerID)
		return access(now), err
	}
	return access(next), nil
}

// currentToken reads a provider's sign-in; validation when it has none.
func (s *Service) currentToken(ctx context.Context, providerID string) (domain.Provider, domain.ChatGPTToken, error) {
	pr, err := s.store.FindProvider(ctx, providerID)
	if err != nil {
		return pr, domain.ChatGPTToken{}, err
	}
	if !pr.ChatGPTLoggedIn() {
		return pr, domain.ChatGPTToken{}, NotSignedIn(pr)
	}
	tok, err := s.openToken(pr)
	return pr, tok, err
}

// The rules of a chatgpt_login provider, in one place: what it may be
// configured with (checkChatGPTInput), how a run reaches it
// (ChatGPTEndpoint), and the errors a person sees when it cannot be used
// (NotSignedIn, revokedErr). The sign-in itself (login, refresh, revoke)
// is the rest of this file.

// checkChatGPTInput adds to f what a chatgpt_login provider's input may
// not carry: the Codex backend speaks Responses at a fixed address, and
// the credential is the sign-in's token, not a key (hasKey: one is given
// or kept).
func checkChatGPTInput(f *errs.FieldErrors, api, baseURL string, hasKey bool) {
	if api != "responses" {
		f.Add("api", "chatgpt_login providers speak responses")
	}
	if baseURL != "" {
		f.Add("base_url", "chatgpt_login providers use the ChatGPT backend; leave it empty")
	}
	if hasKey {
		f.Add("api_key", "chatgpt_login providers sign in instead of taking a key; leave it empty")
	}
}

// ChatGPTEndpoint is how a run reaches a chatgpt_login provider pr: the
// endpoint carries no key, as the Codex bridge fetches (and refreshes) the
// sign-in's token at each call. The sign-in is checked here so a run
// without one fails at once: NotSignedIn's validation error.
func ChatGPTEndpoint(pr domain.Provider, proxyURL string) (ports.ProviderEndpoint, error) {
	if !pr.ChatGPTLoggedIn() {
		return ports.ProviderEndpoint{}, NotSignedIn(pr)
	}
	return ports.ProviderEndpoint{ProviderID: pr.ID, Name: pr.Name, Type: pr.Type, AuthMode: pr.AuthMode, API: pr.API, ProxyURL: proxyURL}, nil
}

// NotSignedIn is the error of a call through a chatgpt_login provider that
// holds no sign-in: it names the provider and the way out.
func NotSignedIn(pr domain.Provider) error {
	return errs.E(errs.Validation, "provider %q signs in with a ChatGPT account and is not signed in: "+
		"sign in on the provider (Providers → Sign in with ChatGPT); nothing was sent", pr.Name)
}

func revokedErr(pr domain.Provider) error {
	return errs.E(errs.Validation, "the ChatGPT sign-in of provider %q was revoked or has expired: sign in again (Providers → Sign in with ChatGPT)", pr.Name)
}

func (c *chatgpt) setRevoked(providerID string, on bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if on {
		c.revoked[providerID] = true
	} else {
		delete(c.revoked, providerID)
	}
}

func (c *chatgpt) wasRevoked(providerID string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.revoked[providerID]
}

func access(tok domain.ChatGPTToken) ports.ChatGPTAccess {
	return ports.ChatGPTAccess{AccessToken: tok.AccessToken, AccountID: tok.AccountID}
}

func (c *chatgpt) lock(providerID string) *sync.Mutex {
	c.mu.Lock()
	defer c.mu.Unlock()
	l := c.locks[providerID]
	if l == nil {
		l = &sync.Mutex{}
		c.locks[providerID] = l
	}
	return l
}

// randomToken is 32 random bytes, base64url: a state, or a PKCE verifier
// (43 characters of the unreserved set, as RFC 7636 asks).
func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return base64.RawURLEncoding.EncodeToString(b)
}
