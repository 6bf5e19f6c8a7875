package llmtest

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agents-server/agents-server/adapters/llm/scripted"
	"github.com/agents-server/agents-server/ports"
)

// Cancellation: when the caller's context ends, the call returns its
// context error (never a *ports.ModelError) and lets go of the stream: the
// server sees the client hang up long before the stream would end, and
// every connection the adapter opened closes, so no transport goroutine is
// left reading it. The adapters run no goroutines of their own; a
// connection is what could outlive the call.

// longStream streams for about ten seconds unless its client goes away.
var longStream = scripted.Step{Text: strings.Repeat("slow text ", 200), ChunkSize: 1, DelayMS: 5}

// testCancelMidStream: cancelling after a few deltas ends the call with
// context.Canceled and cuts the stream short.
func testCancelMidStream(t *testing.T, h Harness) {
	s := newStage(t, h, scripted.Options{})
	s.script("m", longStream)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := 0
	_, _, err := s.generate(t, ctx, s.request("m", User("x")), func(ports.ModelDelta) {
		if n++; n == 3 {
			cancel()
		}
	})
	Cancelled(t, err)
	s.checkLetGo(t)
}

// testDeadlineMidStream: a deadline that passes mid-stream ends the call
// with context.DeadlineExceeded, not a provider failure.
func testDeadlineMidStream(t *testing.T, h Harness) {
	s := newStage(t, h, scripted.Options{})
	s.script("m", longStream)
	ctx := newExpiring()
	n := 0
	_, _, err := s.generate(t, ctx, s.request("m", User("x")), func(ports.ModelDelta) {
		if n++; n == 3 {
			ctx.expire()
		}
	})
	var me *ports.ModelError
	if !errors.Is(err, context.DeadlineExceeded) || errors.As(err, &me) {
		t.Fatalf("err %v, want context.DeadlineExceeded and no ModelError", err)
	}
	s.checkLetGo(t)
}

// expiring is a context whose deadline passes when expire is called: a
// deadline mid-stream without waiting on a clock.
type expiring struct {
	context.Context
	done chan struct{}
	once sync.Once
}

func newExpiring() *expiring {
	return &expiring{Context: context.Background(), done: make(chan struct{})}
}

func (e *expiring) expire() { e.once.Do(func() { close(e.done) }) }

// Done is closed once expired.
func (e *expiring) Done() <-chan struct{} { return e.done }

// Err is context.DeadlineExceeded once expired.
func (e *expiring) Err() error {
	select {
	case <-e.done:
		return context.DeadlineExceeded
	default:
		return nil
	}
}

// testCancelBeforeTheCall: an already-cancelled context fails the call
// with context.Canceled and sends nothing on.
func testCancelBeforeTheCall(t *testing.T, h Harness) {
	s := newStage(t, h, scripted.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	resp, c, err := s.generate(t, ctx, s.request("echo", User("x")), nil)
	Cancelled(t, err)
	if len(resp.Output) != 0 || len(c.Deltas) != 0 {
		t.Errorf("a cancelled call streamed %d deltas and returned %s", len(c.Deltas), resp.Output)
	}
	if !s.watch.closedAll() {
		t.Error("a connection stayed open after a cancelled call")
	}
}

// checkLetGo asserts the server's stream ended because its client went
// away, and every connection closed.
func (s *stage) checkLetGo(t *testing.T) {
	t.Helper()
	select {
	case gone := <-s.watch.ends:
		if !gone {
			t.Error("the server streamed to the end: the adapter kept reading after its context ended")
		}
	case <-time.After(holdLimit):
		t.Error("the server is still streaming after the call returned: the adapter left its connection open")
	}
	if !s.watch.closedAll() {
		t.Errorf("%d connections stayed open after the call returned", s.watch.open.Load())
	}
}

// rawItems is items as a request's input.
func rawItems(items ...json.RawMessage) []json.RawMessage { return items }
