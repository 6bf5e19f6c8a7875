package hub

import (
	"bytes"
	"cmp"
	"encoding/json"
	"slices"

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
// the stream's head is a repeat and is dropped, and so is any event after
// the run's final one: a run that ended is over (a replica cut off that
// goes on streaming a run another's failover ended is not heard). The
// owner's watchers hear of a run that starts here.
//
// An event past a hole (the backplane lost what came between) is held
// back, with every later one, so no watcher sees the run out of order:
// lacking reports a hole that opened with this event, after the stream's
// head after. The relay then asks the run's replica for what is missing
// and files its answer with Fill, or gives up with Skip — either way the
// held events follow, after an explicit run.gap where nothing filled the
// hole.
func (h *Hub) Mirror(runID, sessionID, ownerID string, ev domain.Event) (after int64, lacking bool) {
	if ev.Seq <= 0 {
		return 0, false
	}
	h.mu.Lock()
	st := h.streamLocked(runID)
	if st == nil && ev.Final() {
		// The end of a run this replica never streamed: nothing here to
		// end, and a watcher is served its ending from the store.
		h.mu.Unlock()
		return 0, false
	}
	if st == nil {
		st = &stream{id: runID, sessionID: sessionID, ownerID: ownerID, seq: firstSeqOf(ev) - 1, ring: newRing(h.opts.RingSize),
			subs: map[*Subscription]struct{}{}}
		h.runs[runID] = st
	}
	h.mu.Unlock()
	res := st.mirror(ev, h.clock)
	h.filed(st, res)
	return res.after, res.lacking
}

// mirrored is what filing events into a mirrored stream did.
type mirrored struct {
	filed   int  // events filed (a run.gap included)
	gaps    int  // run.gap events filed for holes nothing filled
	started bool // run.started was among them
	// lacking reports a hole that opened: the events after after are
	// missing before the ones held back.
	lacking bool
	after   int64
}

// filed counts what a mirror filed and tells the owner's watchers of a
// run that started here.
func (h *Hub) filed(st *stream, res mirrored) {
	h.events.Add(int64(res.filed - res.gaps))
	h.gaps.Add(int64(res.gaps))
	if res.started {
		h.announce(st.ownerID, st.id)
	}
}

// maxHeld bounds the events a mirrored stream holds back behind a hole:
// past it the hole is given up on (a run.gap) rather than memory spent.
const maxHeld = 4096

// mirror files ev at its own seq, or holds it back behind a hole.
func (st *stream) mirror(ev domain.Event, clock ports.Clock) (res mirrored) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if ev.Final() && st.ended.IsZero() && ev.Seq <= st.seq {
		// A conclusion is numbered from the run's last checkpoint, which
		// may lag what this replica heard: it ends the stream after that.
		ev.Seq = st.seq + 1
	}
	if ev.Seq <= st.seq || !st.ended.IsZero() {
		return res
	}
	if len(st.held) > 0 || firstSeqOf(ev) > st.seq+1 {
		res.lacking, res.after = len(st.held) == 0, st.seq
		st.hold(ev)
		if len(st.held) > maxHeld {
			st.skipLocked(clock, &res)
			res.lacking = false
		}
		return res
	}
	st.fileMirroredLocked(ev, clock, &res)
	return res
}

// hold keeps ev, in seq order, until the hole before it is filled or
// given up on; a repeat is kept once.
func (st *stream) hold(ev domain.Event) {
	i, found := slices.BinarySearchFunc(st.held, ev.Seq, func(e domain.Event, seq int64) int { return cmp.Compare(e.Seq, seq) })
	if !found {
		st.held = slices.Insert(st.held, i, ev)
	}
}

// fileMirroredLocked files ev after the head; an ended stream takes
// nothing more.
func (st *stream) fileMirroredLocked(ev domain.Event, clock ports.Clock, res *mirrored) {
	if !st.ended.IsZero() {
		return
	}
	st.seq = ev.Seq
	st.fileLocked(ev, clock)
	res.filed++
	res.started = res.started || ev.Type == domain.EventRunStarted
}

// gapLocked files a run.gap standing for the events from the head up to
// next: they are lost here. It carries the last missing number, so a
// watcher's cursor passes the hole once.
func (st *stream) gapLocked(next int64, clock ports.Clock, res *mirrored) {
	gap := domain.NewEvent(domain.EventGap, domain.GapPayload{RunID: st.id, Dropped: next - st.seq - 1, LastGood: st.seq, Next: next})
	gap.Seq = next - 1
	st.fileMirroredLocked(gap, clock, res)
	res.gaps++
}

// releaseLocked files the held events that now follow the head, and
// reports whether a hole remains before the rest.
func (st *stream) releaseLocked(clock ports.Clock, res *mirrored) bool {
	for len(st.held) > 0 {
		ev := st.held[0]
		if ev.Seq <= st.seq {
			st.held = st.held[1:]
			continue
		}
		if firstSeqOf(ev) > st.seq+1 {
			return true
		}
		st.held = st.held[1:]
		st.fileMirroredLocked(ev, clock, res)
	}
	st.held = nil
	return false
}

// skipLocked gives up on every hole before the held events: a run.gap
// for each, then the events.
func (st *stream) skipLocked(clock ports.Clock, res *mirrored) {
	for st.releaseLocked(clock, res) {
		st.gapLocked(firstSeqOf(st.held[0]), clock, res)
	}
}

// Fill files what the run's replica answered for a hole — its events
// after the hole's start, in order — then the events held behind the hole.
// Whatever the answer left missing gets a run.gap: the replica holds
// nothing older, so nothing else will fill it.
func (h *Hub) Fill(runID string, evs []domain.Event) {
	st := h.mirroredStream(runID)
	if st == nil {
		return
	}
	var res mirrored
	st.mu.Lock()
	for _, ev := range evs {
		if ev.Type == domain.EventGap {
			// The answering replica lacks these numbers too: here they are
			// a gap from this stream's own head.
			var p domain.GapPayload
			if json.Unmarshal(ev.Payload, &p) == nil && p.Next-1 > st.seq {
				st.gapLocked(p.Next, h.clock, &res)
			}
			continue
		}
		if ev.Seq <= st.seq {
			continue
		}
		if first := firstSeqOf(ev); first > st.seq+1 {
			st.gapLocked(first, h.clock, &res)
		}
		st.fileMirroredLocked(ev, h.clock, &res)
	}
	st.skipLocked(h.clock, &res)
	st.mu.Unlock()
	h.filed(st, res)
}

// Skip gives up on a mirrored run's holes: nothing will fill them (the
// run's replica did not answer, or is gone). Each gets a run.gap, then
// the events held behind it are filed.
func (h *Hub) Skip(runID string) {
	h.Fill(runID, nil)
}

// Since returns a run's events after cursor, as a watcher subscribing from
// it would get them (merged stretches included); ok is false for a run
// the hub does not hold. A replica answers another's hole with it.
func (h *Hub) Since(runID string, cursor int64) (evs []domain.Event, ok bool) {
	st := h.mirroredStream(runID)
	if st == nil {
		return nil, false
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	evs = append(st.hist.after(cursor), st.ring.after(cursor)...)
	return evs, true
}

func (h *Hub) mirroredStream(runID string) *stream {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.streamLocked(runID)
}

// firstSeqOf is the first seq an event stands for: a replayed stretch of
// fragments (first_seq in its payload) stands for those up to its seq.
func firstSeqOf(ev domain.Event) int64 {
	if !bytes.Contains(ev.Payload, firstSeqKey) {
		return ev.Seq
	}
	var p struct {
		FirstSeq int64 `json:"first_seq"`
	}
	if json.Unmarshal(ev.Payload, &p) != nil || p.FirstSeq <= 0 || p.FirstSeq > ev.Seq {
		return ev.Seq
	}
	return p.FirstSeq
}

var firstSeqKey = []byte(`"first_seq":`)

// Conclude files the final event of a run another replica was running and
// left (it died; the failover ended the run): here as Mirror does, and
// relayed, so every replica's watchers see the run end. Its seq is the
// stored one (one past the last checkpoint); a replica that heard more
// numbers it after what it heard.
func (h *Hub) Conclude(runID, sessionID, ownerID string, ev domain.Event) {
	// The run's replica is gone: a hole before the end is never filled.
	h.Mirror(runID, sessionID, ownerID, ev)
	h.Skip(runID)
	if h.relay != nil {
		h.relay.RunEvent(runID, sessionID, ownerID, ev)
	}
}

// MirrorNotice hands an owner's notice from another replica to the
// owner's watchers here.
func (h *Hub) MirrorNotice(ownerID string, ev domain.Event) { h.notice(ownerID, ev) }
