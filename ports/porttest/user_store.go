package porttest

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"sync"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// UserStore is an in-memory ports.UserStore and ports.TokenStore: a
// disabling update revokes the user's tokens and a delete takes them
// along, as in the SQL store; a delete has no configuration to hand over
// (the SQL store's other tables). Every method is atomic under one lock.
// The zero value is empty and ready.
type UserStore struct {
	mu     sync.Mutex
	users  map[string]domain.User
	tokens map[string]domain.Token // by id
	// The single sign-on half (oidc_store.go).
	identities map[[2]string]domain.OIDCIdentity // by (issuer, subject)
	attempts   map[string]domain.OIDCAttempt     // by state
}

var (
	_ ports.UserStore  = (*UserStore)(nil)
	_ ports.TokenStore = (*UserStore)(nil)
	_ ports.OIDCStore  = (*UserStore)(nil)
)

func storedUser(u domain.User) domain.User {
	u.CreatedAt, u.UpdatedAt = storedTime(u.CreatedAt), storedTime(u.UpdatedAt)
	return u
}

// CreateUser implements ports.UserStore: conflict when the id or the
// username's key is taken, or for a second bootstrap user.
func (s *UserStore) CreateUser(ctx context.Context, u domain.User) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.createUserLocked(u)
}

func (s *UserStore) createUserLocked(u domain.User) error {
	for _, x := range s.users {
		if x.ID == u.ID || domain.UsernameKey(x.Username) == domain.UsernameKey(u.Username) {
			return errs.E(errs.Conflict, "the username %q is taken", u.Username)
		}
		if x.Bootstrap && u.Bootstrap {
			return errs.E(errs.Conflict, "a bootstrap admin exists already")
		}
	}
	if s.users == nil {
		s.users = map[string]domain.User{}
	}
	s.users[u.ID] = storedUser(u)
	return nil
}

// FindUserByID implements ports.UserStore.
func (s *UserStore) FindUserByID(ctx context.Context, id string) (domain.User, error) {
	return s.findWhere(ctx, func(u domain.User) bool { return u.ID == id })
}

// FindUserByUsername implements ports.UserStore.
func (s *UserStore) FindUserByUsername(ctx context.Context, username string) (domain.User, error) {
	key := domain.UsernameKey(username)
	return s.findWhere(ctx, func(u domain.User) bool { return domain.UsernameKey(u.Username) == key })
}

// FindBootstrapUser implements ports.UserStore.
func (s *UserStore) FindBootstrapUser(ctx context.Context) (domain.User, error) {
	return s.findWhere(ctx, func(u domain.User) bool { return u.Bootstrap })
}

func (s *UserStore) findWhere(ctx context.Context, match func(domain.User) bool) (domain.User, error) {
	if err := ctx.Err(); err != nil {
		return domain.User{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, u := range s.users {
		if match(u) {
			return u, nil
		}
	}
	return domain.User{}, errs.E(errs.NotFound, "user not found")
}

// ListUsers implements ports.UserStore: by id (ids are minted in time
// order), as the SQL store lists them.
func (s *UserStore) ListUsers(ctx context.Context) ([]domain.User, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := slices.AppendSeq([]domain.User{}, maps.Values(s.users))
	slices.SortFunc(out, func(a, b domain.User) int { return cmp.Compare(a.ID, b.ID) })
	return out, nil
}

// otherActiveAdminsLocked counts the enabled admins but id; s.mu is held.
func (s *UserStore) otherActiveAdminsLocked(id string) int {
	n := 0
	for _, u := range s.users {
		if u.ID != id && u.Role == domain.RoleAdmin && !u.Disabled {
			n++
		}
	}
	return n
}

// UpdateUser implements ports.UserStore: it stores the password, role,
// disabled flag and update time the change leaves (no other column, as the
// SQL store) and returns the user as the change left it.
func (s *UserStore) UpdateUser(ctx context.Context, id string, change func(u *domain.User, otherActiveAdmins int) error) (domain.User, error) {
	if err := ctx.Err(); err != nil {
		return domain.User{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	u, ok := s.users[id]
	if !ok {
		return domain.User{}, errs.E(errs.NotFound, "user not found")
	}
	after := u
	if err := change(&after, s.otherActiveAdminsLocked(id)); err != nil {
		return domain.User{}, err
	}
	u.PasswordHash, u.Role, u.Disabled, u.UpdatedAt = after.PasswordHash, after.Role, after.Disabled, after.UpdatedAt
	if domain.RevokesTokens(s.users[id], u) {
		s.dropTokensLocked(id)
	}
	s.users[id] = storedUser(u)
	return after, nil
}

// DeleteUser implements ports.UserStore (the user goes with their tokens;
// there is no configuration here to hand to heirID).
func (s *UserStore) DeleteUser(ctx context.Context, id, _ string, check func(u domain.User, otherActiveAdmins int) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	u, ok := s.users[id]
	if !ok {
		return errs.E(errs.NotFound, "user not found")
	}
	if err := check(u, s.otherActiveAdminsLocked(id)); err != nil {
		return err
	}
	delete(s.users, id)
	s.dropTokensLocked(id)
	maps.DeleteFunc(s.identities, func(_ [2]string, x domain.OIDCIdentity) bool { return x.UserID == id })
	return nil
}
