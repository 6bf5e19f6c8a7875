package hub

import (
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/agents-server/agents-server/core/errs"
)

// slot is what holds a session: a run, or a hold for a write that must not
// overlap one. freed is closed when it lets go, so waiters block on it
// rather than poll.
type slot struct {
	id    string
	freed chan struct{}
}

// holdPrefix marks the slot ids of holds, which have no event stream.
const holdPrefix = "hold:"

var holdSeq atomic.Int64

// Claim reserves a session for a new run: one live run per session. Returns
// conflict (session busy) or unavailable while draining.
func (h *Hub) Claim(sessionID, runID, ownerID string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.sweepLocked()
	if h.draining {
		return errs.E(errs.Unavailable, "the server is shutting down; retry shortly")
	}
	if err := h.refuseBusyLocked(sessionID); err != nil {
		return err
	}
	h.bySession[sessionID] = slot{id: runID, freed: make(chan struct{})}
	if _, ok := h.runs[runID]; !ok {
		h.runs[runID] = &stream{id: runID, sessionID: sessionID, ownerID: ownerID, ring: newRing(h.opts.RingSize),
			subs: map[*Subscription]struct{}{}}
	}
	return nil
}

// Hold takes a session's slot for a change that must not overlap a run (a
// branch move, a delete): no run starts on the session until release is
// called. Returns conflict while a run (or another hold) has it.
func (h *Hub) Hold(sessionID string) (release func(), err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.refuseBusyLocked(sessionID); err != nil {
		return nil, err
	}
	id := holdPrefix + strconv.FormatInt(holdSeq.Add(1), 10)
	h.bySession[sessionID] = slot{id: id, freed: make(chan struct{})}
	return func() { h.Release(sessionID, id) }, nil
}

func (h *Hub) refuseBusyLocked(sessionID string) error {
	live, busy := h.holderLocked(sessionID)
	switch {
	case !busy:
		return nil
	case strings.HasPrefix(live, holdPrefix):
		return errs.E(errs.Conflict, "the session is being changed; retry shortly")
	}
	return errs.E(errs.Conflict, "the session already has an active run (%s)", live)
}

// Release frees the session slot a run (or hold) held, waking whoever
// waits for it; the run's stream stays for replay. Releasing a slot that
// has moved on to another run does nothing.
func (h *Hub) Release(sessionID, id string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if sl, ok := h.bySession[sessionID]; ok && sl.id == id {
		delete(h.bySession, sessionID)
		close(sl.freed)
	}
}

// Busy reports the run (or hold) in a session's slot, if any.
func (h *Hub) Busy(sessionID string) (string, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.holderLocked(sessionID)
}

// Freed returns a channel closed once id no longer holds sessionID's slot:
// it released it, or (a run) its final event is out. It is already closed
// when id does not hold the slot now.
func (h *Hub) Freed(sessionID, id string) <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	if sl, ok := h.bySession[sessionID]; ok && sl.id == id {
		return sl.freed
	}
	done := make(chan struct{})
	close(done)
	return done
}

// holderLocked is the run (or hold) in a session's slot. A run whose final
// event is out no longer holds it (Publish releases it), so whoever saw
// run.output may start the next run at once.
func (h *Hub) holderLocked(sessionID string) (string, bool) {
	sl, ok := h.bySession[sessionID]
	return sl.id, ok
}
