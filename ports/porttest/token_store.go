package porttest

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
)

// The token half of UserStore: tokens live beside their users, as
// auth_tokens beside users.

func storedToken(t domain.Token) domain.Token {
	t.CreatedAt, t.LastUsedAt = storedTime(t.CreatedAt), storedTime(t.LastUsedAt)
	t.ExpiresAt = storedTimePtr(t.ExpiresAt)
	return t
}

// dropTokensLocked deletes a user's tokens; s.mu is held.
func (s *UserStore) dropTokensLocked(userID string) {
	maps.DeleteFunc(s.tokens, func(_ string, t domain.Token) bool { return t.UserID == userID })
}

// hashTakenLocked reports whether any token has hash; s.mu is held.
func (s *UserStore) hashTakenLocked(hash string) bool {
	for _, t := range s.tokens {
		if t.Hash == hash {
			return true
		}
	}
	return false
}

// insertTokenLocked stores t; conflict for a taken id or hash, or a user
// who does not exist (a foreign key in SQL). s.mu is held.
func (s *UserStore) insertTokenLocked(t domain.Token) error {
	if _, taken := s.tokens[t.ID]; taken || s.hashTakenLocked(t.Hash) {
		return errs.E(errs.Conflict, "already exists")
	}
	if _, ok := s.users[t.UserID]; !ok {
		return errs.E(errs.Conflict, "still referenced by other rows")
	}
	if s.tokens == nil {
		s.tokens = map[string]domain.Token{}
	}
	s.tokens[t.ID] = storedToken(t)
	return nil
}

// CreateToken implements ports.TokenStore.
func (s *UserStore) CreateToken(ctx context.Context, t domain.Token) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.insertTokenLocked(t)
}

// FindTokenByHash implements ports.TokenStore.
func (s *UserStore) FindTokenByHash(ctx context.Context, hash string) (domain.Token, domain.User, error) {
	return s.findToken(ctx, func(t domain.Token) bool { return t.Hash == hash })
}

// FindTokenByID implements ports.TokenStore.
func (s *UserStore) FindTokenByID(ctx context.Context, id string) (domain.Token, domain.User, error) {
	return s.findToken(ctx, func(t domain.Token) bool { return t.ID == id })
}

func (s *UserStore) findToken(ctx context.Context, match func(domain.Token) bool) (domain.Token, domain.User, error) {
	if err := ctx.Err(); err != nil {
		return domain.Token{}, domain.User{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range s.tokens {
		if match(t) {
			return storedToken(t), s.users[t.UserID], nil
		}
	}
	return domain.Token{}, domain.User{}, errs.E(errs.NotFound, "token not found")
}

// TouchToken implements ports.TokenStore; a token gone is left gone.
func (s *UserStore) TouchToken(ctx context.Context, id string, usedAt time.Time, expiresAt *time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if t, ok := s.tokens[id]; ok {
		t.LastUsedAt, t.ExpiresAt = usedAt, expiresAt
		s.tokens[id] = storedToken(t)
	}
	return nil
}

// ListTokens implements ports.TokenStore: newest (largest id) first.
func (s *UserStore) ListTokens(ctx context.Context, userID string) ([]domain.Token, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []domain.Token{}
	for _, t := range s.tokens {
		if t.UserID == userID {
			out = append(out, storedToken(t))
		}
	}
	slices.SortFunc(out, func(a, b domain.Token) int { return cmp.Compare(b.ID, a.ID) })
	return out, nil
}

// DeleteToken implements ports.TokenStore.
func (s *UserStore) DeleteToken(ctx context.Context, userID, id string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if t, ok := s.tokens[id]; !ok || t.UserID != userID {
		return errs.E(errs.NotFound, "token not found")
	}
	delete(s.tokens, id)
	return nil
}

// ReplaceStaticTokens implements ports.TokenStore: the user's other static
// tokens go, and t is added unless its hash is stored already.
func (s *UserStore) ReplaceStaticTokens(ctx context.Context, t domain.Token) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	maps.DeleteFunc(s.tokens, func(_ string, x domain.Token) bool {
		return x.UserID == t.UserID && x.Kind == domain.TokenStatic && x.Hash != t.Hash
	})
	if s.hashTakenLocked(t.Hash) {
		return nil
	}
	return s.insertTokenLocked(t)
}

// DeleteStaticTokens implements ports.TokenStore.
func (s *UserStore) DeleteStaticTokens(ctx context.Context, userID string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	maps.DeleteFunc(s.tokens, func(_ string, t domain.Token) bool { return t.UserID == userID && t.Kind == domain.TokenStatic })
	return nil
}

// DeleteExpiredTokens implements ports.TokenStore: expired at or before
// now, compared as stored (milliseconds).
func (s *UserStore) DeleteExpiredTokens(ctx context.Context, now time.Time) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.tokens)
	maps.DeleteFunc(s.tokens, func(_ string, t domain.Token) bool { return t.Expired(storedTime(now)) })
	return n - len(s.tokens), nil
}
