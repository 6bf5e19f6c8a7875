package replicas

import (
	"sync"
	"time"
)

// Standing is a replica's hold on the roll: when the store last took its
// beat. Two rules follow from it, so that a database outage never looks
// like a replica's death:
//
//   - a replica whose beats have gone untaken for Timings.Fence — before
//     the others may count it gone (Timings.Gone) — is fenced: it stops
//     its runs itself, and starts nothing more, until a beat is taken
//     again (the store's fence, runs' HoldRun, refuses what a run taken
//     over meanwhile would still write);
//   - a replica judges no other gone until its own beats have been taken
//     for Timings.Gone: after an outage every live replica first gets the
//     time to beat again.
//
// On a store nobody shares (SQLite) nobody takes anything over: a lone
// replica is never fenced and judges nobody.
type Standing struct {
	times  Timings
	shared bool

	mu      sync.Mutex
	lastOK  time.Time // the last beat the store took (zero: none yet)
	healthy time.Time // since when every beat was taken (zero: the last failed)
}

// NewStanding returns the standing of a replica whose roll's timings
// derive from bound (0: DefaultFailoverAfter); shared says whether
// other replicas may share the store. It keeps the process's own time
// (monotonic), not the workbench's clock: whether a beat went untaken is
// a fact about this process, which a clock set forward (a test's, or an
// embedder's) must not fake.
func NewStanding(shared bool, bound time.Duration) *Standing {
	if bound <= 0 {
		bound = DefaultFailoverAfter
	}
	return &Standing{times: TimingsFor(bound), shared: shared}
}

// beat records a beat the store took (ok) or refused, now.
func (s *Standing) beat(ok bool) {
	at := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if !ok {
		s.healthy = time.Time{}
		return
	}
	s.lastOK = at
	if s.healthy.IsZero() {
		s.healthy = at
	}
}

// Fenced reports whether this replica's beats have gone untaken for the
// fence interval: its runs must stop, and none may start.
func (s *Standing) Fenced() bool {
	if !s.shared {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.lastOK.IsZero() && time.Since(s.lastOK) > s.times.Fence
}

// judging reports whether this replica may count others gone: its own
// beats have been taken for the gone interval.
func (s *Standing) judging() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.healthy.IsZero() && time.Since(s.healthy) >= s.times.Gone
}
