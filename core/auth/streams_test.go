package auth

import (
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/livestreams"
)

// closings records what a stream closer was told.
type closings struct {
	mu  sync.Mutex
	got []string
}

func (c *closings) CloseToken(userID, tokenID, reason string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.got = append(c.got, "token "+userID+"/"+tokenID+": "+reason)
	return 1
}

func (c *closings) CloseUser(userID, reason string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.got = append(c.got, "user "+userID+": "+reason)
	return 1
}

// TestTheStreamCloserGivenAtNewHearsWhatEndsACredential holds the wiring
// the stream registry relies on: a Standing built apart from the service
// (before it, as the registry is) sees a token the service revokes gone,
// and the closer given in Deps is told of the revocation and of a
// disabled account.
func TestTheStreamCloserGivenAtNewHearsWhatEndsACredential(t *testing.T) {
	e := newCacheEnv(t, DefaultTokenCacheTTL)
	standing := NewStanding(e.store, e.store, e.clock)
	closed := &closings{}
	svc, err := New(Deps{Users: e.store, Tokens: e.store, IDs: &countingIDs{}, Clock: e.clock,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Params: cheapPasswords, Streams: closed})
	if err != nil {
		t.Fatal(err)
	}
	pat := domain.Principal{User: e.member.User, TokenID: e.patID}
	if cur, _, err := standing.Revalidate(e.ctx, pat); err != nil || cur.TokenID != e.patID {
		t.Fatalf("the standing token: %+v, %v", cur, err)
	}
	if err := svc.RevokeToken(e.ctx, e.member, e.patID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := standing.Revalidate(e.ctx, pat); errs.CodeOf(err) != errs.Unauthorized {
		t.Fatalf("a revoked token revalidates: %v", err)
	}
	if err := svc.UpdateUser(e.ctx, e.admin, e.member.User.ID, domain.UserPatch{Disabled: new(true)}); err != nil {
		t.Fatal(err)
	}
	host := domain.Principal{User: e.member.User}
	if _, _, err := standing.Revalidate(e.ctx, host); errs.CodeOf(err) != errs.Unauthorized {
		t.Fatalf("a disabled account's host sign-in revalidates: %v", err)
	}
	want := []string{
		"token " + e.member.User.ID + "/" + e.patID + ": " + livestreams.ReasonRevoked,
		"user " + e.member.User.ID + ": " + livestreams.ReasonDisabled,
	}
	if !slices.Equal(closed.got, want) {
		t.Fatalf("closed %q, want %q", closed.got, want)
	}
}
