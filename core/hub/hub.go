// Package hub broadcasts what runs do: it numbers every event of a run,
// keeps a replay ring with run.started pinned, fans events out to every
// subscriber without letting a slow one hold the run back, keeps finished
// runs for a while, and owns each session's one slot (a live run or a hold).
package hub

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// verbatimTail is the most events a finished run keeps verbatim: past it
// its ring is compacted into the history when it ends.
const verbatimTail = 64

// Hub defaults.
const (
	DefaultRingSize      = 512
	DefaultSubscriberBuf = 1024
	DefaultRetention     = 15 * time.Minute
)

// Options tune a Hub; zero values take the defaults.
type Options struct {
	RingSize      int
	SubscriberBuf int
	Retention     time.Duration
}

// Hub holds the event streams of live runs and of finished runs for a while.
type Hub struct {
	opts  Options
	clock ports.Clock

	mu        sync.Mutex
	runs      map[string]*stream
	bySession map[string]slot // session → the run (or hold) in its slot
	watchers  map[*Watcher]struct{}
	draining  bool
	nextSweep time.Time // when sweepLocked next walks the streams

	events atomic.Int64 // numbered since the start
	gaps   atomic.Int64 // run.gap events handed to watchers since the start

	// relay carries what this hub numbers to the other replicas (nil:
	// this one serves alone).
	relay Relay
	// marks keeps each numbering run's seq mark durable (nil: none).
	marks Marks
}

// MarkAhead is how far past an event's seq a run's mark is raised when
// the event would pass it: one durable write per MarkAhead events.
const MarkAhead = 128

// Marks keeps, durably, how far each run's numbering may go. A run's
// events are numbered only up to its mark; the mark is raised (by
// MarkAhead) before an event past it goes out, so after a crash its
// ending is numbered past every id any watcher was sent.
type Marks interface {
	// MarkRunSeq raises the run's mark to upto.
	MarkRunSeq(ctx context.Context, runID string, upto int64) error
}

// markTimeout bounds one mark's write: a store that does not answer holds
// the run's stream back no longer than this.
const markTimeout = 10 * time.Second

// Stats are the hub's counts since the start, for metrics.
type Stats struct {
	Events, Gaps int64
	LiveRuns     int
}

// Stats counts the events numbered and the gaps given to watchers since
// the start, and the runs live now.
func (h *Hub) Stats() Stats {
	h.mu.Lock()
	live := 0
	for _, st := range h.runs {
		if st.live() {
			live++
		}
	}
	h.mu.Unlock()
	return Stats{Events: h.events.Load(), Gaps: h.gaps.Load(), LiveRuns: live}
}

// stream is one run's sequence: a ring of its latest events, the history
// of those that left it, and its subscribers.
type stream struct {
	id, sessionID, ownerID string

	mu    sync.Mutex
	seq   int64
	mark  int64   // the durable seq mark: events are numbered up to it
	ring  ring    // the latest events
	hist  history // every older one, compacted
	subs  map[*Subscription]struct{}
	ended time.Time // zero while live
	// held are a mirrored run's events past a hole, in seq order, until
	// the hole is filled or given up on (Fill, Skip).
	held []domain.Event
}

// New returns an empty hub; marks (nil: none) keeps the runs it numbers
// durably marked, and relay (nil: none, this replica serves alone)
// carries them to the other replicas.
func New(opts Options, clock ports.Clock, marks Marks, relay Relay) *Hub {
	if opts.RingSize <= 0 {
		opts.RingSize = DefaultRingSize
	}
	if opts.SubscriberBuf <= 0 {
		opts.SubscriberBuf = DefaultSubscriberBuf
	}
	if opts.Retention <= 0 {
		opts.Retention = DefaultRetention
	}
	return &Hub{opts: opts, clock: clock, marks: marks, relay: relay, runs: map[string]*stream{}, bySession: map[string]slot{},
		watchers: map[*Watcher]struct{}{}}
}

// Publish numbers ev as the run's next event and hands it to every
// subscriber; it never blocks on a slow one. A final event ends the stream
// and starts its retention clock. Returns the assigned seq (0 for an unknown
// run).
func (h *Hub) Publish(runID string, ev domain.Event) int64 {
	h.mu.Lock()
	st := h.runs[runID]
	h.mu.Unlock()
	if st == nil {
		return 0
	}
	// Whoever sees the final event may start the next run at once: the
	// session is let go before any subscriber can see it.
	if ev.Final() && st.live() {
		h.Release(st.sessionID, runID)
	}
	seq := st.publish(ev, h.clock, h.marks)
	if seq > 0 {
		h.events.Add(1)
		if h.relay != nil {
			ev.Seq = seq
			h.relay.RunEvent(st.id, st.sessionID, st.ownerID, ev)
		}
	}
	// Lock order is hub before stream: announce only once the stream's lock
	// is released.
	if seq > 0 && ev.Type == domain.EventRunStarted {
		h.announce(st.ownerID, st.id)
	}
	return seq
}

// live reports whether the stream still takes events.
func (st *stream) live() bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.ended.IsZero()
}

func (st *stream) publish(ev domain.Event, clock ports.Clock, marks Marks) int64 {
	st.mu.Lock()
	defer st.mu.Unlock()
	if !st.ended.IsZero() {
		return 0 // a finished stream takes nothing more
	}
	st.seq++
	if marks != nil && st.seq > st.mark {
		// Raised before the event goes out. A failed write leaves the mark
		// where it was (tried again with the next event): the event still
		// goes out, as a failed checkpoint does not stop a run.
		ctx, cancel := context.WithTimeout(context.Background(), markTimeout)
		if marks.MarkRunSeq(ctx, st.id, st.seq+MarkAhead) == nil {
			st.mark = st.seq + MarkAhead
		}
		cancel()
	}
	ev.Seq = st.seq
	st.fileLocked(ev, clock)
	return ev.Seq
}

// fileLocked keeps ev (numbered) in the ring and hands it to the
// subscribers; a final one ends the stream.
func (st *stream) fileLocked(ev domain.Event, clock ports.Clock) {
	if old, ok := st.ring.push(ev); ok {
		st.hist.add(old)
	}
	for sub := range st.subs {
		sub.offer(ev)
	}
	if ev.Final() {
		st.ended = clock.Now()
		st.subs = map[*Subscription]struct{}{}
		// Kept for replay through the retention: a long run compacted, not
		// verbatim; a short one (most) as it was sent, its replay event
		// for event.
		if st.ring.n > verbatimTail {
			st.ring.drain(st.hist.add)
		}
	}
}

// Premark records that a run's seq mark is durably upto already (its row
// was written with it): its events up to it are numbered without a write.
func (h *Hub) Premark(runID string, upto int64) {
	h.mu.Lock()
	st := h.runs[runID]
	h.mu.Unlock()
	if st == nil {
		return
	}
	st.mu.Lock()
	st.mark = max(st.mark, upto)
	st.mu.Unlock()
}

// Reopen makes sure a paused run has a live stream that continues its
// sequence after lastSeq — after a restart the hub starts empty, and the
// decision's events must not restart at 1.
func (h *Hub) Reopen(runID, sessionID, ownerID string, lastSeq int64) {
	h.mu.Lock()
	st := h.runs[runID]
	if st == nil {
		st = &stream{id: runID, sessionID: sessionID, ownerID: ownerID, seq: lastSeq, ring: newRing(h.opts.RingSize),
			subs: map[*Subscription]struct{}{}}
		h.runs[runID] = st
	}
	h.mu.Unlock()
	st.mu.Lock()
	st.ended = time.Time{}
	st.mu.Unlock()
}

// Resume reopens a run's stream for events after a pause (an approval
// decision continues the same run id and sequence).
func (h *Hub) Resume(runID string) {
	h.mu.Lock()
	st := h.runs[runID]
	h.mu.Unlock()
	if st != nil {
		st.mu.Lock()
		st.ended = time.Time{}
		st.mu.Unlock()
		h.announce(st.ownerID, st.id)
	}
}

// Subscribe attaches a watcher to a run from a cursor: fromSeq is the last
// seq the watcher holds (0: none). It gets every event after the cursor —
// from the history, then the ring — then live ones. Only a stream reopened
// after a restart lacks its start: a watcher from before it gets one
// run.gap (last_good its cursor) saying those events are in the stored
// conversation now. A cursor ahead of the run's head is a reset: the
// watcher gets everything held. Returns not_found for an unknown (or
// expired) run.
func (h *Hub) Subscribe(runID string, fromSeq int64) (*Subscription, error) {
	h.mu.Lock()
	st := h.streamLocked(runID)
	h.mu.Unlock()
	if st == nil {
		return nil, errs.E(errs.NotFound, "run not found")
	}
	sub := newSubscription(h, runID, h.opts.SubscriberBuf)
	st.mu.Lock()
	defer st.mu.Unlock()
	if fromSeq > st.seq || fromSeq < 0 {
		fromSeq = 0
	}
	var replay []domain.Event
	if first := st.hist.firstSeq(st.ring.firstSeq(st.seq + 1)); first > fromSeq+1 {
		h.gaps.Add(1)
		replay = append(replay, domain.NewEvent(domain.EventGap, domain.GapPayload{
			RunID: runID, Dropped: first - fromSeq - 1, LastGood: fromSeq, Next: first}))
	}
	replay = append(replay, st.hist.after(fromSeq)...)
	replay = append(replay, st.ring.after(fromSeq)...)
	sub.preload(replay)
	if st.ended.IsZero() {
		st.subs[sub] = struct{}{}
	} else {
		sub.end()
	}
	return sub, nil
}

// Replay is a subscription that hands over the given events and ends: what
// a run the hub no longer holds (expired, or from before a restart) has to
// say, built by its caller from the stored record.
func (h *Hub) Replay(runID string, events []domain.Event) *Subscription {
	sub := newSubscription(h, runID, len(events))
	sub.preload(events)
	sub.end()
	return sub
}

func (h *Hub) unsubscribe(sub *Subscription) {
	h.mu.Lock()
	st := h.runs[sub.runID]
	h.mu.Unlock()
	if st != nil {
		st.mu.Lock()
		delete(st.subs, sub)
		st.mu.Unlock()
	}
}

// RunInfo is what the hub knows of a run.
type RunInfo struct {
	ID, SessionID, OwnerID string
	LastSeq                int64
	Live                   bool
}

// Info returns a run's stream facts; ok is false for an unknown or expired
// run.
func (h *Hub) Info(runID string) (RunInfo, bool) {
	h.mu.Lock()
	st := h.streamLocked(runID)
	h.mu.Unlock()
	if st == nil {
		return RunInfo{}, false
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	return RunInfo{ID: st.id, SessionID: st.sessionID, OwnerID: st.ownerID, LastSeq: st.seq, Live: st.ended.IsZero()}, true
}

// LiveRuns lists the live runs of an owner, for a connection attaching.
func (h *Hub) LiveRuns(ownerID string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for id, st := range h.runs {
		st.mu.Lock()
		live := st.ended.IsZero()
		st.mu.Unlock()
		if live && st.ownerID == ownerID {
			out = append(out, id)
		}
	}
	return out
}

// sweepEvery is how often, as a share of the retention, the hub walks its
// streams to forget expired ones: every lookup walking them all made a
// run's cost grow with the runs of the last quarter hour.
const sweepEvery = 64

// sweepLocked forgets runs that ended more than the retention ago; it
// walks the streams at most once per Retention/sweepEvery.
func (h *Hub) sweepLocked() {
	now := h.clock.Now()
	if now.Before(h.nextSweep) {
		return
	}
	h.nextSweep = now.Add(h.opts.Retention / sweepEvery)
	for id, st := range h.runs {
		if h.expired(st, now) {
			delete(h.runs, id)
		}
	}
}

// expired reports whether a stream ended more than the retention ago.
func (h *Hub) expired(st *stream, now time.Time) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return !st.ended.IsZero() && now.Sub(st.ended) > h.opts.Retention
}

// streamLocked is a run's stream, nil when unknown or expired (an expired
// one is forgotten on the spot, whenever the next sweep is due).
func (h *Hub) streamLocked(runID string) *stream {
	h.sweepLocked()
	st := h.runs[runID]
	if st != nil && h.expired(st, h.clock.Now()) {
		delete(h.runs, runID)
		return nil
	}
	return st
}

// Drain refuses new claims; live runs go on until they end.
func (h *Hub) Drain() {
	h.mu.Lock()
	h.draining = true
	h.mu.Unlock()
}

// Close ends every stream (after the runs stopped), so watchers return.
func (h *Hub) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, st := range h.runs {
		st.mu.Lock()
		for sub := range st.subs {
			sub.end()
		}
		st.subs = map[*Subscription]struct{}{}
		st.mu.Unlock()
	}
	for w := range h.watchers {
		w.close()
	}
}
