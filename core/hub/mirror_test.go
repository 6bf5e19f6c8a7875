package hub

import (
	"context"
	"sync"
	"testing"

	"github.com/agents-server/agents-server/core/domain"
)

// pipe is a relay into another hub: two replicas' hubs, joined.
type pipe struct {
	mu      sync.Mutex
	to      *Hub
	notices int
}

func (p *pipe) RunEvent(runID, sessionID, ownerID string, ev domain.Event) {
	p.to.Mirror(runID, sessionID, ownerID, ev)
}

func (p *pipe) Notice(ownerID string, ev domain.Event) {
	p.mu.Lock()
	p.notices++
	p.mu.Unlock()
	p.to.MirrorNotice(ownerID, ev)
}

func seqs(evs []domain.Event) []int64 {
	out := make([]int64, len(evs))
	for i, ev := range evs {
		out[i] = ev.Seq
	}
	return out
}

// TestAMirroredRunStreamsOnTheOtherReplica: a run numbered on A reaches a
// watcher on B with every event once, in order, from its start; repeats are
// dropped; B's owner watchers hear it start.
func TestAMirroredRunStreamsOnTheOtherReplica(t *testing.T) {
	b, _ := newTestHub(Options{})
	a, _ := newRelayedHub(Options{}, &pipe{to: b})
	watch := b.Watch("u")
	defer watch.Close()

	if err := a.Claim("s", "r", "u"); err != nil {
		t.Fatal(err)
	}
	a.Publish("r", domain.NewEvent(domain.EventRunStarted, domain.RunStartedPayload{RunID: "r", SessionID: "s"}))
	sub, err := b.Subscribe("r", 0)
	if err != nil {
		t.Fatalf("B does not know A's run: %v", err)
	}
	for i := range 10 {
		a.Publish("r", step(i))
	}
	// A repeat (a notification delivered twice) changes nothing.
	b.Mirror("r", "s", "u", domain.Event{Type: domain.EventStep, Seq: 3, Payload: []byte(`{}`)})
	a.Publish("r", domain.NewEvent(domain.EventOutput, domain.OutputPayload{RunID: "r"}))
	got := drain(t, sub)
	if want := 12; len(got) != want || got[0].Type != domain.EventRunStarted || !got[len(got)-1].Final() {
		t.Fatalf("B's watcher got %d events %v, want %d from run.started to the final", len(got), seqs(got), want)
	}
	for i, ev := range got {
		if ev.Seq != int64(i+1) {
			t.Fatalf("B's watcher got seqs %v", seqs(got))
		}
	}
	if info, ok := b.Info("r"); !ok || info.Live || info.LastSeq != 12 || info.OwnerID != "u" || info.SessionID != "s" {
		t.Fatalf("B's info = %+v, %v", info, ok)
	}
	if ids := watch.Take(); len(ids) != 1 || ids[0] != "r" {
		t.Fatalf("B's owner watcher heard %v; want the run once", ids)
	}
	// B's session slot is not A's: B's own run there is the store's to refuse.
	if _, busy := b.Busy("s"); busy {
		t.Fatal("a mirrored run holds B's session slot")
	}
}

// TestAMirrorSeenLateStartsWithAGap: a replica that hears of a run midway
// serves it from there, with a run.gap for what it never held.
func TestAMirrorSeenLateStartsWithAGap(t *testing.T) {
	b, _ := newTestHub(Options{})
	for seq := int64(5); seq <= 7; seq++ {
		ev := step(int(seq))
		ev.Seq = seq
		b.Mirror("r", "s", "u", ev)
	}
	sub, err := b.Subscribe("r", 0)
	if err != nil {
		t.Fatal(err)
	}
	ev, _ := sub.Next(context.Background())
	if g := gapOf(t, ev); g.LastGood != 0 || g.Next != 5 {
		t.Fatalf("gap = %+v", g)
	}
	for want := int64(5); want <= 7; want++ {
		if ev, _ := sub.Next(context.Background()); ev.Seq != want {
			t.Fatalf("got seq %d, want %d", ev.Seq, want)
		}
	}
}

// TestAnEndedMirrorReopensForAResumedRun: a run that ended here (as far as
// this replica knew) and goes on elsewhere takes events again, and its
// owner's watchers hear it is back; a final event from a failover is
// relayed and ends it on both.
func TestAnEndedMirrorReopensForAResumedRun(t *testing.T) {
	b, _ := newTestHub(Options{})
	relay := &pipe{to: b}
	a, _ := newRelayedHub(Options{}, relay)
	a.Reopen("r", "s", "u", 4) // a paused run, as every replica reopens it at start
	b.Reopen("r", "s", "u", 4)
	watch := b.Watch("u")
	defer watch.Close()
	a.Resume("r")
	a.Publish("r", step(5))
	if info, _ := b.Info("r"); info.LastSeq != 5 || !info.Live {
		t.Fatalf("B = %+v", info)
	}
	// The failover on A concludes it, numbered from a checkpoint that
	// lags what both heard: the stream ends after what each heard.
	a.Conclude("r", "s", "u", domain.Event{Type: domain.EventError, Seq: 3, Payload: []byte(`{}`)})
	if info, _ := b.Info("r"); info.LastSeq != 6 || info.Live {
		t.Fatalf("B after the conclusion = %+v", info)
	}
	if info, _ := a.Info("r"); info.LastSeq != 6 || info.Live {
		t.Fatalf("A after the conclusion = %+v", info)
	}
	// A repeat of the conclusion finds the stream ended and changes nothing.
	b.Mirror("r", "s", "u", domain.Event{Type: domain.EventError, Seq: 3, Payload: []byte(`{}`)})
	if info, _ := b.Info("r"); info.LastSeq != 6 {
		t.Fatalf("B after a repeated conclusion = %+v", info)
	}
	// Notices cross too.
	a.Notify("u", domain.NewEvent(domain.EventStep, domain.DeltaPayload{}))
	if relay.notices != 1 {
		t.Fatalf("%d notices relayed", relay.notices)
	}
	if n := watch.TakeNotices(); len(n) != 1 {
		t.Fatalf("B's watcher got %d notices", len(n))
	}
}

// TestAConclusionOfAnUnknownRunMakesNoStream: the end of a run this
// replica never streamed (after a restart, everything) leaves the hub
// without it, so a resume is served from the store with its own cursor.
func TestAConclusionOfAnUnknownRunMakesNoStream(t *testing.T) {
	h, _ := newTestHub(Options{})
	h.Conclude("r", "s", "u", domain.Event{Type: domain.EventError, Seq: 40, Payload: []byte(`{}`)})
	if _, ok := h.Info("r"); ok {
		t.Fatal("a conclusion made a stream for a run never streamed here")
	}
}
