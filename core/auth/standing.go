package auth

import (
	"context"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// Standing re-reads from the store whether a credential still stands. It
// is its own value, not the Service's, so the stream registry (which asks
// it) is built before the Service (which closes the registry's streams).
// It reads the store every time: no cache of the Service's is involved.
type Standing struct {
	users  ports.UserStore
	tokens ports.TokenStore
	clock  ports.Clock
}

// NewStanding returns the check over the user and token stores.
func NewStanding(users ports.UserStore, tokens ports.TokenStore, clock ports.Clock) Standing {
	return Standing{users: users, tokens: tokens, clock: clock}
}

// Revalidate returns whom a token authenticates now and when it expires
// (nil: never), by its id, without counting as a use: a stream holding the
// token re-checks it with this. A principal the embedding host signed in
// (no token id) is re-read by its account. Returns unauthorized when the
// token is gone or expired or its user disabled, unavailable when the
// store cannot answer.
func (s Standing) Revalidate(ctx context.Context, p domain.Principal) (domain.Principal, *time.Time, error) {
	if p.TokenID == "" && p.User.ID != "" {
		// Signed in by the embedding host: the account is the credential.
		u, err := s.users.FindUserByID(ctx, p.User.ID)
		if errs.Is(err, errs.NotFound) || (err == nil && u.Disabled) {
			return domain.Principal{}, nil, errBadToken
		}
		if err != nil {
			return domain.Principal{}, nil, storeDown(err)
		}
		return domain.Principal{User: u}, nil, nil
	}
	t, u, err := s.tokens.FindTokenByID(ctx, p.TokenID)
	if errs.Is(err, errs.NotFound) {
		return domain.Principal{}, nil, errBadToken
	}
	if err != nil {
		return domain.Principal{}, nil, storeDown(err)
	}
	if t.Expired(s.clock.Now()) || u.Disabled {
		return domain.Principal{}, nil, errBadToken
	}
	return domain.Principal{User: u, TokenID: t.ID}, t.ExpiresAt, nil
}
