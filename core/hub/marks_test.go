package hub

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// recordedMarks is a Marks that remembers every write, failing on demand.
type recordedMarks struct {
	mu     sync.Mutex
	writes []int64
	fail   bool
}

func (m *recordedMarks) MarkRunSeq(_ context.Context, _ string, upto int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail {
		return errors.New("the store is down")
	}
	m.writes = append(m.writes, upto)
	return nil
}

func (m *recordedMarks) last() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.writes) == 0 {
		return 0
	}
	return m.writes[len(m.writes)-1]
}

// Every event a run numbers is at or below the mark written before it
// went out, and the mark is written once per MarkAhead events — so a
// crash's ending numbered past the mark repeats no id.
func TestEveryEventIsNumberedWithinADurableMark(t *testing.T) {
	marks := &recordedMarks{}
	h := New(Options{}, &fakeClock{now: time.Unix(1_700_000_000, 0)}, marks, nil)
	if err := h.Claim("s", "r", "u"); err != nil {
		t.Fatal(err)
	}
	sub, err := h.Subscribe("r", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	const n = 3*MarkAhead + 5
	for i := range n {
		marked := marks.last()
		seq := h.Publish("r", step(i))
		if seq > marks.last() {
			t.Fatalf("event %d went out past the mark %d", seq, marks.last())
		}
		if seq > marked && marks.last() == marked {
			t.Fatalf("event %d passed the mark %d without raising it", seq, marked)
		}
	}
	if got := len(marks.writes); got != 4 {
		t.Fatalf("%d events took %d mark writes, want 4 (one per %d): %v", n, got, MarkAhead, marks.writes)
	}
}

// A mark that cannot be written does not stop the run's events; the next
// event tries again.
func TestAFailedMarkIsTriedAgainAndHoldsNothingBack(t *testing.T) {
	marks := &recordedMarks{fail: true}
	h := New(Options{}, &fakeClock{now: time.Unix(1_700_000_000, 0)}, marks, nil)
	h.Claim("s", "r", "u")
	if seq := h.Publish("r", step(0)); seq != 1 {
		t.Fatalf("with the store down the event got seq %d", seq)
	}
	marks.mu.Lock()
	marks.fail = false
	marks.mu.Unlock()
	h.Publish("r", step(1))
	if marks.last() != 2+MarkAhead {
		t.Fatalf("the next event did not mark: %v", marks.writes)
	}
}

// A stream reopened at a paused run's last seq marks past it before its
// first event.
func TestAReopenedStreamMarksPastItsLastSeq(t *testing.T) {
	marks := &recordedMarks{}
	h := New(Options{}, &fakeClock{now: time.Unix(1_700_000_000, 0)}, marks, nil)
	h.Reopen("r", "s", "u", 500)
	if seq := h.Publish("r", step(0)); seq != 501 || marks.last() != 501+MarkAhead {
		t.Fatalf("seq %d, marks %v", seq, marks.writes)
	}
}

// A run whose row was written with its first mark numbers its first
// events without a write, and marks once they pass it.
func TestAPremarkedRunWritesNoMarkUntilItsEventsPassIt(t *testing.T) {
	marks := &recordedMarks{}
	h := New(Options{}, &fakeClock{now: time.Unix(1_700_000_000, 0)}, marks, nil)
	h.Claim("s", "r", "u")
	h.Premark("r", MarkAhead)
	for i := range MarkAhead {
		h.Publish("r", step(i))
	}
	if len(marks.writes) != 0 {
		t.Fatalf("%d premarked events wrote marks %v", MarkAhead, marks.writes)
	}
	if h.Publish("r", step(0)); marks.last() != 2*MarkAhead+1 {
		t.Fatalf("the event past the premark wrote %v", marks.writes)
	}
}
