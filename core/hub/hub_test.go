package hub

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func newTestHub(opts Options) (*Hub, *fakeClock) {
	c := &fakeClock{now: time.Unix(1_700_000_000, 0)}
	return New(opts, c), c
}

func step(n int) domain.Event {
	return domain.NewEvent(domain.EventStep, domain.DeltaPayload{RunID: "r", Delta: string(rune('a' + n%26))})
}

func drain(t *testing.T, s *Subscription) []domain.Event {
	t.Helper()
	var out []domain.Event
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for {
		ev, err := s.Next(ctx)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("next: %v (after %d events)", err, len(out))
		}
		out = append(out, ev)
	}
}

func gapOf(t *testing.T, ev domain.Event) domain.GapPayload {
	t.Helper()
	if ev.Type != domain.EventGap {
		t.Fatalf("want run.gap, got %s", ev.Type)
	}
	var g domain.GapPayload
	json.Unmarshal(ev.Payload, &g)
	return g
}

var final = domain.NewEvent(domain.EventOutput, domain.OutputPayload{RunID: "r", FinalOutput: "done"})

func TestClaimIsOneRunPerSession(t *testing.T) {
	h, _ := newTestHub(Options{})
	if err := h.Claim("s", "r1", "u"); err != nil {
		t.Fatal(err)
	}
	if err := h.Claim("s", "r2", "u"); errs.CodeOf(err) != errs.Conflict {
		t.Fatalf("second claim: %v", err)
	}
	if err := h.Claim("other", "r3", "u"); err != nil {
		t.Fatal(err)
	}
	h.Release("s", "r1")
	if err := h.Claim("s", "r2", "u"); err != nil {
		t.Fatalf("after release: %v", err)
	}
	h.Drain()
	if err := h.Claim("x", "r4", "u"); errs.CodeOf(err) != errs.Unavailable {
		t.Fatalf("while draining: %v", err)
	}
}

// A client that saw a run's final event may start the next run at once,
// before the finished run's goroutine gets round to Release.
func TestFinalEventFreesTheSession(t *testing.T) {
	h, _ := newTestHub(Options{})
	h.Claim("s", "r1", "u")
	h.Publish("r1", domain.NewEvent(domain.EventRunStarted, domain.RunStartedPayload{RunID: "r1", SessionID: "s"}))
	if live, busy := h.Busy("s"); !busy || live != "r1" {
		t.Fatalf("Busy while running = %q, %v", live, busy)
	}
	h.Publish("r1", final)
	if live, busy := h.Busy("s"); busy {
		t.Fatalf("Busy after the final event = %q, want free", live)
	}
	if err := h.Claim("s", "r2", "u"); err != nil {
		t.Fatalf("claim after the final event: %v", err)
	}
	h.Release("s", "r1") // the late release must not free r2's slot
	if live, busy := h.Busy("s"); !busy || live != "r2" {
		t.Fatalf("Busy after the old run's release = %q, %v; want r2", live, busy)
	}
}

func TestReplayRingPinsRunStarted(t *testing.T) {
	h, _ := newTestHub(Options{RingSize: 8})
	h.Claim("s", "r", "u")
	h.Publish("r", domain.NewEvent(domain.EventRunStarted, domain.RunStartedPayload{RunID: "r", SessionID: "s", Input: "hi"}))
	for i := 0; i < 20; i++ {
		h.Publish("r", step(i))
	}
	// A fresh watcher: run.started, a gap with last_good 0, the ring.
	sub, _ := h.Subscribe("r", 0)
	h.Publish("r", final)
	got := drain(t, sub)
	if got[0].Type != domain.EventRunStarted || got[0].Seq != 1 {
		t.Fatalf("first = %+v", got[0])
	}
	g := gapOf(t, got[1])
	if g.LastGood != 0 || g.Next != 14 || g.Dropped != 12 {
		t.Fatalf("gap = %+v", g)
	}
	if len(got) != 2+8+1 || got[2].Seq != 14 || got[len(got)-1].Seq != 22 {
		t.Fatalf("%d events, %d…%d", len(got), got[2].Seq, got[len(got)-1].Seq)
	}
	// Resuming inside the ring: exactly what follows the cursor.
	sub, _ = h.Subscribe("r", 17)
	got = drain(t, sub)
	if len(got) != 5 || got[0].Seq != 18 || !got[4].Final() {
		t.Fatalf("resume = %+v", got)
	}
	// A cursor ahead of the head is a reset.
	sub, _ = h.Subscribe("r", 999)
	if got = drain(t, sub); got[0].Type != domain.EventRunStarted {
		t.Fatal("reset did not replay from the start")
	}
	if _, err := h.Subscribe("nope", 0); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("unknown run: %v", err)
	}
}

func TestSlowSubscriberGetsAGapAndTheRunNeverBlocks(t *testing.T) {
	h, _ := newTestHub(Options{SubscriberBuf: 4})
	h.Claim("s", "r", "u")
	sub, _ := h.Subscribe("r", 0)
	done := make(chan struct{})
	go func() {
		for i := 0; i < 10; i++ {
			h.Publish("r", step(i)) // nobody reads: must not block
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("publish blocked on a slow subscriber")
	}
	ctx := context.Background()
	for i := 1; i <= 4; i++ {
		if ev, _ := sub.Next(ctx); ev.Seq != int64(i) {
			t.Fatalf("event %d has seq %d", i, ev.Seq)
		}
	}
	h.Publish("r", step(11))
	h.Publish("r", final)
	got := drain(t, sub)
	g := gapOf(t, got[0])
	if g.Dropped != 6 || g.LastGood != 4 || g.Next != 11 || got[1].Seq != 11 || !got[2].Final() {
		t.Fatalf("after the gap: %+v then %+v", g, got[1:])
	}
}

func TestFinalEventIsDeliveredEvenWhenFull(t *testing.T) {
	h, _ := newTestHub(Options{SubscriberBuf: 2})
	h.Claim("s", "r", "u")
	sub, _ := h.Subscribe("r", 0)
	for i := 0; i < 5; i++ {
		h.Publish("r", step(i))
	}
	h.Publish("r", final)
	got := drain(t, sub)
	last := got[len(got)-1]
	if !last.Final() || gapOf(t, got[len(got)-2]).Next != last.Seq {
		t.Fatalf("tail = %+v", got)
	}
}

func TestFinishedRunsAreKeptForTheRetention(t *testing.T) {
	h, clock := newTestHub(Options{})
	h.Claim("s", "r", "u")
	h.Publish("r", step(0))
	h.Publish("r", final)
	if info, ok := h.Info("r"); !ok || info.Live || info.LastSeq != 2 {
		t.Fatalf("info = %+v %v", info, ok)
	}
	if h.Publish("r", step(1)) != 0 {
		t.Fatal("a finished stream accepted an event")
	}
	clock.Add(DefaultRetention - time.Second)
	if _, ok := h.Info("r"); !ok {
		t.Fatal("forgotten before the retention")
	}
	clock.Add(2 * time.Second)
	if _, ok := h.Info("r"); ok {
		t.Fatal("kept past the retention")
	}
	// Runs nobody asks about are forgotten by the periodic sweep.
	h.Claim("s2", "r2", "u")
	h.Publish("r2", final)
	clock.Add(DefaultRetention + DefaultRetention/sweepEvery + time.Second)
	h.Claim("s3", "r3", "u")
	h.mu.Lock()
	_, kept := h.runs["r2"]
	h.mu.Unlock()
	if kept {
		t.Fatal("an expired run nobody looked up is still held")
	}
}

func TestWatchersHearEveryRunOfTheirOwner(t *testing.T) {
	h, _ := newTestHub(Options{})
	w := h.Watch("u")
	other := h.Watch("v")
	defer w.Close()
	defer other.Close()
	h.Claim("s", "r1", "u")
	h.Publish("r1", domain.NewEvent(domain.EventRunStarted, domain.RunStartedPayload{RunID: "r1"}))
	select {
	case <-w.Wake():
	case <-time.After(time.Second):
		t.Fatal("no wake")
	}
	if ids := w.Take(); len(ids) != 1 || ids[0] != "r1" {
		t.Fatalf("announced %v", ids)
	}
	if ids := other.Take(); len(ids) != 0 {
		t.Fatalf("another owner heard %v", ids)
	}
	if live := h.LiveRuns("u"); len(live) != 1 {
		t.Fatalf("live = %v", live)
	}
}

var _ ports.Clock = (*fakeClock)(nil)

// A waiter for a run to let go of its session wakes on the hub's signal:
// a Release, or the run's final event; a resumed claim waits afresh.
func TestFreedSignalsWhenTheRunLetsGoOfTheSession(t *testing.T) {
	h, _ := newTestHub(Options{})
	closed := func(ch <-chan struct{}) bool {
		select {
		case <-ch:
			return true
		default:
			return false
		}
	}
	if !closed(h.Freed("s", "r")) {
		t.Fatal("a run that holds nothing is already free")
	}
	if err := h.Claim("s", "r", "u"); err != nil {
		t.Fatal(err)
	}
	paused := h.Freed("s", "r")
	if closed(paused) || !closed(h.Freed("s", "other")) {
		t.Fatal("only the holder's signal waits")
	}
	h.Publish("r", domain.NewEvent(domain.EventInterrupted, domain.RunIDPayload{RunID: "r"}))
	if closed(paused) {
		t.Fatal("run.interrupted is not final: the run still holds the session")
	}
	h.Release("s", "r")
	if !closed(paused) {
		t.Fatal("Release did not wake the waiter")
	}
	h.Resume("r")
	if err := h.Claim("s", "r", "u"); err != nil {
		t.Fatal(err)
	}
	resumed := h.Freed("s", "r")
	if closed(resumed) {
		t.Fatal("a resumed claim must wait afresh")
	}
	h.Publish("r", domain.NewEvent(domain.EventOutput, domain.OutputPayload{RunID: "r"}))
	if !closed(resumed) {
		t.Fatal("the final event did not wake the waiter")
	}
	h.Release("s", "r") // the goroutine's late Release closes nothing twice
}

// A hold keeps runs off a session until released, and is refused while a
// run has the session.
func TestHoldKeepsRunsOffTheSession(t *testing.T) {
	h, _ := newTestHub(Options{})
	release, err := h.Hold("s")
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Claim("s", "r", "u"); !errs.Is(err, errs.Conflict) {
		t.Fatalf("claim during a hold = %v, want conflict", err)
	}
	if _, err := h.Hold("s"); !errs.Is(err, errs.Conflict) {
		t.Fatalf("second hold = %v, want conflict", err)
	}
	release()
	release() // idempotent
	if err := h.Claim("s", "r", "u"); err != nil {
		t.Fatalf("claim after the hold: %v", err)
	}
	if _, err := h.Hold("s"); !errs.Is(err, errs.Conflict) {
		t.Fatalf("hold during a run = %v, want conflict", err)
	}
}
