package scripted

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// sseWriter writes server-sent events, flushing each so the client sees the
// stream as it is produced, and stops once the client has gone away.
type sseWriter struct {
	w     http.ResponseWriter
	flush func()
	ctx   context.Context
	delay time.Duration
}

func newSSE(w http.ResponseWriter, r *http.Request, delayMS int) *sseWriter {
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("Connection", "keep-alive")
	w.WriteHeader(http.StatusOK)
	flush := func() {}
	if f, ok := w.(http.Flusher); ok {
		flush = f.Flush
	}
	flush()
	return &sseWriter{w: w, flush: flush, ctx: r.Context(), delay: time.Duration(delayMS) * time.Millisecond}
}

// event writes one event; name "" omits the event line (Chat Completions
// sends bare data lines). It returns an error once the client is gone.
func (s *sseWriter) event(name string, payload any) error {
	if err := s.ctx.Err(); err != nil {
		return err
	}
	data, err := json.Marshal(payload)
	if err != nil {
		return err
	}
	if name != "" {
		if _, err := fmt.Fprintf(s.w, "event: %s\n", name); err != nil {
			return err
		}
	}
	if _, err := fmt.Fprintf(s.w, "data: %s\n\n", data); err != nil {
		return err
	}
	s.flush()
	return nil
}

// raw writes a data line verbatim (the Chat Completions "[DONE]" marker).
func (s *sseWriter) raw(data string) error {
	if _, err := fmt.Fprintf(s.w, "data: %s\n\n", data); err != nil {
		return err
	}
	s.flush()
	return nil
}

// pause waits the step's delay before a delta, returning early with an error
// when the client goes away so an abandoned stream stops at once.
func (s *sseWriter) pause() error {
	if s.delay <= 0 {
		return s.ctx.Err()
	}
	t := time.NewTimer(s.delay)
	defer t.Stop()
	select {
	case <-s.ctx.Done():
		return s.ctx.Err()
	case <-t.C:
		return nil
	}
}

// deltas pauses before and sends each chunk of text through send, stopping
// at the first error.
func (s *sseWriter) deltas(text string, size int, send func(chunk string) error) error {
	for _, c := range chunks(text, size) {
		if err := s.pause(); err != nil {
			return err
		}
		if err := send(c); err != nil {
			return err
		}
	}
	return nil
}
