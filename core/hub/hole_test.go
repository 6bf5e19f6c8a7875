package hub

import (
	"context"
	"testing"

	"github.com/agents-server/agents-server/core/domain"
)

// numbered is step(n) numbered n, as the run's replica sent it.
func numbered(n int64) domain.Event {
	ev := step(int(n))
	ev.Seq = n
	return ev
}

// mirrorUpTo files events 1..n on h, as a relay would.
func mirrorUpTo(h *Hub, n int64) {
	for seq := int64(1); seq <= n; seq++ {
		h.Mirror("r", "s", "u", numbered(seq))
	}
}

// nextSeqs reads n events from sub and returns their seqs and types.
func nextSeqs(t *testing.T, sub *Subscription, n int) ([]int64, []string) {
	t.Helper()
	var seqs []int64
	var types []string
	for range n {
		ev, err := sub.Next(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		seqs, types = append(seqs, ev.Seq), append(types, ev.Type)
	}
	return seqs, types
}

// TestAnEventPastAHoleWaitsForTheFill: what arrives after the backplane
// lost some events is held back; the relay is told the hole once; the
// owner's answer fills it and every watcher sees the run whole, in order.
func TestAnEventPastAHoleWaitsForTheFill(t *testing.T) {
	owner, _ := newTestHub(Options{})
	b, _ := newTestHub(Options{})
	for seq := int64(1); seq <= 9; seq++ {
		owner.Mirror("r", "s", "u", numbered(seq))
	}
	mirrorUpTo(b, 3)
	sub, err := b.Subscribe("r", 3)
	if err != nil {
		t.Fatal(err)
	}
	after, lacking := b.Mirror("r", "s", "u", numbered(7))
	if !lacking || after != 3 {
		t.Fatalf("an event past a hole: lacking %v after %d, want true after 3", lacking, after)
	}
	if _, lacking := b.Mirror("r", "s", "u", numbered(8)); lacking {
		t.Fatal("the same hole was reported twice")
	}
	if head, open := head(b, "r"); head != 3 || !open {
		t.Fatalf("head %d open %v while the hole is open; want 3, open", head, open)
	}
	missing, ok := owner.Since("r", after)
	if !ok {
		t.Fatal("the owner does not hold its run")
	}
	b.Fill("r", missing)
	got, types := nextSeqs(t, sub, 6)
	for i, seq := range got {
		if seq != int64(4+i) || types[i] != domain.EventStep {
			t.Fatalf("the watcher got %v %v, want 4…9 in order", got, types)
		}
	}
	if head, _ := head(b, "r"); head != 9 {
		t.Fatalf("head %d after the fill, want 9", head)
	}
}

// TestAHoleNothingFillsIsAnExplicitGap: when the run's replica cannot
// answer, the hole becomes one run.gap saying exactly what is missing,
// then the held events follow.
func TestAHoleNothingFillsIsAnExplicitGap(t *testing.T) {
	b, _ := newTestHub(Options{})
	mirrorUpTo(b, 3)
	sub, _ := b.Subscribe("r", 3)
	b.Mirror("r", "s", "u", numbered(7))
	b.Mirror("r", "s", "u", numbered(8))
	b.Skip("r")
	ev, _ := sub.Next(context.Background())
	if g := gapOf(t, ev); g.LastGood != 3 || g.Next != 7 || g.Dropped != 3 || ev.Seq != 6 {
		t.Fatalf("gap %+v at seq %d; want last_good 3, next 7, dropped 3 at 6", g, ev.Seq)
	}
	if got, _ := nextSeqs(t, sub, 2); got[0] != 7 || got[1] != 8 {
		t.Fatalf("after the gap: %v, want 7 8", got)
	}
	// A watcher subscribing later sees the same: the gap is part of the
	// stream here.
	late, _ := b.Subscribe("r", 2)
	got, types := nextSeqs(t, late, 4)
	if got[0] != 3 || types[1] != domain.EventGap || got[2] != 7 || got[3] != 8 {
		t.Fatalf("a late watcher got %v %v", got, types)
	}
	if b.Stats().Gaps != 1 {
		t.Fatalf("gaps counted %d, want 1", b.Stats().Gaps)
	}
}

// TestAPartialAnswerLeavesAGapOnlyForWhatItLacked: the owner holds only
// part of what is missing (its stream was reopened after a restart): the
// gap covers exactly the rest.
func TestAPartialAnswerLeavesAGapOnlyForWhatItLacked(t *testing.T) {
	b, _ := newTestHub(Options{})
	mirrorUpTo(b, 2)
	sub, _ := b.Subscribe("r", 2)
	b.Mirror("r", "s", "u", numbered(9))
	b.Fill("r", []domain.Event{numbered(6), numbered(7), numbered(8)})
	got, types := nextSeqs(t, sub, 5)
	if types[0] != domain.EventGap || got[0] != 5 || got[1] != 6 || got[4] != 9 {
		t.Fatalf("got %v %v; want a gap for 3…5, then 6…9", got, types)
	}
}

// TestAConclusionPastAHoleEndsTheStream: a failover's end for a run whose
// replica is gone cannot be filled: the stream ends after a gap.
func TestAConclusionPastAHoleEndsTheStream(t *testing.T) {
	b, _ := newTestHub(Options{})
	mirrorUpTo(b, 2)
	b.Conclude("r", "s", "u", domain.Event{Type: domain.EventError, Seq: 10, Payload: []byte(`{}`)})
	if seq, open := head(b, "r"); open || seq != 10 {
		t.Fatalf("head %d open %v after the conclusion; want 10, ended", seq, open)
	}
}

// TestTooManyHeldEventsGiveTheHoleUp: a hole nobody fills holds back a
// bounded number of events, then becomes a gap.
func TestTooManyHeldEventsGiveTheHoleUp(t *testing.T) {
	b, _ := newTestHub(Options{})
	mirrorUpTo(b, 1)
	for seq := int64(3); seq <= maxHeld+3; seq++ {
		b.Mirror("r", "s", "u", numbered(seq))
	}
	if seq, _ := head(b, "r"); seq != maxHeld+3 {
		t.Fatalf("head %d, want every held event filed after the gap", seq)
	}
}

// TestAnEndedMirrorTakesNothingMore: a run whose final event was filed is
// over; events a replica cut off goes on sending for it are not heard.
func TestAnEndedMirrorTakesNothingMore(t *testing.T) {
	b, _ := newTestHub(Options{})
	mirrorUpTo(b, 3)
	b.Conclude("r", "s", "u", domain.Event{Type: domain.EventError, Seq: 2, Payload: []byte(`{}`)})
	for seq := int64(5); seq <= 7; seq++ {
		b.Mirror("r", "s", "u", numbered(seq))
	}
	b.Fill("r", []domain.Event{numbered(8)})
	if seq, open := head(b, "r"); open || seq != 4 {
		t.Fatalf("head %d open %v; want the stream ended at 4", seq, open)
	}
}

// TestAnotherReplicasGapIsRebasedHere: an answer that holds a run.gap of
// the answering replica's stream stands for numbers lost there too; here
// the gap runs from this stream's own head.
func TestAnotherReplicasGapIsRebasedHere(t *testing.T) {
	b, _ := newTestHub(Options{})
	mirrorUpTo(b, 5)
	sub, _ := b.Subscribe("r", 5)
	theirs := domain.NewEvent(domain.EventGap, domain.GapPayload{RunID: "r", Dropped: 6, LastGood: 2, Next: 9})
	theirs.Seq = 8
	b.Fill("r", []domain.Event{theirs, numbered(9)})
	ev, _ := sub.Next(context.Background())
	if g := gapOf(t, ev); g.LastGood != 5 || g.Next != 9 || g.Dropped != 3 || ev.Seq != 8 {
		t.Fatalf("gap %+v at %d; want last_good 5, next 9, dropped 3 at 8", g, ev.Seq)
	}
	if ev, _ := sub.Next(context.Background()); ev.Seq != 9 {
		t.Fatalf("after the gap: %d", ev.Seq)
	}
	// A gap of numbers this stream already has is nothing here.
	b.Fill("r", []domain.Event{theirs})
	if seq, _ := head(b, "r"); seq != 9 {
		t.Fatalf("head %d after a stale gap", seq)
	}
}

// head is a stream's last seq and whether it is still open.
func head(h *Hub, runID string) (int64, bool) {
	info, _ := h.Info(runID)
	return info.LastSeq, info.Live
}
