package ports

import (
	"context"

	"github.com/agents-server/agents-server/core/domain"
)

// UserStore keeps the users who may sign in.
type UserStore interface {
	// CreateUser inserts u. Returns conflict when the username is taken:
	// another user's name has the same domain.UsernameKey.
	CreateUser(ctx context.Context, u domain.User) error
	// FindUserByID returns not_found when no user has that id.
	FindUserByID(ctx context.Context, id string) (domain.User, error)
	// FindUserByUsername matches by domain.UsernameKey (case and
	// compatibility spellings fold together); not_found when absent.
	FindUserByUsername(ctx context.Context, username string) (domain.User, error)
	// FindBootstrapUser returns the admin created on first start, or not_found.
	FindBootstrapUser(ctx context.Context) (domain.User, error)
	// ListUsers returns every user, oldest first.
	ListUsers(ctx context.Context) ([]domain.User, error)
	// UpdateUser runs change on the stored user inside one write transaction,
	// passing the number of OTHER active admins so last-admin rules hold under
	// concurrency, and stores the result. When the change disables the user
	// (domain.RevokesTokens) their tokens are deleted in the same transaction.
	// Returns not_found, or whatever change returns.
	UpdateUser(ctx context.Context, id string, change func(u *domain.User, otherActiveAdmins int) error) (domain.User, error)
	// DeleteUser runs check inside one write transaction and, when it passes,
	// deletes the user with their tokens and private configuration, and hands
	// the shared (global) configuration they authored to heirID, so nothing
	// others rely on disappears. Returns not_found, or check's error.
	DeleteUser(ctx context.Context, id, heirID string, check func(u domain.User, otherActiveAdmins int) error) error
}
