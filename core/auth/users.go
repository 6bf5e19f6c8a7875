package auth

import (
	"context"

	"github.com/agents-server/agents-server/core/audit"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/livestreams"
)

// ListUsers returns every user, admin only. Returns forbidden.
func (s *Service) ListUsers(ctx context.Context, p domain.Principal) ([]domain.User, error) {
	if err := p.RequireAdmin(); err != nil {
		return nil, err
	}
	return s.users.ListUsers(ctx)
}

// CreateUser adds a user who signs in with password, admin only. role
// defaults to member. The username is stored NFKC-normalized, and it is
// taken when its domain.UsernameKey is (so neither case nor a look-alike
// compatibility spelling makes a second account). Returns forbidden,
// validation, or conflict when the username is taken.
func (s *Service) CreateUser(ctx context.Context, p domain.Principal, username, password string, role domain.Role) (domain.User, error) {
	if err := p.RequireAdmin(); err != nil {
		return domain.User{}, err
	}
	if role == "" {
		role = domain.RoleMember
	}
	if !role.Valid() {
		return domain.User{}, errs.Field("role", "must be admin or member")
	}
	return s.addUser(ctx, username, password, role)
}

// addUser stores a new account: the username NFKC-normalized and checked,
// the password checked and hashed. Returns validation, or conflict when
// the username is taken.
func (s *Service) addUser(ctx context.Context, username, password string, role domain.Role) (domain.User, error) {
	username = domain.NormalizeUsername(username)
	if err := domain.ValidateUsername(username); err != nil {
		return domain.User{}, err
	}
	if err := domain.ValidatePassword(password); err != nil {
		return domain.User{}, err
	}
	hash, err := HashPassword(password, s.params)
	if err != nil {
		return domain.User{}, err
	}
	now := s.clock.Now()
	u := domain.User{ID: s.ids.NewID(), Username: username, Role: role, PasswordHash: hash, CreatedAt: now, UpdatedAt: now}
	actx := audit.Change(ctx, now, "user.create", audit.Object{Kind: "user", ID: u.ID, Name: u.Username}, "username", "role", "password")
	if err := s.users.CreateUser(actx, u); err != nil {
		return domain.User{}, err
	}
	return u, nil
}

// UpdateUser changes a user's role, password or disabled flag, admin only.
// Disabling revokes the user's tokens; disabling or demoting an admin ends
// every stream the user holds open (a demoted admin's streams were opened
// seeing more than a member may). An admin cannot disable themselves, and
// the last active admin and the bootstrap admin cannot be disabled or
// demoted. Returns forbidden, validation, not_found or conflict.
func (s *Service) UpdateUser(ctx context.Context, p domain.Principal, id string, patch domain.UserPatch) error {
	if err := p.RequireAdmin(); err != nil {
		return err
	}
	if patch.Role != nil && !patch.Role.Valid() {
		return errs.Field("role", "must be admin or member")
	}
	var hash string
	if patch.Password != nil {
		if err := domain.ValidatePassword(*patch.Password); err != nil {
			return err
		}
		h, err := HashPassword(*patch.Password, s.params)
		if err != nil {
			return err
		}
		hash = h
	}
	if patch.Disabled != nil && *patch.Disabled && id == p.User.ID {
		return errs.E(errs.Conflict, "you cannot disable your own account")
	}
	now := s.clock.Now()
	var before domain.User
	actx, rec := audit.Stage(ctx, now, "user.update", audit.Object{Kind: "user", ID: id})
	after, err := s.users.UpdateUser(actx, id, func(u *domain.User, otherActiveAdmins int) error {
		before = *u
		rec.ObjectName, rec.Fields = u.Username, audit.Names(patch.Fields(*u))
		if patch.Role != nil {
			u.Role = *patch.Role
		}
		if patch.Disabled != nil {
			u.Disabled = *patch.Disabled
		}
		if patch.Password != nil {
			u.PasswordHash = hash
		}
		u.UpdatedAt = now
		return domain.CheckAdminRemains(before, u, otherActiveAdmins)
	})
	// Any change to the user (disabled, role, password) makes the principal
	// a cached token carries stale; a refused one changes nothing but costs
	// only a read.
	s.cache.forgetUser(id)
	if err != nil {
		return err
	}
	switch {
	case domain.RevokesTokens(before, after):
		s.closeUser(id, livestreams.ReasonDisabled)
	case before.IsAdmin() && !after.IsAdmin():
		s.closeUser(id, livestreams.ReasonRoleChanged)
	}
	return nil
}

// DeleteUser removes a user with their tokens and private configuration,
// admin only: their live work is stopped first (no run of theirs calls a
// model or a tool once the account is gone), then the row goes, then every
// stream they hold open ends. The shared configuration they authored
// passes to the admin deleting them. An admin cannot delete themselves,
// nor the last active admin or the bootstrap admin. Returns forbidden,
// not_found or conflict.
func (s *Service) DeleteUser(ctx context.Context, p domain.Principal, id string) error {
	if err := p.RequireAdmin(); err != nil {
		return err
	}
	if id == p.User.ID {
		return errs.E(errs.Conflict, "you cannot delete your own account")
	}
	// The rules are checked before the work stops, so a refused delete
	// stops nothing; the store checks them again in its transaction.
	u, err := s.users.FindUserByID(ctx, id)
	if err != nil {
		return err
	}
	others, err := s.otherActiveAdmins(ctx, id)
	if err != nil {
		return err
	}
	if err := domain.CheckAdminRemains(u, nil, others); err != nil {
		return err
	}
	if err := s.work.StopUserWork(ctx, id); err != nil {
		return err
	}
	actx := audit.Change(ctx, s.clock.Now(), "user.delete", audit.Object{Kind: "user", ID: id, Name: u.Username})
	err = s.users.DeleteUser(actx, id, p.User.ID, func(u domain.User, otherActiveAdmins int) error {
		return domain.CheckAdminRemains(u, nil, otherActiveAdmins)
	})
	s.cache.forgetUser(id)
	if err != nil {
		return err
	}
	s.closeUser(id, livestreams.ReasonDeleted)
	return nil
}

// otherActiveAdmins counts the active admins other than id.
func (s *Service) otherActiveAdmins(ctx context.Context, id string) (int, error) {
	users, err := s.users.ListUsers(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, u := range users {
		if u.ID != id && u.ActiveAdmin() {
			n++
		}
	}
	return n, nil
}
