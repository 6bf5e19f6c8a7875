package auth

import (
	"sync"
	"time"

	"github.com/agents-server/agents-server/core/domain"
)

// The verified-token cache's defaults: every authenticated request (and
// every WebSocket frame) verifies a bearer token, and without the cache
// each one is a store read.
const (
	// DefaultTokenCacheTTL is how long a verified token is trusted without
	// reading the store again. It only bounds what the service cannot see:
	// a change made through the service (revoke, sign-out, disable, delete,
	// role change) takes effect at once, and an expiry is checked on every
	// request.
	DefaultTokenCacheTTL = 30 * time.Second
	// DefaultTokenCacheSize bounds how many verified tokens are kept.
	DefaultTokenCacheSize = 4096
)

// SetTokenCache sets how long a verified token is trusted without reading
// the store (ttl; 0 or less turns the cache off) and how many are kept. The
// cache assumes this service makes every change to tokens and users while
// it runs; an embedder whose store is also written by someone else should
// keep ttl short or turn it off. Call it before serving.
func (s *Service) SetTokenCache(ttl time.Duration, size int) {
	s.cache = newTokenCache(ttl, size)
}

// tokenCache keeps recently verified tokens, with their users, by token
// hash. What it holds is what the store said (plus the uses this process
// wrote back), so Authenticate decides a hit exactly as it decides a read:
// expiry against the clock, disabled user refused.
//
// Every change that can make a cached answer wrong forgets the entries it
// touches, after the store has committed it. A lookup that read the store
// before such a change and stores its answer after the forget would put the
// stale answer back, so every forget moves the generation and a lookup
// stores its answer only when the generation it began under still holds.
type tokenCache struct {
	ttl time.Duration
	max int

	mu      sync.RWMutex
	gen     uint64
	entries map[string]cachedToken
}

// cachedToken is one verified token and when the store was read for it.
type cachedToken struct {
	token  domain.Token
	user   domain.User
	readAt time.Time
}

func newTokenCache(ttl time.Duration, size int) *tokenCache {
	return &tokenCache{ttl: ttl, max: max(size, 1), entries: map[string]cachedToken{}}
}

// fresh reports whether an entry read at readAt may still answer at now (a
// clock that went back trusts nothing).
func (c *tokenCache) fresh(e cachedToken, now time.Time) bool {
	return !now.Before(e.readAt) && now.Sub(e.readAt) < c.ttl
}

// lookup returns the cached token and user for hash while fresh.
func (c *tokenCache) lookup(hash string, now time.Time) (domain.Token, domain.User, bool) {
	c.mu.RLock()
	e, ok := c.entries[hash]
	c.mu.RUnlock()
	if !ok || !c.fresh(e, now) {
		return domain.Token{}, domain.User{}, false
	}
	return e.token, e.user, true
}

// generation is read before a store lookup and handed to remember.
func (c *tokenCache) generation() uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.gen
}

// remember stores a verified token read at now, unless something was
// forgotten since the lookup began (gen) or the cache is off. When full it
// drops the stale entries, then (all fresh) any one.
func (c *tokenCache) remember(hash string, t domain.Token, u domain.User, now time.Time, gen uint64) {
	if c.ttl <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return
	}
	if _, ok := c.entries[hash]; !ok && len(c.entries) >= c.max {
		for k, e := range c.entries {
			if !c.fresh(e, now) {
				delete(c.entries, k)
			}
		}
		for k := range c.entries {
			if len(c.entries) < c.max {
				break
			}
			delete(c.entries, k)
		}
	}
	c.entries[hash] = cachedToken{token: t, user: u, readAt: now}
}

// touched records a use this process wrote back to the store (its time and
// a sliding token's new expiry) on the entry still holding that token.
func (c *tokenCache) touched(hash string, t domain.Token) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[hash]; ok && e.token.ID == t.ID && t.LastUsedAt.After(e.token.LastUsedAt) {
		e.token.LastUsedAt, e.token.ExpiresAt = t.LastUsedAt, t.ExpiresAt
		c.entries[hash] = e
	}
}

// forget drops the entries matching drop (nil: all) and moves the
// generation, so no lookup already under way stores what it read before.
func (c *tokenCache) forget(drop func(cachedToken) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	for k, e := range c.entries {
		if drop == nil || drop(e) {
			delete(c.entries, k)
		}
	}
}

// forgetToken forgets one token by id.
func (c *tokenCache) forgetToken(tokenID string) {
	c.forget(func(e cachedToken) bool { return e.token.ID == tokenID })
}

// forgetUser forgets every token of a user: their standing, role or
// existence changed.
func (c *tokenCache) forgetUser(userID string) {
	c.forget(func(e cachedToken) bool { return e.user.ID == userID })
}

// forgetAll empties the cache.
func (c *tokenCache) forgetAll() { c.forget(nil) }

// size is how many entries are held (tests).
func (c *tokenCache) size() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.entries)
}
