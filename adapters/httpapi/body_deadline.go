package httpapi

import (
	"errors"
	"io"
	"net/http"
	"os"
	"sync"
	"time"
)

// DefaultBodyReadTimeout bounds how long a client may take to send a whole
// request body: 1 MiB (the cap) at a slow 50 KB/s.
const DefaultBodyReadTimeout = 30 * time.Second

// BoundBodyReads wraps the whole HTTP surface (API, UI, WebSocket paths)
// so a request body must arrive within the configured time. Headers are
// already bounded by the server's ReadHeaderTimeout, but a client that
// declares a body and then trickles it (or never sends it) would otherwise
// hold its connection and descriptor forever, on any path and without a
// token. The deadline is lifted the moment the body has been read to its
// end, so what follows is not bounded by it: a Prefer: wait request holding
// for minutes, and requests without a body — event streams and WebSocket
// upgrades, long-lived on purpose — never get one. A body still unread when
// the deadline passes fails its read, and the connection is closed.
func (s *Server) BoundBodyReads(next http.Handler) http.Handler {
	timeout := s.cfg.BodyReadTimeout
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil && r.Body != http.NoBody && r.ContentLength != 0 {
			rc := http.NewResponseController(w)
			if rc.SetReadDeadline(time.Now().Add(timeout)) == nil {
				// A shallow copy carries the wrapped body: the server's own
				// request keeps its body type, which is how it knows to skip
				// reading a large body nobody read before it answers.
				r2 := new(http.Request)
				*r2 = *r
				r2.Body = &deadlineBody{ReadCloser: r.Body, lift: func() { _ = rc.SetReadDeadline(time.Time{}) }}
				r = r2
			}
		}
		next.ServeHTTP(w, r)
	})
}

// deadlineBody lifts the read deadline once the body has been read whole,
// and names a timed-out read for what it is.
type deadlineBody struct {
	io.ReadCloser
	lift func()
	once sync.Once
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	switch {
	case err == io.EOF:
		b.once.Do(b.lift)
	case errors.Is(err, os.ErrDeadlineExceeded):
		err = errBodyTimeout
	}
	return n, err
}

var errBodyTimeout = errors.New("the request body did not arrive in time")
