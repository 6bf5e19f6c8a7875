package auth

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
)

var cheapPasswords = PasswordParams{MemoryKiB: 64, Time: 1, Threads: 1}

// cacheEnv is a service over a memStore and a fake clock with an admin, a
// member signed in with a session token, and the member's personal token.
type cacheEnv struct {
	t        *testing.T
	ctx      context.Context
	svc      *Service
	store    *memStore
	clock    *fakeClock
	admin    domain.Principal
	member   domain.Principal
	session  string // the member's session token
	pat      string // the member's personal token (no expiry)
	patID    string
	password string
}

func newCacheEnv(t *testing.T, ttl time.Duration) *cacheEnv {
	t.Helper()
	ctx := context.Background()
	store := newMemStore()
	clock := &fakeClock{now: time.UnixMilli(1_700_000_000_000).UTC()}
	svc, err := New(Deps{Users: store, Tokens: store, IDs: &countingIDs{}, Clock: clock, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Params: cheapPasswords})
	if err != nil {
		t.Fatal(err)
	}
	if ttl != 0 {
		svc.SetTokenCache(ttl, DefaultTokenCacheSize)
	}
	if _, err := svc.Bootstrap(ctx, ""); err != nil {
		t.Fatal(err)
	}
	root, _ := store.FindBootstrapUser(ctx)
	e := &cacheEnv{t: t, ctx: ctx, svc: svc, store: store, clock: clock, admin: domain.Principal{User: root}, password: "a long password"}
	mo, err := svc.CreateUser(ctx, e.admin, "mo", e.password, domain.RoleMember)
	if err != nil {
		t.Fatal(err)
	}
	e.member = domain.Principal{User: mo}
	if e.session, _, err = svc.Login(ctx, "mo", e.password); err != nil {
		t.Fatal(err)
	}
	pat, tok, err := svc.CreatePersonalToken(ctx, e.member, "script", 0)
	if err != nil {
		t.Fatal(err)
	}
	e.pat, e.patID = pat, tok.ID
	return e
}

func (e *cacheEnv) ok(token string) domain.Principal {
	e.t.Helper()
	p, err := e.svc.Authenticate(e.ctx, token)
	if err != nil {
		e.t.Fatalf("authenticate: %v", err)
	}
	return p
}

func (e *cacheEnv) refused(token string) {
	e.t.Helper()
	if p, err := e.svc.Authenticate(e.ctx, token); errs.CodeOf(err) != errs.Unauthorized {
		e.t.Fatalf("authenticated %+v (%v), want unauthorized", p.User, err)
	}
}

func (e *cacheEnv) lookups(want int) {
	e.t.Helper()
	if got, _ := e.store.counts(); got != want {
		e.t.Fatalf("%d token reads reached the store, want %d", got, want)
	}
}

// addToken stores a token for the member directly (a chosen expiry).
func (e *cacheEnv) addToken(text string, exp *time.Time) domain.Token {
	e.t.Helper()
	now := e.clock.Now()
	tok := domain.Token{ID: "t-" + text, UserID: e.member.User.ID, Kind: domain.TokenPersonal, Hash: HashToken(text), CreatedAt: now,
		LastUsedAt: now, ExpiresAt: exp}
	if err := e.store.CreateToken(e.ctx, tok); err != nil {
		e.t.Fatal(err)
	}
	return tok
}

func (e *cacheEnv) update(id string, patch domain.UserPatch) {
	e.t.Helper()
	if err := e.svc.UpdateUser(e.ctx, e.admin, id, patch); err != nil {
		e.t.Fatal(err)
	}
}

func ptr[T any](v T) *T { return &v }

// TestTokenCache: a verified token is trusted for the TTL without a store
// read, its expiry is still checked on every use, and every change the
// service makes that could make the cached answer wrong takes effect on
// the very next request.
func TestTokenCache(t *testing.T) {
	for _, c := range []struct {
		name string
		ttl  time.Duration // 0: the default; <0: cache off
		run  func(e *cacheEnv)
	}{
		{"a verified token is read once per TTL", 0, func(e *cacheEnv) {
			e.ok(e.pat)
			e.clock.Add(DefaultTokenCacheTTL - time.Millisecond)
			e.ok(e.pat)
			e.lookups(1)
			e.clock.Add(time.Millisecond)
			e.ok(e.pat)
			e.lookups(2)
		}},
		{"with the cache off every use reads the store", -1, func(e *cacheEnv) {
			for range 3 {
				e.ok(e.pat)
			}
			e.lookups(3)
		}},
		{"a fixed expiry is honoured to the millisecond on a cached token", 0, func(e *cacheEnv) {
			exp := e.clock.Now().Add(10 * time.Second)
			e.addToken("ags_p_expiring", &exp)
			e.ok("ags_p_expiring")
			e.clock.Add(10*time.Second - time.Millisecond)
			e.ok("ags_p_expiring")
			e.clock.Add(time.Millisecond)
			e.refused("ags_p_expiring")
			e.lookups(1) // refused from the cache, still inside the TTL
		}},
		{"a clock that goes back trusts nothing cached", 0, func(e *cacheEnv) {
			e.ok(e.pat)
			e.clock.Add(-time.Second)
			e.ok(e.pat)
			e.lookups(2)
		}},
		{"revoking a token refuses it at once", 0, func(e *cacheEnv) {
			e.ok(e.pat)
			if err := e.svc.RevokeToken(e.ctx, e.member, e.patID); err != nil {
				e.t.Fatal(err)
			}
			e.refused(e.pat)
		}},
		{"revoking one token keeps the others cached", 0, func(e *cacheEnv) {
			e.ok(e.pat)
			e.ok(e.session)
			other := e.addToken("ags_p_other", nil)
			e.ok("ags_p_other")
			if err := e.svc.RevokeToken(e.ctx, e.member, other.ID); err != nil {
				e.t.Fatal(err)
			}
			e.refused("ags_p_other")
			e.ok(e.pat)
			e.ok(e.session)
			e.lookups(4) // pat, session, other, and other once more
		}},
		{"signing out refuses the token at once", 0, func(e *cacheEnv) {
			p := e.ok(e.session)
			if err := e.svc.Logout(e.ctx, p); err != nil {
				e.t.Fatal(err)
			}
			e.refused(e.session)
			e.ok(e.pat) // the member's other token is still good
		}},
		{"disabling the user refuses their tokens at once", 0, func(e *cacheEnv) {
			e.ok(e.pat)
			e.ok(e.session)
			e.update(e.member.User.ID, domain.UserPatch{Disabled: ptr(true)})
			e.refused(e.pat)
			e.refused(e.session)
		}},
		{"deleting the user refuses their tokens at once", 0, func(e *cacheEnv) {
			e.ok(e.pat)
			if err := e.svc.DeleteUser(e.ctx, e.admin, e.member.User.ID); err != nil {
				e.t.Fatal(err)
			}
			e.refused(e.pat)
		}},
		{"a demotion shows on the next request", 0, func(e *cacheEnv) {
			e.update(e.member.User.ID, domain.UserPatch{Role: ptr(domain.RoleAdmin)})
			if p := e.ok(e.pat); !p.IsAdmin() {
				e.t.Fatal("the promotion did not show")
			}
			e.update(e.member.User.ID, domain.UserPatch{Role: ptr(domain.RoleMember)})
			if p := e.ok(e.pat); p.IsAdmin() {
				e.t.Fatal("a demoted admin is still an admin")
			}
		}},
		{"a promotion shows on the next request", 0, func(e *cacheEnv) {
			if p := e.ok(e.pat); p.IsAdmin() {
				e.t.Fatal("a member is an admin")
			}
			e.update(e.member.User.ID, domain.UserPatch{Role: ptr(domain.RoleAdmin)})
			if p := e.ok(e.pat); !p.IsAdmin() {
				e.t.Fatal("the promotion did not show")
			}
		}},
		{"a password change shows on the next request", 0, func(e *cacheEnv) {
			before := e.ok(e.pat).User.PasswordHash
			e.update(e.member.User.ID, domain.UserPatch{Password: ptr("another long password")})
			if after := e.ok(e.pat).User.PasswordHash; after == before {
				e.t.Fatal("the principal kept the old user row")
			}
		}},
		{"a new AGENTS_TOKEN refuses the old one at once", 0, func(e *cacheEnv) {
			const first, second = "fixed-token-0123456789", "fixed-token-9876543210"
			for _, fixed := range []string{first, second} {
				if _, err := e.svc.Bootstrap(e.ctx, fixed); err != nil {
					e.t.Fatal(err)
				}
				e.ok(fixed)
			}
			e.refused(first)
			if _, err := e.svc.Bootstrap(e.ctx, ""); err != nil { // AGENTS_TOKEN unset
				e.t.Fatal(err)
			}
			e.refused(second)
		}},
		{"an unknown token is not remembered", 0, func(e *cacheEnv) {
			e.refused("ags_p_later")
			e.addToken("ags_p_later", nil)
			e.ok("ags_p_later")
		}},
		{"a store that cannot answer is not remembered", 0, func(e *cacheEnv) {
			e.store.mu.Lock()
			e.store.down = errs.E(errs.Internal, "disk on fire")
			e.store.mu.Unlock()
			if _, err := e.svc.Authenticate(e.ctx, e.pat); errs.CodeOf(err) != errs.Unavailable {
				e.t.Fatalf("during an outage: %v", err)
			}
			e.store.mu.Lock()
			e.store.down = nil
			e.store.mu.Unlock()
			e.ok(e.pat)
		}},
		{"pruning expired tokens sheds them", 0, func(e *cacheEnv) {
			exp := e.clock.Now().Add(time.Second)
			e.addToken("ags_p_short", &exp)
			e.ok("ags_p_short")
			e.ok(e.pat)
			e.clock.Add(time.Second)
			if n, err := e.svc.PruneExpiredTokens(e.ctx); n != 1 || err != nil {
				e.t.Fatalf("pruned %d: %v", n, err)
			}
			if n := e.svc.cache.size(); n != 0 {
				e.t.Fatalf("%d entries after a prune", n)
			}
			e.refused("ags_p_short")
		}},
		{"a use is written back once a minute, cached or not", 3 * time.Minute, func(e *cacheEnv) {
			e.ok(e.session)
			e.clock.Add(domain.TouchEvery)
			e.ok(e.session) // a hit: written back, and remembered
			e.clock.Add(time.Second)
			e.ok(e.session)
			e.lookups(1)
			if _, touches := e.store.counts(); touches != 1 {
				e.t.Fatalf("%d touches, want 1", touches)
			}
			stored, _, _ := e.store.FindTokenByID(e.ctx, e.sessionID())
			cached, _, _ := e.svc.cache.lookup(HashToken(e.session), e.clock.Now())
			if !stored.LastUsedAt.Equal(cached.LastUsedAt) || stored.ExpiresAt == nil || cached.ExpiresAt == nil ||
				!stored.ExpiresAt.Equal(*cached.ExpiresAt) || !stored.ExpiresAt.After(stored.CreatedAt.Add(domain.SessionIdle)) {
				e.t.Fatalf("stored %+v, cached %+v: the slid expiry differs", stored, cached)
			}
		}},
		{"the cache holds at most its size", 0, func(e *cacheEnv) {
			e.svc.SetTokenCache(DefaultTokenCacheTTL, 4)
			var texts []string
			for i := range 10 {
				text := fmt.Sprintf("ags_p_many%02d", i)
				e.addToken(text, nil)
				texts = append(texts, text)
			}
			for range 2 {
				for _, text := range texts {
					e.ok(text)
					if n := e.svc.cache.size(); n > 4 {
						e.t.Fatalf("%d entries in a cache of 4", n)
					}
				}
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.run(newCacheEnv(t, c.ttl))
		})
	}
}

// sessionID is the id of the member's session token.
func (e *cacheEnv) sessionID() string {
	e.t.Helper()
	toks, _ := e.store.ListTokens(e.ctx, e.member.User.ID)
	for _, tok := range toks {
		if tok.Kind == domain.TokenSession {
			return tok.ID
		}
	}
	e.t.Fatal("no session token")
	return ""
}

// TestTokenCacheLookupRacingAChange catches a lookup after it has read a
// still-valid token from the store and holds it there while the token is
// revoked (or its user changed): the lookup may answer with what it read,
// but must not leave it cached, so the next request sees the change.
func TestTokenCacheLookupRacingAChange(t *testing.T) {
	for _, c := range []struct {
		name   string
		change func(e *cacheEnv)
		check  func(e *cacheEnv)
	}{
		{"revoke", func(e *cacheEnv) {
			if err := e.svc.RevokeToken(e.ctx, e.member, e.patID); err != nil {
				e.t.Fatal(err)
			}
		}, func(e *cacheEnv) { e.refused(e.pat) }},
		{"disable", func(e *cacheEnv) { e.update(e.member.User.ID, domain.UserPatch{Disabled: ptr(true)}) },
			func(e *cacheEnv) { e.refused(e.pat) }},
		{"delete", func(e *cacheEnv) {
			if err := e.svc.DeleteUser(e.ctx, e.admin, e.member.User.ID); err != nil {
				e.t.Fatal(err)
			}
		}, func(e *cacheEnv) { e.refused(e.pat) }},
		{"demote", func(e *cacheEnv) {
			e.update(e.member.User.ID, domain.UserPatch{Role: ptr(domain.RoleMember)})
		}, func(e *cacheEnv) {
			if e.ok(e.pat).IsAdmin() {
				e.t.Fatal("a demoted admin is still an admin")
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newCacheEnv(t, 0)
			e.update(e.member.User.ID, domain.UserPatch{Role: ptr(domain.RoleAdmin)})
			reached, release := make(chan struct{}), make(chan struct{})
			var once sync.Once
			e.store.mu.Lock()
			e.store.paused = func() { once.Do(func() { close(reached); <-release }) }
			e.store.mu.Unlock()
			done := make(chan error, 1)
			go func() {
				_, err := e.svc.Authenticate(e.ctx, e.pat)
				done <- err
			}()
			<-reached // the lookup has read the token as it was
			c.change(e)
			close(release)
			if err := <-done; err != nil {
				t.Fatalf("the lookup that read before the change: %v", err)
			}
			c.check(e)
		})
	}
}

// TestTokenCacheUnderConcurrentUse authenticates many tokens from many
// goroutines while they are revoked one by one: a revoked token is refused
// from the moment its revoke returns (run with -race).
func TestTokenCacheUnderConcurrentUse(t *testing.T) {
	e := newCacheEnv(t, 0)
	var texts []string
	var ids []string
	for i := range 20 {
		text := fmt.Sprintf("ags_p_busy%02d", i)
		ids = append(ids, e.addToken(text, nil).ID)
		texts = append(texts, text)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := e.svc.Authenticate(e.ctx, texts[i%len(texts)]); err != nil && errs.CodeOf(err) != errs.Unauthorized {
					t.Error(err)
					return
				}
			}
		}()
	}
	for i, id := range ids {
		e.ok(texts[i])
		if err := e.svc.RevokeToken(e.ctx, e.member, id); err != nil {
			t.Fatal(err)
		}
		e.refused(texts[i])
	}
	close(stop)
	wg.Wait()
}
