package auth

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
)

// memStore is an in-memory UserStore and TokenStore with the sqlite
// store's rules (disabling revokes tokens, deleting takes them along), that
// counts the token reads the cache is meant to save.
type memStore struct {
	mu     sync.Mutex
	users  map[string]domain.User
	tokens map[string]domain.Token // by id

	lookups int   // FindTokenByHash calls that reached the store
	touches int   // TouchToken calls
	down    error // when set, every token read fails with it
	// paused, when set, is called by FindTokenByHash after it has read
	// the row and before it answers: a lookup caught mid-flight.
	paused func()
}

func newMemStore() *memStore {
	return &memStore{users: map[string]domain.User{}, tokens: map[string]domain.Token{}}
}

func (m *memStore) counts() (lookups, touches int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.lookups, m.touches
}

func notFoundErr(what string) error { return errs.E(errs.NotFound, "%s not found", what) }

func (m *memStore) CreateUser(_ context.Context, u domain.User) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, x := range m.users {
		if domain.UsernameKey(x.Username) == domain.UsernameKey(u.Username) {
			return errs.E(errs.Conflict, "username %q is taken", u.Username)
		}
	}
	m.users[u.ID] = u
	return nil
}

func (m *memStore) FindUserByID(_ context.Context, id string) (domain.User, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	u, ok := m.users[id]
	if !ok {
		return u, notFoundErr("user")
	}
	return u, nil
}

func (m *memStore) FindUserByUsername(_ context.Context, name string) (domain.User, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, u := range m.users {
		if domain.UsernameKey(u.Username) == domain.UsernameKey(name) {
			return u, nil
		}
	}
	return domain.User{}, notFoundErr("user")
}

func (m *memStore) FindBootstrapUser(_ context.Context) (domain.User, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, u := range m.users {
		if u.Bootstrap {
			return u, nil
		}
	}
	return domain.User{}, notFoundErr("user")
}

func (m *memStore) ListUsers(_ context.Context) ([]domain.User, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]domain.User, 0, len(m.users))
	for _, u := range m.users {
		out = append(out, u)
	}
	slices.SortFunc(out, func(a, b domain.User) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// othersLocked counts the active admins other than id.
func (m *memStore) othersLocked(id string) int {
	n := 0
	for _, u := range m.users {
		if u.ID != id && u.ActiveAdmin() {
			n++
		}
	}
	return n
}

func (m *memStore) dropTokensLocked(userID string) {
	for id, t := range m.tokens {
		if t.UserID == userID {
			delete(m.tokens, id)
		}
	}
}

func (m *memStore) UpdateUser(_ context.Context, id string, change func(*domain.User, int) error) (domain.User, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	before, ok := m.users[id]
	if !ok {
		return before, notFoundErr("user")
	}
	after := before
	if err := change(&after, m.othersLocked(id)); err != nil {
		return domain.User{}, err
	}
	m.users[id] = after
	if domain.RevokesTokens(before, after) {
		m.dropTokensLocked(id)
	}
	return after, nil
}

func (m *memStore) DeleteUser(_ context.Context, id, _ string, check func(domain.User, int) error) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	u, ok := m.users[id]
	if !ok {
		return notFoundErr("user")
	}
	if err := check(u, m.othersLocked(id)); err != nil {
		return err
	}
	delete(m.users, id)
	m.dropTokensLocked(id)
	return nil
}

func (m *memStore) CreateToken(_ context.Context, t domain.Token) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, x := range m.tokens {
		if x.Hash == t.Hash {
			return errs.E(errs.Conflict, "already exists")
		}
	}
	m.tokens[t.ID] = t
	return nil
}

func (m *memStore) FindTokenByHash(_ context.Context, hash string) (domain.Token, domain.User, error) {
	m.mu.Lock()
	m.lookups++
	if m.down != nil {
		err := m.down
		m.mu.Unlock()
		return domain.Token{}, domain.User{}, err
	}
	var t domain.Token
	var u domain.User
	found := false
	for _, x := range m.tokens {
		if x.Hash == hash {
			t, u, found = x, m.users[x.UserID], true
		}
	}
	paused := m.paused
	m.mu.Unlock()
	if paused != nil {
		paused()
	}
	if !found {
		return t, u, notFoundErr("token")
	}
	return t, u, nil
}

func (m *memStore) FindTokenByID(_ context.Context, id string) (domain.Token, domain.User, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.tokens[id]
	if !ok {
		return t, domain.User{}, notFoundErr("token")
	}
	return t, m.users[t.UserID], nil
}

func (m *memStore) TouchToken(_ context.Context, id string, usedAt time.Time, exp *time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.touches++
	if t, ok := m.tokens[id]; ok {
		t.LastUsedAt, t.ExpiresAt = usedAt, exp
		m.tokens[id] = t
	}
	return nil
}

func (m *memStore) ListTokens(_ context.Context, userID string) ([]domain.Token, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := []domain.Token{}
	for _, t := range m.tokens {
		if t.UserID == userID {
			out = append(out, t)
		}
	}
	slices.SortFunc(out, func(a, b domain.Token) int { return strings.Compare(b.ID, a.ID) })
	return out, nil
}

func (m *memStore) DeleteToken(_ context.Context, userID, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if t, ok := m.tokens[id]; !ok || t.UserID != userID {
		return notFoundErr("token")
	}
	delete(m.tokens, id)
	return nil
}

func (m *memStore) ReplaceStaticTokens(_ context.Context, t domain.Token) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	kept := false
	for id, x := range m.tokens {
		switch {
		case x.Hash == t.Hash:
			kept = true
		case x.UserID == t.UserID && x.Kind == domain.TokenStatic:
			delete(m.tokens, id)
		}
	}
	if !kept {
		m.tokens[t.ID] = t
	}
	return nil
}

func (m *memStore) DeleteStaticTokens(_ context.Context, userID string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for id, x := range m.tokens {
		if x.UserID == userID && x.Kind == domain.TokenStatic {
			delete(m.tokens, id)
		}
	}
	return nil
}

func (m *memStore) DeleteExpiredTokens(_ context.Context, now time.Time) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for id, t := range m.tokens {
		if t.Expired(now) {
			delete(m.tokens, id)
			n++
		}
	}
	return n, nil
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
