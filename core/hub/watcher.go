package hub

import (
	"sync"

	"github.com/agents-server/agents-server/core/domain"
)

// Watcher tells one connection of an owner about every run of that owner
// that starts or resumes, whoever started it — the bus is per owner, so two
// browsers on one session both follow it live.
type Watcher struct {
	hub     *Hub
	ownerID string
	mu      sync.Mutex
	pending []string
	notices []domain.Event
	wake    chan struct{}
	closed  bool
}

// Watch registers a watcher for an owner's runs. Close it when the
// connection goes.
func (h *Hub) Watch(ownerID string) *Watcher {
	w := &Watcher{hub: h, ownerID: ownerID, wake: make(chan struct{}, 1)}
	h.mu.Lock()
	h.watchers[w] = struct{}{}
	h.mu.Unlock()
	return w
}

// announce queues a run id for the owner's watchers. The queue is unbounded
// but holds ids only, and each watcher drains it continuously.
func (h *Hub) announce(ownerID, runID string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for w := range h.watchers {
		if w.ownerID == ownerID {
			w.push(runID)
		}
	}
}

// Notify hands ev to every watcher of the owner: an event that belongs to
// no live run stream (a task that moved after its run ended), broadcast to
// each of the owner's connections. It is not numbered and not replayed.
func (h *Hub) Notify(ownerID string, ev domain.Event) {
	h.notice(ownerID, ev)
	if h.relay != nil {
		h.relay.Notice(ownerID, ev)
	}
}

// notice hands ev to the owner's watchers here.
func (h *Hub) notice(ownerID string, ev domain.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for w := range h.watchers {
		if w.ownerID == ownerID {
			w.notice(ev)
		}
	}
}

func (w *Watcher) push(runID string) {
	w.mu.Lock()
	if !w.closed {
		w.pending = append(w.pending, runID)
	}
	w.mu.Unlock()
	w.signal()
}

func (w *Watcher) notice(ev domain.Event) {
	w.mu.Lock()
	if !w.closed {
		w.notices = append(w.notices, ev)
	}
	w.mu.Unlock()
	w.signal()
}

func (w *Watcher) signal() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// Wake is signalled whenever Take has something.
func (w *Watcher) Wake() <-chan struct{} { return w.wake }

// Take returns the run ids announced since the last call.
func (w *Watcher) Take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.pending
	w.pending = nil
	return out
}

// TakeNotices returns the events notified since the last call.
func (w *Watcher) TakeNotices() []domain.Event {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.notices
	w.notices = nil
	return out
}

// Close unregisters the watcher.
func (w *Watcher) Close() {
	w.hub.mu.Lock()
	delete(w.hub.watchers, w)
	w.hub.mu.Unlock()
	w.close()
}

func (w *Watcher) close() {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
}
