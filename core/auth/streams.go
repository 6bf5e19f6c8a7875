package auth

import (
	"context"
	"time"

	"github.com/agents-server/agents-server/core/domain"
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

// noStreams is the closer of a service given none: nothing is open to
// close.
type noStreams struct{}

func (noStreams) CloseToken(string, string, string) int { return 0 }
func (noStreams) CloseUser(string, string) int          { return 0 }

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

// Revalidate is Standing's Revalidate on this service's stores.
func (s *Service) Revalidate(ctx context.Context, p domain.Principal) (domain.Principal, *time.Time, error) {
	return s.standing.Revalidate(ctx, p)
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

// ForgetAll drops every token this replica's cache holds: it may have
// missed another replica's closings (its backplane listener reconnected),
// so none of them is known good. The next use of each reads the store.
func (s *Service) ForgetAll() { s.cache.forgetAll() }
