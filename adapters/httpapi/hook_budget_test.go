package httpapi

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// The webhook budgets are a map keyed by what strangers send (any id in
// the URL, from any address): it holds only the pairs that failed lately,
// and a long id is cut to the length of a real one.
func TestHookBudgetsForgetPairsWithNothingToRemember(t *testing.T) {
	h := newHookBudgets(Budget{PerSecond: 1, Burst: 2})
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	h.swept = t0
	for i := range 1000 {
		h.spendAt(pairOf(fmt.Sprintf("guess-%d", i), "192.0.2.1"), t0)
	}
	spent := pairOf("hook", "192.0.2.2")
	h.spendAt(spent, t0)
	h.spendAt(spent, t0)
	if h.spent(spent, t0) == nil || h.spent(pairOf("hook", "192.0.2.3"), t0) != nil {
		t.Fatal("a pair's budget is its own")
	}
	if len(h.pairs) != 1001 {
		t.Fatalf("%d pairs kept, want 1001", len(h.pairs))
	}
	// Past the sweep interval every bucket is full again: a fresh one.
	later := t0.Add(peerIdle + time.Second)
	h.spendAt(spent, later)
	if len(h.pairs) != 1 {
		t.Fatalf("after the sweep %d pairs kept, want the one that just failed", len(h.pairs))
	}

	// A budget that never refills is forgotten once the pair is idle.
	never := newHookBudgets(Budget{PerSecond: 0, Burst: 1})
	never.swept = t0
	never.spendAt(spent, t0)
	never.spendAt(pairOf("other", "192.0.2.9"), t0.Add(peerIdle-time.Minute))
	never.spendAt(pairOf("third", "192.0.2.9"), t0.Add(peerIdle+time.Second))
	if len(never.pairs) != 2 || never.pairs[spent] != nil {
		t.Fatalf("kept %v, want the idle pair gone", never.pairs)
	}

	if k := pairOf(strings.Repeat("x", 1<<20), "192.0.2.1"); len(k.trigger) != maxHookKey {
		t.Fatalf("a %d-byte id is kept whole", len(k.trigger))
	}
}
