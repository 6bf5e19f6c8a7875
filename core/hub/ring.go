package hub

import "github.com/agents-server/agents-server/core/domain"

// ring keeps the latest events of a run in a fixed circular buffer, so a
// publish costs the same however long the run has been going.
type ring struct {
	buf   []domain.Event
	start int
	n     int
}

func newRing(size int) ring { return ring{buf: make([]domain.Event, size)} }

// push adds an event; when the ring is full it returns the oldest one,
// which the new one replaced.
func (r *ring) push(ev domain.Event) (domain.Event, bool) {
	if len(r.buf) == 0 {
		return ev, true // a finished run's ring was let go: straight on
	}
	if r.n < len(r.buf) {
		r.buf[(r.start+r.n)%len(r.buf)] = ev
		r.n++
		return domain.Event{}, false
	}
	old := r.buf[r.start]
	r.buf[r.start] = ev
	r.start = (r.start + 1) % len(r.buf)
	return old, true
}

// firstSeq is the oldest retained seq, or next when the ring is empty.
func (r *ring) firstSeq(next int64) int64 {
	if r.n == 0 {
		return next
	}
	return r.buf[r.start].Seq
}

// drain hands the retained events, oldest first, to keep and lets go of
// the buffer: a finished run keeps its events compacted.
func (r *ring) drain(keep func(domain.Event)) {
	for i := 0; i < r.n; i++ {
		keep(r.buf[(r.start+i)%len(r.buf)])
	}
	*r = ring{}
}

// after returns the retained events with seq > cursor, oldest first.
func (r *ring) after(cursor int64) []domain.Event {
	out := make([]domain.Event, 0, r.n)
	for i := 0; i < r.n; i++ {
		if ev := r.buf[(r.start+i)%len(r.buf)]; ev.Seq > cursor {
			out = append(out, ev)
		}
	}
	return out
}
