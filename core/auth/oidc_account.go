package auth

import (
	"context"
	"strconv"
	"strings"
	"unicode"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/livestreams"
)

// oidcAccount finds the account of the person the claims name: the one
// linked to (issuer, subject); else, on a first sign-in, the local
// account whose username is the verified email when an admin allows
// linking; else a new account with role (member when "").
func (s *Service) oidcAccount(ctx context.Context, c domain.OIDCClaims, role domain.Role) (domain.User, error) {
	if u, err := s.linkedUser(ctx, c); !errs.Is(err, errs.NotFound) {
		return u, err
	}
	u, err := s.linkOrCreate(ctx, c, role)
	if err != nil {
		return domain.User{}, err
	}
	err = s.oidc.Store.CreateOIDCIdentity(ctx, domain.OIDCIdentity{Issuer: c.Issuer, Subject: c.Subject, UserID: u.ID,
		Email: c.Email, CreatedAt: s.clock.Now()})
	if errs.Is(err, errs.Conflict) {
		// The same person's first sign-in completed in parallel (another
		// tab, another replica): theirs is the account.
		return s.linkedUser(ctx, c)
	}
	return u, storeDown(err)
}

// linkedUser is the user (issuer, subject) is linked to, or not_found.
func (s *Service) linkedUser(ctx context.Context, c domain.OIDCClaims) (domain.User, error) {
	id, err := s.oidc.Store.FindOIDCIdentity(ctx, c.Issuer, c.Subject)
	if err != nil {
		if errs.Is(err, errs.NotFound) {
			return domain.User{}, err
		}
		return domain.User{}, storeDown(err)
	}
	u, err := s.users.FindUserByID(ctx, id.UserID)
	if err != nil {
		return domain.User{}, storeDown(err)
	}
	return u, nil
}

// linkOrCreate is a first sign-in's account.
func (s *Service) linkOrCreate(ctx context.Context, c domain.OIDCClaims, role domain.Role) (domain.User, error) {
	if c.EmailVerified && c.Email != "" {
		link, err := s.oidc.Settings.Bool(ctx, domain.OIDCLinkVerifiedEmailSetting)
		if err != nil {
			return domain.User{}, storeDown(err)
		}
		if link {
			u, err := s.users.FindUserByUsername(ctx, c.Email)
			if err == nil && !u.Bootstrap {
				// The bootstrap admin is the recovery account: no
				// provider's word signs it in.
				return u, nil
			}
			if err != nil && !errs.Is(err, errs.NotFound) {
				return domain.User{}, storeDown(err)
			}
		}
	}
	if role == "" {
		role = domain.RoleMember
	}
	base := oidcUsername(c)
	now := s.clock.Now()
	for n := 1; n <= 50; n++ {
		name := base
		if n > 1 {
			suffix := "-" + strconv.Itoa(n)
			name = truncateRunes(base, domain.MaxUsernameLen-len(suffix)) + suffix
		}
		u := domain.User{ID: s.ids.NewID(), Username: name, Role: role, CreatedAt: now, UpdatedAt: now}
		err := s.users.CreateUser(ctx, u)
		if err == nil {
			return u, nil
		}
		if !errs.Is(err, errs.Conflict) {
			return domain.User{}, storeDown(err)
		}
	}
	return domain.User{}, refuse(domain.RefusedAccount, "no free username was found for you: ask an admin to make your account")
}

// oidcUsername is a new account's name: the preferred username, else the
// email, else the subject, kept to the characters a username may hold.
func oidcUsername(c domain.OIDCClaims) string {
	for _, v := range []string{c.PreferredUsername, c.Email, "user-" + c.Subject} {
		name := strings.Map(func(r rune) rune {
			if unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("._-@", r) {
				return r
			}
			return '-'
		}, domain.NormalizeUsername(strings.TrimSpace(v)))
		name = strings.Trim(truncateRunes(name, domain.MaxUsernameLen), "-")
		if name != "" && domain.ValidateUsername(name) == nil {
			return name
		}
	}
	return "user"
}

func truncateRunes(s string, n int) string {
	r := []rune(s)
	if len(r) > n {
		return string(r[:n])
	}
	return s
}

// applyRole gives u the role the groups claim maps to. The rules of an
// admin's change hold (the bootstrap admin and the last active admin are
// never demoted): a refused change keeps the role, and the sign-in goes
// on.
func (s *Service) applyRole(ctx context.Context, u domain.User, role domain.Role) domain.User {
	now := s.clock.Now()
	after, err := s.users.UpdateUser(ctx, u.ID, func(x *domain.User, others int) error {
		before := *x
		x.Role, x.UpdatedAt = role, now
		return domain.CheckAdminRemains(before, x, others)
	})
	s.cache.forgetUser(u.ID)
	if err != nil {
		s.log.WarnContext(ctx, "single sign-on kept the account's role", "user_id", u.ID, "role", u.Role, "groups_role", role, "err", err)
		return u
	}
	if u.IsAdmin() && !after.IsAdmin() {
		s.closeUser(u.ID, livestreams.ReasonRoleChanged)
	}
	return after
}
