// Package livestreams keeps the register of open event streams and sockets
// (a run's SSE stream, the /ws bus, /ws/terminal) by the user and token that
// opened them. A stream outlives the request that authenticated it, so a
// credential change must reach it from here: the auth service reports a
// revoked token or a disabled, deleted or demoted user, and the register
// closes exactly the streams that change invalidates. It also caps how many
// streams one account holds at once (max_streams_per_user).
package livestreams

import (
	"context"
	"sync"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/settings"
	"github.com/agents-server/agents-server/ports"
)

// RetryAfter is the wait a stream refused for the cap is told to take: a
// slot frees only when one of the account's streams closes, which no one
// can predict, so this is a pace for the client, not a promise.
const RetryAfter = 10 * time.Second

// SweepEvery is how often the composition root calls Sweep: a token with a
// fixed expiry loses its streams at most this long after it expires.
const SweepEvery = 15 * time.Second

// Why the register closed a stream: short enough for a WebSocket close
// frame, and what an SSE stream's closing comment names.
const (
	ReasonSignedOut    = "signed out"
	ReasonRevoked      = "token revoked"
	ReasonDisabled     = "account disabled"
	ReasonDeleted      = "account deleted"
	ReasonRoleChanged  = "role changed" // an admin demoted: what it may see has changed
	ReasonTokenExpired = "token expired"
)

// Credentials re-reads a token's standing from the store (auth.Standing:
// built apart from the auth service, which closes this registry's
// streams, so the registry is built first).
type Credentials interface {
	// Revalidate returns whom p's token authenticates now and when it
	// expires (nil: never), without counting as a use of the token; for a
	// principal the embedding host signed in (no token), whether its
	// account still stands. Returns unauthorized when the token is gone or
	// expired or its user disabled, unavailable when the store cannot
	// answer.
	Revalidate(ctx context.Context, p domain.Principal) (domain.Principal, *time.Time, error)
}

// Settings reads the per-user cap (an int setting of the registry).
type Settings interface {
	// Int returns the setting's effective value.
	Int(ctx context.Context, key string) (int, error)
}

// Registry holds every open stream by user. It is safe for concurrent use.
type Registry struct {
	creds    Credentials
	settings Settings
	clock    ports.Clock

	mu     sync.Mutex
	byUser map[string]map[*Stream]struct{}
}

// New returns an empty register.
func New(creds Credentials, s Settings, clock ports.Clock) *Registry {
	return &Registry{creds: creds, settings: s, clock: clock, byUser: map[string]map[*Stream]struct{}{}}
}

// Stream is one registered stream; its holder calls Release when it ends.
type Stream struct {
	reg     *Registry
	userID  string
	tokenID string
	admin   bool
	close   func(reason string)
	// expiresAt is the token's expiry as last read (nil: never); guarded
	// by reg.mu.
	expiresAt *time.Time
}

// Open registers a stream of the caller p. close ends the stream with a
// short reason when its credential stops being valid; it runs on its own
// goroutine, since closing a socket may wait on a slow peer.
//
// Returns rate_limited when the account already holds max_streams_per_user
// streams; unauthorized when p's token was revoked since it authenticated;
// conflict when p was demoted since (open again to stream as who p is now);
// unavailable (or the settings' error) when the store cannot answer.
func (r *Registry) Open(ctx context.Context, p domain.Principal, close func(reason string)) (*Stream, error) {
	limit, err := r.settings.Int(ctx, settings.KeyMaxStreamsPerUser)
	if err != nil {
		return nil, err
	}
	st := &Stream{reg: r, userID: p.User.ID, tokenID: p.TokenID, admin: p.IsAdmin(), close: close}
	r.mu.Lock()
	set := r.byUser[p.User.ID]
	if n := len(set); n >= limit {
		r.mu.Unlock()
		return nil, errs.E(errs.RateLimited,
			"%d event streams are open for this account, its limit (max_streams_per_user); close one, or retry in %d s",
			n, int(RetryAfter/time.Second))
	}
	if set == nil {
		set = map[*Stream]struct{}{}
		r.byUser[p.User.ID] = set
	}
	set[st] = struct{}{}
	r.mu.Unlock()

	// Registered first, read second: a revocation that commits after this
	// read is announced after it and finds the stream registered; one that
	// committed before it is seen here. Either way nothing slips between
	// the caller's authentication and the registration.
	cur, exp, err := r.creds.Revalidate(ctx, p)
	if err != nil {
		st.Release()
		return nil, err
	}
	if cur.User.ID != p.User.ID || (st.admin && !cur.IsAdmin()) {
		st.Release()
		return nil, errs.E(errs.Conflict, "the account changed while the stream opened; open it again")
	}
	r.mu.Lock()
	st.expiresAt = exp
	r.mu.Unlock()
	return st, nil
}

// Release unregisters the stream, freeing its slot at once. It is safe to
// call more than once and after the register closed the stream.
func (s *Stream) Release() {
	s.reg.mu.Lock()
	s.reg.detachLocked(s)
	s.reg.mu.Unlock()
}

// detachLocked removes s and reports whether it was still registered, so
// each stream is closed (or released) once.
func (r *Registry) detachLocked(s *Stream) bool {
	set := r.byUser[s.userID]
	if _, ok := set[s]; !ok {
		return false
	}
	delete(set, s)
	if len(set) == 0 {
		delete(r.byUser, s.userID)
	}
	return true
}

// CloseToken closes the streams userID opened with tokenID (a signed-out or
// revoked token); the user's other tokens keep theirs. It returns how many
// it closed.
func (r *Registry) CloseToken(userID, tokenID, reason string) int {
	return r.closeWhere(userID, reason, func(s *Stream) bool { return s.tokenID == tokenID })
}

// CloseUser closes every stream of userID (disabled, deleted or demoted).
// It returns how many it closed.
func (r *Registry) CloseUser(userID, reason string) int {
	return r.closeWhere(userID, reason, func(*Stream) bool { return true })
}

func (r *Registry) closeWhere(userID, reason string, match func(*Stream) bool) int {
	r.mu.Lock()
	var closing []*Stream
	for s := range r.byUser[userID] {
		if match(s) && r.detachLocked(s) {
			closing = append(closing, s)
		}
	}
	r.mu.Unlock()
	for _, s := range closing {
		go s.close(reason)
	}
	return len(closing)
}

// Sweep closes the streams whose token expired while they were open. Only
// streams past their token's known expiry cost a store read: a sliding
// session token used elsewhere meanwhile is found alive with a later
// expiry and kept. It returns how many it closed; a store failure leaves
// the streams for the next sweep and is returned.
func (r *Registry) Sweep(ctx context.Context) (int, error) {
	now := r.clock.Now()
	due := map[string]bool{}
	r.mu.Lock()
	for _, set := range r.byUser {
		for s := range set {
			if s.expiresAt != nil && !now.Before(*s.expiresAt) {
				due[s.tokenID] = true
			}
		}
	}
	r.mu.Unlock()
	closed := 0
	var firstErr error
	for tokenID := range due {
		cur, exp, err := r.creds.Revalidate(ctx, domain.Principal{TokenID: tokenID})
		switch {
		case errs.Is(err, errs.Unauthorized):
			closed += r.closeTokenEverywhere(tokenID, ReasonTokenExpired)
		case err != nil:
			if firstErr == nil {
				firstErr = err
			}
		default:
			closed += r.extend(tokenID, cur, exp)
		}
	}
	return closed, firstErr
}

// closeTokenEverywhere closes tokenID's streams without knowing its user
// (the token is gone from the store).
func (r *Registry) closeTokenEverywhere(tokenID, reason string) int {
	r.mu.Lock()
	var users []string
	for userID, set := range r.byUser {
		for s := range set {
			if s.tokenID == tokenID {
				users = append(users, userID)
				break
			}
		}
	}
	r.mu.Unlock()
	n := 0
	for _, userID := range users {
		n += r.CloseToken(userID, tokenID, reason)
	}
	return n
}

// extend records a live token's new expiry on its streams, closing those
// opened as an admin the store no longer calls one (a demotion no hook
// announced).
func (r *Registry) extend(tokenID string, cur domain.Principal, exp *time.Time) int {
	r.mu.Lock()
	var demoted []*Stream
	for s := range r.byUser[cur.User.ID] {
		if s.tokenID != tokenID {
			continue
		}
		s.expiresAt = exp
		if s.admin && !cur.IsAdmin() && r.detachLocked(s) {
			demoted = append(demoted, s)
		}
	}
	r.mu.Unlock()
	for _, s := range demoted {
		go s.close(ReasonRoleChanged)
	}
	return len(demoted)
}
