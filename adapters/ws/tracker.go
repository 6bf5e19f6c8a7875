package ws

import (
	"net/http"
	"sync"
)

// tracker holds an endpoint's open connections so shutdown can close them,
// and refuses new ones once it has.
type tracker[C comparable] struct {
	mu      sync.Mutex
	conns   map[C]struct{}
	closing bool
}

// closed reports whether shutdown began; it answers the client 503 then.
func (t *tracker[C]) closed(w http.ResponseWriter) bool {
	t.mu.Lock()
	closing := t.closing
	t.mu.Unlock()
	if closing {
		http.Error(w, `{"error":{"code":"unavailable","message":"the server is shutting down; retry shortly"}}`, http.StatusServiceUnavailable)
	}
	return closing
}

func (t *tracker[C]) add(c C) {
	t.mu.Lock()
	if t.conns == nil {
		t.conns = map[C]struct{}{}
	}
	t.conns[c] = struct{}{}
	t.mu.Unlock()
}

func (t *tracker[C]) remove(c C) {
	t.mu.Lock()
	delete(t.conns, c)
	t.mu.Unlock()
}

// drain marks the endpoint closing and returns the open connections.
func (t *tracker[C]) drain() []C {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closing = true
	out := make([]C, 0, len(t.conns))
	for c := range t.conns {
		out = append(out, c)
	}
	return out
}
