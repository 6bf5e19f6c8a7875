package auth

import (
	"context"
	"strconv"
	"strings"
	"unicode"

	"github.com/agents-server/agents-server/core/audit"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/livestreams"
)

// oidcAccount finds the account of the person the claims name: the one
// linked to (issuer, subject); else, on a first sign-in, the local
// account whose username is the verified email when an admin allows
// linking; else a new account with role (member when ""), made with its
// identity in one transaction. A first sign-in of the same person
// completing in parallel (another tab, another replica) wins the link:
// theirs is the account.
func (s *Service) oidcAccount(ctx context.Context, c domain.OIDCClaims, role domain.Role) (domain.User, error) {
	if u, err := s.linkedUser(ctx, c); !errs.Is(err, errs.NotFound) {
		return u, err
	}
	now := s.clock.Now()
	identity := domain.OIDCIdentity{Issuer: c.Issuer, Subject: c.Subject, Email: c.Email, CreatedAt: now}
	u, found, err := s.linkable(ctx, c)
	if err != nil {
		return domain.User{}, err
	}
	if found {
		identity.UserID = u.ID
		err := s.oidc.Store.CreateOIDCIdentity(audit.Change(actingAs(ctx, u), now, "user.link_identity",
			audit.Object{Kind: "user", ID: u.ID, Name: u.Username}, "oidc_identity"), identity)
		if errs.Is(err, errs.Conflict) {
			return s.linkedUser(ctx, c)
		}
		return u, storeDown(err)
	}
	return s.createOIDCUser(ctx, c, role, identity)
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

// linkable is the local account a first sign-in links to: the one named
// by the provider's verified email, when an admin allows linking.
func (s *Service) linkable(ctx context.Context, c domain.OIDCClaims) (domain.User, bool, error) {
	if !c.EmailVerified || c.Email == "" {
		return domain.User{}, false, nil
	}
	link, err := s.oidc.Settings.Bool(ctx, domain.OIDCLinkVerifiedEmailSetting)
	if err != nil || !link {
		return domain.User{}, false, storeDown(err)
	}
	u, err := s.users.FindUserByUsername(ctx, c.Email)
	switch {
	case errs.Is(err, errs.NotFound):
		return domain.User{}, false, nil
	case err != nil:
		return domain.User{}, false, storeDown(err)
	}
	// The bootstrap admin is the recovery account: no provider's word
	// signs it in.
	return u, !u.Bootstrap, nil
}

// createOIDCUser makes a first sign-in's account, with its identity, under
// the first free name; a conflict that is the identity (linked meanwhile
// by a parallel sign-in) hands over that account.
func (s *Service) createOIDCUser(ctx context.Context, c domain.OIDCClaims, role domain.Role, identity domain.OIDCIdentity) (domain.User, error) {
	if role == "" {
		role = domain.RoleMember
	}
	base := oidcUsername(c)
	for n := 1; n <= 50; n++ {
		name := base
		if n > 1 {
			suffix := "-" + strconv.Itoa(n)
			name = truncateRunes(base, domain.MaxUsernameLen-len(suffix)) + suffix
		}
		u := domain.User{ID: s.ids.NewID(), Username: name, Role: role, CreatedAt: identity.CreatedAt, UpdatedAt: identity.CreatedAt}
		identity.UserID = u.ID
		err := s.oidc.Store.CreateOIDCUser(audit.Change(actingAs(ctx, u), identity.CreatedAt, "user.create",
			audit.Object{Kind: "user", ID: u.ID, Name: u.Username}, "username", "role", "oidc_identity"), u, identity)
		if err == nil {
			return u, nil
		}
		if !errs.Is(err, errs.Conflict) {
			return domain.User{}, storeDown(err)
		}
		if linked, err := s.linkedUser(ctx, c); !errs.Is(err, errs.NotFound) {
			return linked, err
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
	actx := audit.Change(actingAs(ctx, u), now, "user.update", audit.Object{Kind: "user", ID: u.ID, Name: u.Username}, "role")
	after, err := s.users.UpdateUser(actx, u.ID, func(x *domain.User, others int) error {
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
