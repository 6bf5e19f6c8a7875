// Package auth signs people in: users and roles, bearer tokens stored only as
// hashes, password logins, personal access tokens and the bootstrap admin.
package auth

import (
	"context"
	"log/slog"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agents-server/agents-server/core/audit"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/livestreams"
	"github.com/agents-server/agents-server/ports"
)

// Service authenticates callers and administers users and tokens.
type Service struct {
	users     ports.UserStore
	tokens    ports.TokenStore
	ids       ports.IDs
	clock     ports.Clock
	log       *slog.Logger
	params    PasswordParams
	dummyHash string // verified against for unknown users, so timing names no one
	standing  Standing
	streams   StreamCloser
	work      UserWork
	cache     *tokenCache
	fence     CacheFence
	refusals  Refusals
	oidc      *OIDCDeps // nil: single sign-on is off
	// passwordOff refuses password sign-ins; tokens (the bootstrap
	// admin's, personal ones) still work, for recovery and scripts.
	passwordOff bool
}

// Deps are what the auth service works with.
type Deps struct {
	Users  ports.UserStore
	Tokens ports.TokenStore
	IDs    ports.IDs
	Clock  ports.Clock
	Log    *slog.Logger
	// Params is the password hashing cost.
	Params PasswordParams
	// Work stops a user's live work before their account is deleted; nil:
	// nothing runs (a program without a run engine).
	Work UserWork
	// Streams ends the live streams a credential change invalidates, once
	// the change has committed; nil: nothing is streamed.
	Streams StreamCloser
	// Fence says when the verified-token cache may answer: with replicas,
	// only while this one hears the others' closings (see CacheFence);
	// nil: always (one process makes every change itself).
	Fence CacheFence
	// Refusals records refused sign-ins in the audit log; nil: none.
	Refusals Refusals
	// OIDC turns single sign-on on; nil: off.
	OIDC *OIDCDeps
	// PasswordLoginOff refuses password sign-ins (tokens still work).
	PasswordLoginOff bool
}

// Refusals records an action refused before it changed anything.
type Refusals interface {
	Refused(ctx context.Context, action string, obj audit.Object, method, reason string) error
}

// CacheFence tells the token cache whether this process would have heard
// of a credential closed elsewhere. Where another process can revoke a
// token (replicas sharing a store), a cached answer is only as good as
// the way the news of a revoke arrives; while that way may be late or
// broken, a token is read from the store instead.
type CacheFence interface {
	// CacheTrusted reports whether a cached token may answer now. It is
	// asked on every request: it must be cheap (no I/O).
	CacheTrusted() bool
}

// New returns a Service.
func New(d Deps) (*Service, error) {
	dummy, err := HashPassword("not a password anyone has", d.Params)
	if err != nil {
		return nil, err
	}
	var work UserWork = noWork{}
	if d.Work != nil {
		work = d.Work
	}
	var streams StreamCloser = noStreams{}
	if d.Streams != nil {
		streams = d.Streams
	}
	return &Service{users: d.Users, tokens: d.Tokens, ids: d.IDs, clock: d.Clock, log: d.Log, params: d.Params, dummyHash: dummy,
		standing: NewStanding(d.Users, d.Tokens, d.Clock), streams: streams, work: work,
		cache: newTokenCache(DefaultTokenCacheTTL, DefaultTokenCacheSize), fence: d.Fence, refusals: d.Refusals,
		oidc: d.OIDC, passwordOff: d.PasswordLoginOff}, nil
}

var errBadToken = errs.E(errs.Unauthorized, "invalid or expired token")

// storeDown turns a store failure on the sign-in path into unavailable: a
// database hiccup must not read as a wrong token (nor spend a guess budget).
func storeDown(err error) error {
	if errs.CodeOf(err) == errs.Internal {
		return errs.Wrap(errs.Unavailable, err, "credential store unavailable, retry shortly")
	}
	return err
}

// Authenticate resolves a bearer token to its caller. Returns unauthorized for
// a missing, unknown, expired or disabled-user token, and unavailable when the
// store cannot answer. A token verified in the last SetTokenCache ttl is not
// read again (see tokenCache) while Deps.Fence allows; its expiry is still
// checked every time.
func (s *Service) Authenticate(ctx context.Context, token string) (domain.Principal, error) {
	if token == "" {
		return domain.Principal{}, errs.E(errs.Unauthorized, "missing bearer token")
	}
	hash := HashToken(token)
	var t domain.Token
	var u domain.User
	var cached bool
	if s.fence == nil || s.fence.CacheTrusted() {
		t, u, cached = s.cache.lookup(hash, s.clock.Now())
	}
	var gen uint64
	if !cached {
		gen = s.cache.generation()
		var err error
		t, u, err = s.tokens.FindTokenByHash(ctx, hash)
		if errs.Is(err, errs.NotFound) {
			return domain.Principal{}, errBadToken
		}
		if err != nil {
			return domain.Principal{}, storeDown(err)
		}
	}
	now := s.clock.Now()
	if t.Expired(now) || u.Disabled {
		return domain.Principal{}, errBadToken
	}
	if now.Sub(t.LastUsedAt) >= domain.TouchEvery {
		exp := t.ExpiresAt
		if t.Slides() {
			e := t.SlidExpiry(now)
			exp = &e
		}
		// A lost touch only shortens a sliding token's life by a minute; the
		// request it authenticates must not fail for it.
		if err := s.tokens.TouchToken(ctx, t.ID, now, exp); err != nil {
			s.log.Warn("recording token use failed", "token_id", t.ID, "err", err)
		} else {
			t.LastUsedAt, t.ExpiresAt = now, exp
			if cached {
				s.cache.touched(hash, t)
			}
		}
	}
	if !cached {
		s.cache.remember(hash, t, u, now, gen)
	}
	return domain.Principal{User: u, TokenID: t.ID}, nil
}

// Login checks a username and password and mints a session token. Every
// failure reads the same ("invalid username or password") and costs the same
// time, so a response names no account. Returns unauthorized or
// unavailable, and forbidden when password sign-in is turned off.
func (s *Service) Login(ctx context.Context, username, password string) (string, domain.User, error) {
	token, u, err := s.login(ctx, username, password)
	who := u
	if err != nil && who.ID == "" {
		who.Username = username // the account tried, for the record of the refusal
	}
	return token, u, s.signInOutcome(ctx, MethodPassword, who, err)
}

// signedIn returns ctx staging the record of u's sign-in by method, for
// the write of the token it mints.
func (s *Service) signedIn(ctx context.Context, u domain.User, method SignInMethod) context.Context {
	ctx, rec := audit.Stage(actingAs(ctx, u), s.clock.Now(), "signin", audit.Object{Kind: "user", ID: u.ID, Name: u.Username})
	rec.Method = string(method)
	return ctx
}

// actingAs is ctx with u as its actor, from the address ctx came from:
// a person signing in acts for themselves.
func actingAs(ctx context.Context, u domain.User) context.Context {
	who := ports.ActorOf(ctx)
	who.Kind, who.ID, who.Name = domain.ActorUser, u.ID, u.Username
	return ports.WithActor(ctx, who)
}

// refusedSignIn records a sign-in refused for the account u (its name
// alone when none was found), with the reason people read.
func (s *Service) refusedSignIn(ctx context.Context, method SignInMethod, u domain.User, err error) {
	if s.refusals == nil || errs.CodeOf(err) == errs.Internal || errs.CodeOf(err) == errs.Unavailable {
		return
	}
	if rerr := s.refusals.Refused(context.WithoutCancel(ctx), "signin", audit.Object{Kind: "user", ID: u.ID, Name: u.Username}, string(method),
		errs.MessageOf(err)); rerr != nil {
		s.log.Warn("recording a refused sign-in failed", "err", rerr)
	}
}

// login is Login without its record.
func (s *Service) login(ctx context.Context, username, password string) (string, domain.User, error) {
	if s.passwordOff {
		how := "with an API token"
		if s.oidc != nil {
			how = "with " + s.oidc.Config.Name
		}
		return "", domain.User{}, errs.E(errs.Forbidden, "password sign-in is turned off on this server: sign in %s", how)
	}
	fail := errs.E(errs.Unauthorized, "invalid username or password")
	if username == "" || password == "" || len(password) > domain.MaxPasswordLen {
		return "", domain.User{}, fail
	}
	u, err := s.users.FindUserByUsername(ctx, username)
	if err != nil && !errs.Is(err, errs.NotFound) {
		return "", domain.User{}, storeDown(err)
	}
	hash := s.dummyHash
	if err == nil && u.HasPassword() {
		hash = u.PasswordHash
	}
	ok := VerifyPassword(password, hash)
	if err != nil || !u.HasPassword() || !ok || u.Disabled {
		return "", domain.User{}, fail
	}
	token, _, err := s.issue(s.signedIn(ctx, u, MethodPassword), u.ID, domain.TokenSession, "", nil)
	if err != nil {
		return "", domain.User{}, err
	}
	return token, u, nil
}

// issue mints and stores a token for userID. patExpiry is a personal token's
// chosen expiry (nil: never); sliding kinds compute their own.
func (s *Service) issue(ctx context.Context, userID string, kind domain.TokenKind, name string, patExpiry *time.Time) (string, domain.Token, error) {
	text, err := mintToken(kind)
	if err != nil {
		return "", domain.Token{}, err
	}
	now := s.clock.Now()
	t := domain.Token{
		ID: s.ids.NewID(), UserID: userID, Kind: kind, Name: name,
		Hash: HashToken(text), Hint: tokenHint(kind, text), CreatedAt: now, LastUsedAt: now,
	}
	switch {
	case kind == domain.TokenPersonal:
		t.ExpiresAt = patExpiry
	case t.Slides():
		exp := t.SlidExpiry(now)
		t.ExpiresAt = &exp
	}
	if kind == domain.TokenPersonal {
		ctx = audit.Change(ctx, now, "token.create", audit.Object{Kind: "token", ID: t.ID, Name: name}, "name", "expires_at")
	}
	if err := s.tokens.CreateToken(ctx, t); err != nil {
		return "", domain.Token{}, err
	}
	return text, t, nil
}

// Logout revokes the token the caller authenticated with, ending the
// streams it holds open.
func (s *Service) Logout(ctx context.Context, p domain.Principal) error {
	if p.TokenID == "" {
		return errs.E(errs.Validation, "this session was signed in by the program hosting the workbench: sign out there")
	}
	err := s.tokens.DeleteToken(audit.Change(ctx, s.clock.Now(), "signout", audit.Object{Kind: "token", ID: p.TokenID}), p.User.ID, p.TokenID)
	// Forgotten whatever the store said: a failed delete may still have
	// committed, and a needless forget only costs a read.
	s.cache.forgetToken(p.TokenID)
	if err != nil {
		return err
	}
	s.closeToken(p.User.ID, p.TokenID, livestreams.ReasonSignedOut)
	return nil
}

// ListTokens returns the caller's own tokens (never their text).
func (s *Service) ListTokens(ctx context.Context, p domain.Principal) ([]domain.Token, error) {
	return s.tokens.ListTokens(ctx, p.User.ID)
}

const maxTokenNameLen = 100

// CreatePersonalToken mints a personal access token for the caller; the text
// is returned once and never again. expiresInDays 0 means it never expires.
// Returns validation for a missing or long name or a bad lifetime.
func (s *Service) CreatePersonalToken(ctx context.Context, p domain.Principal, name string, expiresInDays int) (string, domain.Token, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return "", domain.Token{}, errs.Field("name", "is required")
	}
	if utf8.RuneCountInString(name) > maxTokenNameLen {
		return "", domain.Token{}, errs.Field("name", "must be at most %d characters", maxTokenNameLen)
	}
	exp, err := domain.PersonalTokenExpiry(s.clock.Now(), expiresInDays)
	if err != nil {
		return "", domain.Token{}, err
	}
	return s.issue(ctx, p.User.ID, domain.TokenPersonal, name, exp)
}

// RevokeToken deletes one of the caller's tokens, ending the streams it
// holds open. Returns not_found for a token that is not the caller's.
func (s *Service) RevokeToken(ctx context.Context, p domain.Principal, id string) error {
	err := s.tokens.DeleteToken(audit.Change(ctx, s.clock.Now(), "token.revoke", audit.Object{Kind: "token", ID: id}), p.User.ID, id)
	s.cache.forgetToken(id)
	if err != nil {
		return err
	}
	s.closeToken(p.User.ID, id, livestreams.ReasonRevoked)
	return nil
}

// PruneExpiredTokens deletes expired tokens; the maintenance loop calls it.
func (s *Service) PruneExpiredTokens(ctx context.Context) (int, error) {
	n, err := s.tokens.DeleteExpiredTokens(ctx, s.clock.Now())
	if n > 0 {
		// Cached expiries are checked on every use, so nothing pruned still
		// authenticates; this only lets the cache shed them.
		s.cache.forgetAll()
	}
	return n, err
}
