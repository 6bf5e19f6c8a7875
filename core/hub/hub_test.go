package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
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
	return newRelayedHub(opts, nil)
}

// newRelayedHub is newTestHub relaying through relay.
func newRelayedHub(opts Options, relay Relay) (*Hub, *fakeClock) {
	c := &fakeClock{now: time.Unix(1_700_000_000, 0)}
	return New(opts, c, nil, relay), c
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

// covers is the first seq an event stands for: first_seq on a merged
// stretch of fragments, else its own.
func covers(t *testing.T, ev domain.Event) (int64, string) {
	t.Helper()
	var p domain.ToolProgressPayload
	if err := json.Unmarshal(ev.Payload, &p); err != nil {
		t.Fatal(err)
	}
	if p.FirstSeq > 0 {
		return p.FirstSeq, p.Delta
	}
	return ev.Seq, p.Delta
}

func TestAWatcherFromAnyCursorGetsEveryEventAfterIt(t *testing.T) {
	h, _ := newTestHub(Options{RingSize: 8})
	h.Claim("s", "r", "u")
	h.Publish("r", domain.NewEvent(domain.EventRunStarted, domain.RunStartedPayload{RunID: "r", SessionID: "s", Input: "hi"}))
	// Text, a tool call, the tool's progress, reasoning, more text: the
	// ring keeps the last 8, the history the rest.
	want := map[int64]string{} // seq → fragment
	for i := 0; i < 40; i++ {
		var ev domain.Event
		switch {
		case i == 12:
			ev = domain.NewEvent(domain.EventToolCall, domain.ToolCallPayload{RunID: "r", ToolCallID: "c1", ToolName: "exec"})
		case i > 12 && i < 20:
			ev = domain.NewEvent(domain.EventToolProgress, domain.ToolProgressPayload{RunID: "r", CallID: "c1", ToolName: "exec", Delta: fmt.Sprint(i, ";")})
		case i >= 20 && i < 25:
			ev = domain.NewEvent(domain.EventReasoning, domain.DeltaPayload{RunID: "r", Delta: fmt.Sprint("r", i)})
		default:
			ev = step(i)
		}
		seq := h.Publish("r", ev)
		var p domain.ToolProgressPayload
		json.Unmarshal(ev.Payload, &p)
		want[seq] = p.Delta
	}
	// While the run is live (the ring holds the newest), then once it has
	// ended (everything compacted): every cursor gets exactly what follows.
	sweep := func(head int64) {
		t.Helper()
		for cursor := int64(0); cursor <= head; cursor++ {
			sub, _ := h.Subscribe("r", cursor)
			var got []domain.Event
			for sub.Pending() > 0 {
				ev, _ := sub.Next(context.Background())
				got = append(got, ev)
			}
			sub.Close()
			next := cursor + 1
			for _, ev := range got {
				first, delta := covers(t, ev)
				if first != next || ev.Seq < first {
					t.Fatalf("cursor %d: %s covers %d…%d, want it to start at %d", cursor, ev.Type, first, ev.Seq, next)
				}
				var text string
				for s := first; s <= ev.Seq; s++ {
					text += want[s]
				}
				if delta != text {
					t.Fatalf("cursor %d: %s %d…%d carries %q, want %q", cursor, ev.Type, first, ev.Seq, delta, text)
				}
				next = ev.Seq + 1
			}
			if next != head+1 {
				t.Fatalf("cursor %d: replay ended before %d", cursor, head+1)
			}
		}
	}
	sweep(41)
	h.Publish("r", final)
	sweep(42)
	// From the start of the ended run: run.started, the stretches that left
	// the ring merged, the ring (short enough to stay verbatim).
	sub, _ := h.Subscribe("r", 0)
	got := drain(t, sub)
	if got[0].Type != domain.EventRunStarted || got[0].Seq != 1 || len(got) != 1+1+1+1+1+1+8 {
		t.Fatalf("from the start: %d events, first %+v", len(got), got[0])
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

// A long run is compacted when it ends (kept for replay through the
// retention at the cost of its text); a short one stays verbatim.
func TestAnEndedLongRunIsCompacted(t *testing.T) {
	h, _ := newTestHub(Options{})
	for _, run := range []struct {
		id     string
		deltas int
		want   int
	}{{"long", verbatimTail + 10, 3}, {"short", 10, 12}} {
		h.Claim("s-"+run.id, run.id, "u")
		h.Publish(run.id, domain.NewEvent(domain.EventRunStarted, domain.RunStartedPayload{RunID: run.id}))
		for i := 0; i < run.deltas; i++ {
			h.Publish(run.id, step(i))
		}
		h.Publish(run.id, final)
		sub, _ := h.Subscribe(run.id, 0)
		if got := drain(t, sub); len(got) != run.want || !got[len(got)-1].Final() {
			t.Fatalf("%s run replays %d events, want %d", run.id, len(got), run.want)
		}
	}
}

func TestAReopenedStreamSaysItsStartIsGone(t *testing.T) {
	h, _ := newTestHub(Options{})
	h.Reopen("r", "s", "u", 40) // a paused run, after a restart
	h.Publish("r", step(0))
	h.Publish("r", final)
	sub, _ := h.Subscribe("r", 0)
	got := drain(t, sub)
	if g := gapOf(t, got[0]); g.LastGood != 0 || g.Next != 41 || g.Dropped != 40 || got[1].Seq != 41 || len(got) != 3 {
		t.Fatalf("replay = %+v", got)
	}
	sub, _ = h.Subscribe("r", 40)
	if got = drain(t, sub); len(got) != 2 || got[0].Seq != 41 {
		t.Fatalf("from the pause = %+v", got)
	}
}

func TestReplayHandsOverItsEventsAndEnds(t *testing.T) {
	h, _ := newTestHub(Options{})
	sub := h.Replay("r", []domain.Event{step(0), final})
	if got := drain(t, sub); len(got) != 2 || !got[1].Final() {
		t.Fatalf("replay = %+v", got)
	}
	sub.Close() // a subscription of no stream closes quietly
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
	if st := h.Stats(); st.Events != 12 || st.Gaps != 1 || st.LiveRuns != 0 {
		t.Fatalf("stats = %+v", st)
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

// Fragments that need escaping merge into the text they carried: the
// merged payload is valid JSON and decodes to their join.
func TestMergedFragmentsKeepEscapedText(t *testing.T) {
	h, _ := newTestHub(Options{RingSize: 1})
	h.Claim("s", "r", "u")
	parts := []string{`a"b`, "\n\t", `"delta":"x`, "é😀", `\`, "<&>", "\u2028"}
	for _, p := range parts {
		h.Publish("r", domain.NewEvent(domain.EventStep, domain.DeltaPayload{RunID: "r", Delta: p}))
	}
	h.Publish("r", final)
	for cursor := 0; cursor < len(parts); cursor++ {
		sub, _ := h.Subscribe("r", int64(cursor))
		got := drain(t, sub)
		var d domain.DeltaPayload
		if err := json.Unmarshal(got[0].Payload, &d); err != nil || !json.Valid(got[0].Payload) {
			t.Fatalf("cursor %d: %s: %v", cursor, got[0].Payload, err)
		}
		if want := strings.Join(parts[cursor:], ""); d.Delta != want || d.RunID != "r" {
			t.Fatalf("cursor %d: %q, want %q", cursor, d.Delta, want)
		}
	}
}

// A writer's idle mark ends a wait with ErrIdle, but never hides a queued
// event: what is queued comes first.
func TestAnIdleMarkEndsOnlyAnEmptyWait(t *testing.T) {
	h, _ := newTestHub(Options{})
	if err := h.Claim("s", "r", "u"); err != nil {
		t.Fatal(err)
	}
	h.Publish("r", domain.NewEvent(domain.EventRunStarted, domain.RunStartedPayload{RunID: "r"}))
	sub, err := h.Subscribe("r", 0)
	if err != nil {
		t.Fatal(err)
	}
	fired := make(chan time.Time, 1)
	fired <- time.Time{}
	if ev, err := sub.NextBefore(context.Background(), fired); err != nil || ev.Type != domain.EventRunStarted {
		t.Fatalf("a queued event behind a fired mark: %+v, %v", ev, err)
	}
	if _, err := sub.NextBefore(context.Background(), fired); !errors.Is(err, ErrIdle) {
		t.Fatalf("an empty wait past the mark: %v", err)
	}
	h.Publish("r", step(2))
	if ev, err := sub.NextBefore(context.Background(), make(chan time.Time)); err != nil || ev.Seq != 2 {
		t.Fatalf("the next event: %+v, %v", ev, err)
	}
}
