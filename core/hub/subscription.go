package hub

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/agents-server/agents-server/core/domain"
)

// Subscription is one watcher's view of a run: the replay it asked for, then
// live events, in sequence. Its queue is bounded: a watcher too slow for the
// run loses events and is told so with one run.gap (never blocking the run).
// A final event is always delivered.
type Subscription struct {
	runID string
	hub   *Hub

	mu         sync.Mutex
	queue      []domain.Event
	max        int
	lastQueued int64 // seq of the last event queued
	gapping    bool  // dropping since lastGood, until there is room again
	lastGood   int64
	dropped    int64
	done       bool // the final event is queued; nothing follows
	closed     bool // the watcher left
	wake       chan struct{}
}

func newSubscription(h *Hub, runID string, max int) *Subscription {
	return &Subscription{runID: runID, hub: h, max: max, wake: make(chan struct{}, 1)}
}

// RunID names the run watched.
func (s *Subscription) RunID() string { return s.runID }

func (s *Subscription) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// offer queues a live event, or drops it into a gap when the queue is full.
// Called with the run's lock held, so events arrive in sequence.
func (s *Subscription) offer(ev domain.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.done {
		return
	}
	final := ev.Final()
	room := len(s.queue) < s.max
	if s.gapping && (room || final) {
		s.hub.gaps.Add(1)
		s.queue = append(s.queue, domain.NewEvent(domain.EventGap, domain.GapPayload{
			RunID: s.runID, Dropped: s.dropped, LastGood: s.lastGood, Next: ev.Seq}))
		s.gapping, s.dropped = false, 0
		room = len(s.queue) < s.max
	}
	if !room && !final {
		if !s.gapping {
			s.gapping, s.lastGood = true, s.lastQueued
		}
		s.dropped++
		return
	}
	s.queue = append(s.queue, ev)
	s.lastQueued = ev.Seq
	s.done = final
	s.signal()
}

// preload queues the replay before any live event (under the run's lock).
func (s *Subscription) preload(events []domain.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, events...)
	for _, ev := range events {
		if ev.Seq > 0 {
			s.lastQueued = ev.Seq
		}
		s.done = s.done || ev.Final()
	}
	s.signal()
}

// Next returns the next event, waiting for one. It returns io.EOF after the
// final event, and ctx's error when ctx ends first.
func (s *Subscription) Next(ctx context.Context) (domain.Event, error) {
	return s.NextBefore(ctx, nil)
}

// ErrIdle is NextBefore's answer when its idle channel fired first.
var ErrIdle = errors.New("no event before the idle mark")

// NextBefore is Next that also gives up, with ErrIdle, when idle fires: a
// stream's heartbeat on one reusable timer, where a deadline context per
// event would cost a timer and a context for every watcher and event.
func (s *Subscription) NextBefore(ctx context.Context, idle <-chan time.Time) (domain.Event, error) {
	for {
		s.mu.Lock()
		if len(s.queue) > 0 {
			ev := s.queue[0]
			s.queue[0] = domain.Event{}
			s.queue = s.queue[1:]
			s.mu.Unlock()
			return ev, nil
		}
		if s.done || s.closed {
			s.mu.Unlock()
			return domain.Event{}, io.EOF
		}
		s.mu.Unlock()
		select {
		case <-s.wake:
		case <-idle:
			return domain.Event{}, ErrIdle
		case <-ctx.Done():
			return domain.Event{}, ctx.Err()
		}
	}
}

// Pending reports how many events are queued and ready, so a writer can
// batch them into one flush.
func (s *Subscription) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue)
}

// Close stops the subscription; the run goes on.
func (s *Subscription) Close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.signal()
	s.hub.unsubscribe(s)
}

// end marks the stream finished without a final event (hub shutdown).
func (s *Subscription) end() {
	s.mu.Lock()
	s.done = true
	s.mu.Unlock()
	s.signal()
}
