package replicas_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/agents-server/agents-server/core/auth"
)

// streams is a replica's open streams as the auth service sees them: it
// records each closing and says how many it closed.
type streams struct {
	mu     sync.Mutex
	closed []string
}

func (s *streams) CloseToken(userID, tokenID, reason string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = append(s.closed, "token "+userID+"/"+tokenID+": "+reason)
	return 2
}

func (s *streams) CloseUser(userID, reason string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = append(s.closed, "user "+userID+": "+reason)
	return 3
}

func (s *streams) log() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.closed)
}

// cache is a replica's cached credentials: it records what it forgets.
type cache struct {
	mu     sync.Mutex
	forgot []string
}

func (c *cache) Forget(userID, tokenID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.forgot = append(c.forgot, userID+"/"+tokenID)
}

func (c *cache) log() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.forgot)
}

// TestAClosedCredentialStopsWorkingOnEveryReplica holds Streams: a
// closing closes this replica's streams (its count is the answer) and is
// relayed, so every other replica forgets the cached credential and
// closes its streams too — a token's, or all of a user's.
func TestAClosedCredentialStopsWorkingOnEveryReplica(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		rs := cluster(t, ctx, "a", "b", "c")
		local := map[string]*streams{}
		forgot := map[string]*cache{}
		closers := map[string]auth.StreamCloser{}
		for _, name := range []string{"a", "b"} {
			local[name], forgot[name] = &streams{}, &cache{}
			closers[name] = rs[name].link.Streams(local[name], forgot[name])
		}
		// c never set its streams up: a closing it hears is nothing to it.

		if n := closers["a"].CloseToken("ann", "tok-1", "revoked"); n != 2 {
			t.Fatalf("a's closing answered %d, want a's own count", n)
		}
		if n := closers["a"].CloseUser("bob", "disabled"); n != 3 {
			t.Fatalf("a's closing answered %d, want a's own count", n)
		}
		synctest.Wait()
		want := []string{"token ann/tok-1: revoked", "user bob: disabled"}
		for _, name := range []string{"a", "b"} {
			if got := local[name].log(); !slices.Equal(got, want) {
				t.Errorf("%s closed %v, want %v", name, got, want)
			}
		}
		if got := forgot["b"].log(); !slices.Equal(got, []string{"ann/tok-1", "bob/"}) {
			t.Errorf("b forgot %v", got)
		}
		if got := forgot["a"].log(); len(got) != 0 {
			t.Errorf("a forgot %v on its own closing; its auth service did that", got)
		}
	})
}
