package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/agents-server/agents-server/core/errs"
)

// sseHeartbeat keeps idle streams alive through proxies.
const sseHeartbeat = 15 * time.Second

// handleRunEvents streams a run's events as SSE: id is the run's sequence,
// event the type, data the {type, seq, payload} envelope. It resumes after
// Last-Event-ID (or from_seq), and closes after a final event — not after
// run.interrupted, since a decision resumes the same run on this stream.
func (s *Server) handleRunEvents(c echo.Context) error {
	from, err := sseCursor(c.Request())
	if err != nil {
		return err
	}
	sub, err := s.deps.Runs.Subscribe(caller(c), c.Param("id"), from)
	if err != nil {
		return err
	}
	defer sub.Close()
	w := c.Response()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	w.Flush()
	ctx := c.Request().Context()
	for {
		wait, cancel := context.WithTimeout(ctx, sseHeartbeat)
		ev, err := sub.Next(wait)
		cancel()
		switch {
		case errors.Is(err, io.EOF):
			return nil
		case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
			if _, err := io.WriteString(w, ": keep-alive\n\n"); err != nil {
				return nil
			}
			w.Flush()
			continue
		case err != nil:
			return nil // the client left
		}
		data, err := json.Marshal(ev)
		if err != nil {
			return err
		}
		if ev.Seq > 0 {
			fmt.Fprintf(w, "id: %d\n", ev.Seq)
		}
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", ev.Type, data); err != nil {
			return nil
		}
		w.Flush()
		if ev.Final() {
			return nil
		}
	}
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
