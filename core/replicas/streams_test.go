package replicas_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
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
// While hold is set, a forget waits for it: the replica's listener is
// stuck there.
type cache struct {
	mu     sync.Mutex
	forgot []string
	hold   chan struct{}
}

func (c *cache) Forget(userID, tokenID string) { c.record(userID + "/" + tokenID) }

func (c *cache) ForgetAll() { c.record("*") }

func (c *cache) record(what string) {
	c.mu.Lock()
	hold := c.hold
	c.mu.Unlock()
	if hold != nil {
		<-hold
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.forgot = append(c.forgot, what)
}

// stick makes the replica's listener stick at its next forget, until the
// returned release.
func (c *cache) stick() (release func()) {
	hold := make(chan struct{})
	c.mu.Lock()
	c.hold = hold
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		c.hold = nil
		c.mu.Unlock()
		close(hold)
	}
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
		closer := rs["a"].link.Streams(rs["a"].streams)

		if n := closer.CloseToken("ann", "tok-1", "revoked"); n != 2 {
			t.Fatalf("a's closing answered %d, want a's own count", n)
		}
		if n := closer.CloseUser("bob", "disabled"); n != 3 {
			t.Fatalf("a's closing answered %d, want a's own count", n)
		}
		synctest.Wait()
		want := []string{"token ann/tok-1: revoked", "user bob: disabled"}
		for _, name := range []string{"a", "b", "c"} {
			if got := rs[name].streams.log(); !slices.Equal(got, want) {
				t.Errorf("%s closed %v, want %v", name, got, want)
			}
		}
		for _, name := range []string{"b", "c"} {
			if got := rs[name].cache.log(); !slices.Equal(got, []string{"ann/tok-1", "bob/"}) {
				t.Errorf("%s forgot %v", name, got)
			}
		}
		if got := rs["a"].cache.log(); len(got) != 0 {
			t.Errorf("a forgot %v on its own closing; its auth service did that", got)
		}
	})
}
