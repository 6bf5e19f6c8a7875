package hub

import (
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/ports"
)

// Replicas. Each replica sharing a store has a hub of its own; a run is
// numbered by the hub of the replica running it, whose relay carries every
// event to the others, which file it with Mirror. So a watcher on any
// replica follows any run, and the replica that resumes a paused run
// (wherever it paused) continues the same sequence.

// Relay hears of what this hub numbers and notices, to carry it to the
// other replicas; a hub is given its relay in Options.
type Relay interface {
	// RunEvent is a run's event as numbered here.
	RunEvent(runID, sessionID, ownerID string, ev domain.Event)
	// Notice is an owner's notice (see Notify).
	Notice(ownerID string, ev domain.Event)
}

// Mirror files an event another replica numbered for one of its runs.
// The run's stream is made on first sight, continuing from the event
// (what came before lives on as the stored conversation: a watcher from
// before gets a run.gap, as after a restart) — unless the event is final:
// a run never streamed here has nothing here to end. An event at or below
// the stream's head is a repeat and is dropped; an event of a stream that
// had ended opens it again. The owner's watchers hear of a run that
// starts, or comes back, here.
func (h *Hub) Mirror(runID, sessionID, ownerID string, ev domain.Event) {
	if ev.Seq <= 0 {
		return
	}
	h.mu.Lock()
	st := h.streamLocked(runID)
	if st == nil && ev.Final() {
		// The end of a run this replica never streamed: nothing here to
		// end, and a watcher is served its ending from the store.
		h.mu.Unlock()
		return
	}
	if st == nil {
		st = &stream{id: runID, sessionID: sessionID, ownerID: ownerID, seq: ev.Seq - 1, ring: newRing(h.opts.RingSize),
			subs: map[*Subscription]struct{}{}}
		h.runs[runID] = st
	}
	h.mu.Unlock()
	filed, reopened := st.mirror(ev, h.clock)
	if !filed {
		return
	}
	h.events.Add(1)
	if ev.Type == domain.EventRunStarted || reopened {
		h.announce(ownerID, runID)
	}
}

// mirror files ev at its own seq; reopened reports a stream that had
// ended and takes events again.
func (st *stream) mirror(ev domain.Event, clock ports.Clock) (filed, reopened bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if ev.Final() && st.ended.IsZero() && ev.Seq <= st.seq {
		// A conclusion is numbered from the run's last checkpoint, which
		// may lag what this replica heard: it ends the stream after that.
		ev.Seq = st.seq + 1
	}
	if ev.Seq <= st.seq {
		return false, false
	}
	if !st.ended.IsZero() {
		st.ended, reopened = time.Time{}, true
	}
	st.seq = ev.Seq
	st.fileLocked(ev, clock)
	return true, reopened
}

// Conclude files the final event of a run another replica was running and
// left (it died; the failover ended the run): here as Mirror does, and
// relayed, so every replica's watchers see the run end. Its seq is the
// stored one (one past the last checkpoint); a replica that heard more
// numbers it after what it heard.
func (h *Hub) Conclude(runID, sessionID, ownerID string, ev domain.Event) {
	h.Mirror(runID, sessionID, ownerID, ev)
	if h.relay != nil {
		h.relay.RunEvent(runID, sessionID, ownerID, ev)
	}
}

// MirrorNotice hands an owner's notice from another replica to the
// owner's watchers here.
func (h *Hub) MirrorNotice(ownerID string, ev domain.Event) { h.notice(ownerID, ev) }
