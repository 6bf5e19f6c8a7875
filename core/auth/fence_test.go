package auth

import (
	"sync/atomic"
	"testing"
)

// switchFence is a CacheFence a test opens and shuts.
type switchFence struct{ open atomic.Bool }

func (f *switchFence) CacheTrusted() bool { return f.open.Load() }

// TestTheCacheAnswersOnlyWhileItsFenceAllows holds Deps.Fence: while the
// fence is shut every use reads the store (what it read still fills the
// cache, and a revoke made meanwhile is seen); once open, the cache
// answers again; and ForgetAll makes the next use of every token read the
// store.
func TestTheCacheAnswersOnlyWhileItsFenceAllows(t *testing.T) {
	e := newCacheEnv(t, 0)
	fence := &switchFence{}
	e.svc.fence = fence

	e.ok(e.pat)
	e.ok(e.pat)
	e.lookups(2)

	fence.open.Store(true)
	e.ok(e.pat)
	e.ok(e.session)
	e.lookups(3) // the pat from the cache filled while shut; the session read
	e.ok(e.session)
	e.lookups(3)

	// Another replica revokes the pat: this one's cache still holds it,
	// and only the fence keeps it from answering.
	if err := e.store.DeleteToken(e.ctx, e.member.User.ID, e.patID); err != nil {
		t.Fatal(err)
	}
	fence.open.Store(false)
	e.refused(e.pat)

	fence.open.Store(true)
	e.svc.ForgetAll()
	e.ok(e.session)
	e.lookups(5)
	e.refused(e.pat)
}

// TestWithoutAFenceTheCacheAlwaysAnswers holds that a service given no
// fence (one process) keeps its cache as before.
func TestWithoutAFenceTheCacheAlwaysAnswers(t *testing.T) {
	e := newCacheEnv(t, 0)
	for range 3 {
		e.ok(e.pat)
	}
	e.lookups(1)
}
