package auth

import (
	"context"
	"crypto/rand"
	"encoding/base64"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
)

// HostIdentity is who the program embedding the workbench says a request
// comes from, after its own sign-in.
type HostIdentity struct {
	// Username names the account; the first request of a new one creates
	// it (a member, or an admin when Admin is set).
	Username string
	// Admin makes a new account an admin. An existing account keeps the
	// role it has: roles are then managed in the workbench.
	Admin bool
}

// HostPrincipal returns the principal of a request the embedding program
// signed in: the account of that username, created on first sight with a
// password nobody knows (so it signs in only through the host). A principal
// of the host carries no token id. Returns unauthorized for a disabled
// account, validation for an unusable username.
func (s *Service) HostPrincipal(ctx context.Context, id HostIdentity) (domain.Principal, error) {
	name := domain.NormalizeUsername(id.Username)
	u, err := s.users.FindUserByUsername(ctx, name)
	if errs.Is(err, errs.NotFound) {
		u, err = s.createHostUser(ctx, name, id.Admin)
		if errs.Is(err, errs.Conflict) { // two first requests at once
			u, err = s.users.FindUserByUsername(ctx, name)
		}
	}
	if err != nil {
		return domain.Principal{}, err
	}
	if u.Disabled {
		return domain.Principal{}, errs.E(errs.Unauthorized, "this account is disabled")
	}
	return domain.Principal{User: u}, nil
}

// createHostUser adds the host's user with a password drawn at random and
// never shown.
func (s *Service) createHostUser(ctx context.Context, name string, admin bool) (domain.User, error) {
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return domain.User{}, errs.Wrap(errs.Internal, err, "draw a password")
	}
	role := domain.RoleMember
	if admin {
		role = domain.RoleAdmin
	}
	u, err := s.addUser(ctx, name, base64.RawURLEncoding.EncodeToString(secret), role)
	if err == nil {
		s.log.Info("created an account for the host's user", "username", u.Username, "role", role)
	}
	return u, err
}

// AuthenticateRequest authenticates a request's credential: its bearer
// token — or, when it brings none and the program embedding the workbench
// signed the request in (WithHostPrincipal), the host's principal. A
// request the host refused (WithHostRefusal) is unauthorized with the
// host's reason. The HTTP API and both sockets sign in through this.
func (s *Service) AuthenticateRequest(ctx context.Context, token string) (domain.Principal, error) {
	if token == "" {
		if p, ok := HostPrincipalFrom(ctx); ok {
			return p, nil
		}
		if reason, ok := HostRefusalFrom(ctx); ok {
			return domain.Principal{}, errs.E(errs.Unauthorized, "not signed in: %s", reason)
		}
	}
	return s.Authenticate(ctx, token)
}

// Recheck says whether the credential a stream opened with still stands:
// its token, or for a principal the host signed in (no token), its account.
func (s *Service) Recheck(ctx context.Context, token string, p domain.Principal) error {
	if token == "" {
		_, _, err := s.Revalidate(ctx, p)
		return err
	}
	_, err := s.Authenticate(ctx, token)
	return err
}

type hostKey struct{}

// WithHostPrincipal marks a request's context as signed in by the host, so
// the HTTP API and the sockets take p without a bearer token.
func WithHostPrincipal(ctx context.Context, p domain.Principal) context.Context {
	return context.WithValue(ctx, hostKey{}, p)
}

// HostPrincipalFrom returns the principal the host signed a request in as.
func HostPrincipalFrom(ctx context.Context) (domain.Principal, bool) {
	p, ok := ctx.Value(hostKey{}).(domain.Principal)
	return p, ok
}

type refusalKey struct{}

// WithHostRefusal marks a request the embedding host did not sign in, with
// its reason: a route that needs a caller refuses it with that reason
// (public routes — the UI's files, webhooks, health — still answer).
func WithHostRefusal(ctx context.Context, reason string) context.Context {
	return context.WithValue(ctx, refusalKey{}, reason)
}

// HostRefusalFrom returns why the host did not sign a request in.
func HostRefusalFrom(ctx context.Context) (string, bool) {
	r, ok := ctx.Value(refusalKey{}).(string)
	return r, ok
}
