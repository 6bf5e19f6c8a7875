package auth

import (
	"context"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
)

// StreamCloser ends the live streams (event streams, sockets) opened with a
// credential. A stream outlives the request that authenticated it, so the
// service tells the closer about every change that invalidates one, once
// that change has committed.
type StreamCloser interface {
	// CloseToken ends the streams userID opened with tokenID.
	CloseToken(userID, tokenID, reason string) int
	// CloseUser ends every stream of userID.
	CloseUser(userID, reason string) int
}

// UserWork stops what a user has running before their account is deleted:
// their sessions go with the account, and no run of theirs may go on
// calling a model or a tool after that.
type UserWork interface {
	// StopUserWork cancels the user's live work and waits until it has
	// stopped, or ctx ends (an error then).
	StopUserWork(ctx context.Context, userID string) error
}

// noWork is the UserWork of a service given none: nothing runs.
type noWork struct{}

func (noWork) StopUserWork(context.Context, string) error { return nil }

// noStreams is the closer until one is set: nothing is open to close.
type noStreams struct{}

func (noStreams) CloseToken(string, string, string) int { return 0 }
func (noStreams) CloseUser(string, string) int          { return 0 }

// CloseStreamsWith sets who ends live streams when a credential stops being
// valid. The composition root calls it once, before serving. (A setter,
// not a dependency of New: the stream registry asks this service whether
// a stream's credential still stands, so one of the two is built first.)
func (s *Service) CloseStreamsWith(c StreamCloser) { s.streams = c }

// closeToken and closeUser tell the closer, and log what it ended: a
// stream cut off is worth a line in an audit.
func (s *Service) closeToken(userID, tokenID, reason string) {
	if n := s.streams.CloseToken(userID, tokenID, reason); n > 0 {
		s.log.Info("closed open streams", "user_id", userID, "token_id", tokenID, "reason", reason, "count", n)
	}
}

func (s *Service) closeUser(userID, reason string) {
	if n := s.streams.CloseUser(userID, reason); n > 0 {
		s.log.Info("closed open streams", "user_id", userID, "reason", reason, "count", n)
	}
}

// Revalidate returns whom a token authenticates now and when it expires
// (nil: never), by its id, without counting as a use: a stream holding the
// token re-checks it with this. A principal the embedding host signed in
// (no token id) is re-read by its account. Returns unauthorized when the token is
// gone or expired or its user disabled, unavailable when the store cannot
// answer.
func (s *Service) Revalidate(ctx context.Context, p domain.Principal) (domain.Principal, *time.Time, error) {
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

// Forget drops what this replica's token cache holds of a credential
// another replica changed: one token (tokenID set) or every token of
// userID. The next use reads the store.
func (s *Service) Forget(userID, tokenID string) {
	if tokenID != "" {
		s.cache.forgetToken(tokenID)
		return
	}
	s.cache.forgetUser(userID)
}
