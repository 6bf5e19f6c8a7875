package httpapi

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/hub"
	"github.com/agents-server/agents-server/core/livestreams"
)

// sseHeartbeat keeps idle streams alive through proxies.
const sseHeartbeat = 15 * time.Second

// handleRunEvents streams a run's events as SSE: id is the run's sequence,
// event the type, data the {type, seq, payload} envelope. It resumes after
// Last-Event-ID (or from_seq), and closes after a final event — not after
// run.interrupted, since a decision resumes the same run on this stream.
// The stream counts against the caller's max_streams_per_user (429 past
// it), and ends, with a comment naming why, the moment its token stops
// being valid.
func (s *Server) handleRunEvents(c echo.Context) error {
	from, err := sseCursor(c.Request())
	if err != nil {
		return err
	}
	ctx, release, err := s.openStream(c)
	if err != nil {
		return err
	}
	defer release()
	sub, err := s.deps.Runs.Subscribe(ctx, caller(c), c.Param("id"), from)
	if err != nil {
		return err
	}
	defer sub.Close()
	return writeSSE(ctx, c, http.StatusOK, sub)
}

// openStream takes one of the caller's live streams (429 past
// max_streams_per_user, with Retry-After); the context it returns ends,
// with a streamClosed cause, the moment the caller's token stops being
// valid. release gives the stream back.
func (s *Server) openStream(c echo.Context) (context.Context, func(), error) {
	ctx, end := context.WithCancelCause(c.Request().Context())
	stream, err := s.deps.Streams.Open(ctx, caller(c), func(reason string) { end(streamClosed(reason)) })
	if errs.Is(err, errs.RateLimited) {
		c.Response().Header().Set("Retry-After", strconv.Itoa(int(livestreams.RetryAfter/time.Second)))
	}
	if err != nil {
		end(nil)
		return nil, nil, err
	}
	return ctx, func() { stream.Release(); end(nil) }, nil
}

// wantsSSE reports whether a request asks for text/event-stream.
func wantsSSE(r *http.Request) bool {
	return strings.Contains(r.Header.Get("Accept"), "text/event-stream")
}

// writeSSE sends a subscription's events as SSE with the given status
// until its final event, the client leaving, or ctx ending.
func writeSSE(ctx context.Context, c echo.Context, status int, sub *hub.Subscription) error {
	w := c.Response()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(status)
	w.Flush()
	idle := time.NewTimer(sseHeartbeat)
	defer idle.Stop()
	var frame []byte // reused: a frame is written before the next is built
	for {
		ev, err := sub.NextBefore(ctx, idle.C)
		switch {
		case errors.Is(err, io.EOF):
			return nil
		case errors.Is(err, hub.ErrIdle):
			if _, err := io.WriteString(w, ": keep-alive\n\n"); err != nil {
				return nil
			}
			w.Flush()
			idle.Reset(sseHeartbeat)
			continue
		case err != nil:
			var closed streamClosed
			if errors.As(context.Cause(ctx), &closed) {
				// Not an event: the run goes on; this credential may no
				// longer follow it.
				_, _ = io.WriteString(w, ": closed: "+string(closed)+"\n\n")
				w.Flush()
			}
			return nil // the client left, or its credential was revoked
		}
		frame = appendSSEFrame(frame[:0], ev)
		if _, err := w.Write(frame); err != nil {
			return nil
		}
		// One flush per burst, not per event: while more events are queued
		// they join this write.
		if ev.Final() || sub.Pending() == 0 {
			w.Flush()
			idle.Reset(sseHeartbeat)
		}
		if ev.Final() {
			return nil
		}
	}
}

// streamClosed is why the register ended a stream.
type streamClosed string

func (r streamClosed) Error() string { return string(r) }

// appendSSEFrame appends one event's frame to b: id (the sequence; none for
// a connection's own run.gap), event (the type) and data (the envelope).
func appendSSEFrame(b []byte, ev domain.Event) []byte {
	if ev.Seq > 0 {
		b = append(b, "id: "...)
		b = strconv.AppendInt(b, ev.Seq, 10)
		b = append(b, '\n')
	}
	b = append(b, "event: "...)
	b = append(b, ev.Type...)
	b = append(b, "\ndata: "...)
	b = ev.AppendEnvelope(b)
	return append(b, "\n\n"...)
}

// sseCursor reads the last sequence a client holds: Last-Event-ID, else
// from_seq, else 0. Returns validation for a malformed one.
func sseCursor(r *http.Request) (int64, error) {
	raw, field := r.Header.Get("Last-Event-ID"), "Last-Event-ID"
	if raw == "" {
		raw, field = r.URL.Query().Get("from_seq"), "from_seq"
	}
	if raw == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || n < 0 {
		return 0, errs.Field(field, "must be a sequence number")
	}
	return n, nil
}
