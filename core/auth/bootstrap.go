package auth

import (
	"context"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
)

// Bootstrap makes sure the bootstrap admin exists and returns the token the
// ready line prints. With fixed (AGENTS_TOKEN) that token becomes the admin's
// only static token; without it any earlier static token is revoked and a
// fresh launch token (a sliding session) is minted, since stored tokens are
// hashes and cannot be printed again.
func (s *Service) Bootstrap(ctx context.Context, fixed string) (string, error) {
	admin, err := s.users.FindBootstrapUser(ctx)
	if errs.Is(err, errs.NotFound) {
		now := s.clock.Now()
		admin = domain.User{ID: s.ids.NewID(), Username: domain.BootstrapUsername, Role: domain.RoleAdmin,
			Bootstrap: true, CreatedAt: now, UpdatedAt: now}
		err = s.users.CreateUser(ctx, admin)
	}
	if err != nil {
		return "", err
	}
	// The admin's static tokens are about to change; no cached one may
	// outlive its row.
	defer s.cache.forgetUser(admin.ID)
	if fixed == "" {
		if err := s.tokens.DeleteStaticTokens(ctx, admin.ID); err != nil {
			return "", err
		}
		token, _, err := s.issue(ctx, admin.ID, domain.TokenLaunch, "sign-in link", nil)
		return token, err
	}
	if len(fixed) < 16 {
		return "", errs.E(errs.Validation, "AGENTS_TOKEN must be at least 16 characters")
	}
	now := s.clock.Now()
	t := domain.Token{ID: s.ids.NewID(), UserID: admin.ID, Kind: domain.TokenStatic, Name: "AGENTS_TOKEN",
		Hash: HashToken(fixed), Hint: "AGENTS_TOKEN", CreatedAt: now, LastUsedAt: now}
	if err := s.tokens.ReplaceStaticTokens(ctx, t); err != nil {
		return "", err
	}
	return fixed, nil
}
