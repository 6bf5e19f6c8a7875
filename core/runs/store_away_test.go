package runs_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/ports/porttest"
)

// TestARunsEndWaitsForTheStore: a run whose end cannot be written (the
// database is away) is not over anywhere until it is: no final event, its
// row running, its conversation busy. Once the store answers, the end is
// written — with the answer the store never took — and then announced: a
// final answer's turn goes with the end, so the run completes; a turn the
// store refused on its own (one with calls) fails the run, its text kept.
func TestARunsEndWaitsForTheStore(t *testing.T) {
	for _, c := range []struct {
		name    string
		replies []porttest.Reply
		refused int32 // the writes refused before the end waits
		ending  string
		status  domain.RunStatus
	}{
		{"a final answer", []porttest.Reply{{Text: "the answer"}}, 1, "run.output the answer", domain.RunCompleted},
		{"a turn with calls", []porttest.Reply{{Text: "the answer", Calls: []porttest.Call{{Name: "todo_write", Arguments: todo("x")}}}},
			2, "run.error persist_error", domain.RunError},
	} {
		t.Run(c.name, func(t *testing.T) { endWaitsForTheStore(t, c.replies, c.refused, c.ending, c.status) })
	}
}

func endWaitsForTheStore(t *testing.T, replies []porttest.Reply, refused int32, wantEnding string, wantStatus domain.RunStatus) {
	h := newHarness(t)
	run, _, sid, hold := h.heldRun(replies[0], replies[1:]...)
	sub, err := h.svc.Subscribe(context.Background(), h.user, run.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	h.away.Store(true)
	close(hold)
	deadline := time.Now().Add(wait)
	for h.refused.Load() < refused {
		if time.Now().After(deadline) {
			t.Fatalf("%d writes refused; the end was never tried", h.refused.Load())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := h.svc.Cancel(context.Background(), h.user, run.ID, domain.CancelAbort); err == nil ||
		!strings.Contains(err.Error(), "being recorded") {
		t.Fatalf("a cancel while the end waits: %v", err)
	}
	time.Sleep(50 * time.Millisecond) // let a wrongly published final event arrive
	if row := h.row(run.ID); row.Status != domain.RunRunning {
		t.Fatalf("with its end unwritten the row says %s", row.Status)
	}
	if _, busy := h.svc.Hub().Busy(sid); !busy {
		t.Fatal("with its end unwritten the conversation is free")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	for {
		ev, err := sub.Next(ctx)
		if err != nil {
			break
		}
		if ev.Final() {
			t.Fatalf("the final event %s went out before the end was written", ev.Type)
		}
	}
	cancel()
	h.away.Store(false)
	events := h.events(run.ID, 0)
	if got := ending(t, events); got != wantEnding {
		t.Fatalf("ending %q, want %q", got, wantEnding)
	}
	row := h.row(run.ID)
	if row.Status != wantStatus || row.LastSeq != last(events).Seq {
		t.Fatalf("row %s at %d after the final event %d", row.Status, row.LastSeq, last(events).Seq)
	}
	if !hasEntry(h.entries(sid), "the answer") {
		t.Fatalf("the answer the store never took is lost: %q", describe(h.entries(sid)))
	}
	if _, busy := h.svc.Hub().Busy(sid); busy {
		t.Fatal("the conversation is still busy after the end was written")
	}
}
