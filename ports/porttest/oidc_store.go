package porttest

import (
	"context"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
)

// The single sign-on half of UserStore: identities live beside their
// users (and go with them), attempts beside both, as oidc_identities and
// oidc_attempts beside users.

// InsertOIDCAttempt implements ports.OIDCStore.
func (s *UserStore) InsertOIDCAttempt(ctx context.Context, a domain.OIDCAttempt, now time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for st, x := range s.attempts {
		if !x.ExpiresAt.After(now) {
			delete(s.attempts, st)
		}
	}
	if _, ok := s.attempts[a.State]; ok {
		return errs.E(errs.Conflict, "the sign-in state is taken")
	}
	if s.attempts == nil {
		s.attempts = map[string]domain.OIDCAttempt{}
	}
	a.ExpiresAt = storedTime(a.ExpiresAt)
	s.attempts[a.State] = a
	return nil
}

// TakeOIDCAttempt implements ports.OIDCStore.
func (s *UserStore) TakeOIDCAttempt(ctx context.Context, state string, now time.Time) (domain.OIDCAttempt, error) {
	if err := ctx.Err(); err != nil {
		return domain.OIDCAttempt{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.attempts[state]
	delete(s.attempts, state)
	if !ok || !a.ExpiresAt.After(now) {
		return domain.OIDCAttempt{}, errs.E(errs.NotFound, "sign-in attempt not found")
	}
	return a, nil
}

// FindOIDCIdentity implements ports.OIDCStore.
func (s *UserStore) FindOIDCIdentity(ctx context.Context, issuer, subject string) (domain.OIDCIdentity, error) {
	if err := ctx.Err(); err != nil {
		return domain.OIDCIdentity{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	id, ok := s.identities[[2]string{issuer, subject}]
	if !ok {
		return domain.OIDCIdentity{}, errs.E(errs.NotFound, "identity not found")
	}
	return id, nil
}

// CreateOIDCIdentity implements ports.OIDCStore.
func (s *UserStore) CreateOIDCIdentity(ctx context.Context, id domain.OIDCIdentity) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.linkLocked(id)
}

// CreateOIDCUser implements ports.OIDCStore: both or neither.
func (s *UserStore) CreateOIDCUser(ctx context.Context, u domain.User, id domain.OIDCIdentity) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.identities[[2]string{id.Issuer, id.Subject}]; ok {
		return errs.E(errs.Conflict, "the identity is linked already")
	}
	if err := s.createUserLocked(u); err != nil {
		return err
	}
	return s.linkLocked(id)
}

func (s *UserStore) linkLocked(id domain.OIDCIdentity) error {
	key := [2]string{id.Issuer, id.Subject}
	if _, ok := s.identities[key]; ok {
		return errs.E(errs.Conflict, "the identity is linked already")
	}
	if _, ok := s.users[id.UserID]; !ok {
		return errs.E(errs.Conflict, "no such user")
	}
	if s.identities == nil {
		s.identities = map[[2]string]domain.OIDCIdentity{}
	}
	id.CreatedAt = storedTime(id.CreatedAt)
	s.identities[key] = id
	return nil
}
