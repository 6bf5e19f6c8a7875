package ports

import (
	"context"
	"time"

	"github.com/agents-server/agents-server/core/domain"
)

// TokenStore keeps bearer tokens as hashes.
type TokenStore interface {
	// CreateToken inserts t. Returns conflict on a duplicate hash.
	CreateToken(ctx context.Context, t domain.Token) error
	// FindTokenByHash returns the token and its user; not_found when absent.
	FindTokenByHash(ctx context.Context, hash string) (domain.Token, domain.User, error)
	// FindTokenByID returns the token and its user, for re-checking a
	// credential a live stream holds; not_found when absent.
	FindTokenByID(ctx context.Context, id string) (domain.Token, domain.User, error)
	// TouchToken records a use and, for sliding tokens, the new expiry.
	TouchToken(ctx context.Context, id string, usedAt time.Time, expiresAt *time.Time) error
	// ListTokens returns a user's tokens, newest first.
	ListTokens(ctx context.Context, userID string) ([]domain.Token, error)
	// DeleteToken revokes one of userID's tokens; not_found when the user has
	// no token with that id.
	DeleteToken(ctx context.Context, userID, id string) error
	// ReplaceStaticTokens makes t the user's only static token, in one
	// transaction, keeping the row when its hash is already stored.
	ReplaceStaticTokens(ctx context.Context, t domain.Token) error
	// DeleteStaticTokens revokes a user's static tokens (AGENTS_TOKEN unset).
	DeleteStaticTokens(ctx context.Context, userID string) error
	// DeleteExpiredTokens removes tokens expired at now and says how many.
	DeleteExpiredTokens(ctx context.Context, now time.Time) (int, error)
}
