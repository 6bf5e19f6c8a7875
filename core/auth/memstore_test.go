package auth

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/ports/porttest"
)

// memStore is the in-memory user and token store (porttest.UserStore,
// which keeps the SQL store's contracts) that counts the token reads the
// cache is meant to save, and can fail or pause them.
type memStore struct {
	porttest.UserStore

	mu      sync.Mutex
	lookups int   // FindTokenByHash calls that reached the store
	touches int   // TouchToken calls
	down    error // when set, every token read fails with it
	// paused, when set, is called by FindTokenByHash after it has read
	// the row and before it answers: a lookup caught mid-flight.
	paused func()
}

func newMemStore() *memStore { return &memStore{} }

func (m *memStore) counts() (lookups, touches int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.lookups, m.touches
}

// FindTokenByHash counts the lookup, fails while the store is down, and
// pauses between the read and the answer when asked to.
func (m *memStore) FindTokenByHash(ctx context.Context, hash string) (domain.Token, domain.User, error) {
	m.mu.Lock()
	m.lookups++
	down, paused := m.down, m.paused
	m.mu.Unlock()
	if down != nil {
		return domain.Token{}, domain.User{}, down
	}
	t, u, err := m.UserStore.FindTokenByHash(ctx, hash)
	if paused != nil {
		paused()
	}
	return t, u, err
}

// TouchToken counts the touch.
func (m *memStore) TouchToken(ctx context.Context, id string, usedAt time.Time, exp *time.Time) error {
	m.mu.Lock()
	m.touches++
	m.mu.Unlock()
	return m.UserStore.TouchToken(ctx, id, usedAt, exp)
}

// fakeClock is a clock a test moves.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *fakeClock) Add(d time.Duration) { c.mu.Lock(); defer c.mu.Unlock(); c.now = c.now.Add(d) }

// countingIDs mints ordered ids.
type countingIDs struct {
	mu sync.Mutex
	n  int
}

func (c *countingIDs) NewID() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	return fmt.Sprintf("id%06d", c.n)
}
