package follow_test

import (
	"context"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/follow"
	"github.com/agents-server/agents-server/core/hub"
	"github.com/agents-server/agents-server/ports/porttest"
)

var (
	ann = domain.Principal{User: domain.User{ID: "ann", Role: domain.RoleMember}}
	bob = domain.Principal{User: domain.User{ID: "bob", Role: domain.RoleMember}}
)

type world struct {
	hub   *hub.Hub
	store *porttest.RunStore
	clock *porttest.Clock
}

func setup(t *testing.T) world {
	t.Helper()
	clock := porttest.NewClock(time.Unix(1e9, 0))
	return world{hub: hub.New(hub.Options{}, clock, nil, nil), store: &porttest.RunStore{}, clock: clock}
}

// run stores a run of ann's in status st.
func (w world) run(t *testing.T, id string, st domain.RunStatus) domain.Run {
	t.Helper()
	r := domain.Run{ID: id, SessionID: "s-" + id, OwnerID: ann.User.ID, Status: st, CreatedAt: w.clock.Now(),
		UpdatedAt: w.clock.Now()}
	if st == domain.RunCompleted {
		now := w.clock.Now()
		r.FinalOutput, r.EndedAt, r.LastSeq = "done", &now, 7
	}
	if err := w.store.CreateRun(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestAFinishedRunIsReadAndReplayedFromItsRecord(t *testing.T) {
	w := setup(t)
	ctx := context.Background()
	w.run(t, "r1", domain.RunCompleted)
	runs := follow.New(w.hub, w.store, false)
	got, err := runs.Get(ctx, ann, "r1")
	if err != nil || got.Status != domain.RunCompleted {
		t.Fatalf("Get = %+v, %v", got, err)
	}
	if _, err := runs.Get(ctx, bob, "r1"); !errs.Is(err, errs.NotFound) {
		t.Fatalf("another's run: %v; want not_found", err)
	}
	sub, err := runs.Subscribe(ctx, ann, "r1", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	var types []string
	for {
		ev, err := sub.Next(ctx)
		if err != nil {
			break
		}
		types = append(types, ev.Type)
	}
	if len(types) != 2 || types[0] != domain.EventGap || types[1] != domain.EventOutput {
		t.Fatalf("the replay is %v; want a gap, then the output", types)
	}
}

func TestALiveRunIsFollowedInTheHub(t *testing.T) {
	w := setup(t)
	ctx := context.Background()
	r := w.run(t, "r2", domain.RunRunning)
	if err := w.hub.Claim(r.SessionID, r.ID, r.OwnerID); err != nil {
		t.Fatal(err)
	}
	w.hub.Reopen(r.ID, r.SessionID, r.OwnerID, 0)
	w.hub.Publish(r.ID, domain.NewEvent(domain.EventStep, domain.DeltaPayload{Delta: "hi"}))
	runs := follow.New(w.hub, w.store, false)
	if got, err := runs.Get(ctx, ann, r.ID); err != nil || got.LastSeq != 1 {
		t.Fatalf("Get = %+v, %v; want the stream's head", got, err)
	}
	if _, err := runs.Get(ctx, bob, r.ID); !errs.Is(err, errs.NotFound) {
		t.Fatalf("another's live run: %v", err)
	}
	if _, err := runs.Subscribe(ctx, bob, r.ID, 0); !errs.Is(err, errs.NotFound) {
		t.Fatalf("another's live stream: %v", err)
	}
	sub, err := runs.Subscribe(ctx, ann, r.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if ev, err := sub.Next(ctx); err != nil || ev.Type != domain.EventStep {
		t.Fatalf("first event %+v, %v", ev, err)
	}
}

func TestARunAnotherReplicaRunsIsFollowedOnlyWithPeers(t *testing.T) {
	w := setup(t)
	ctx := context.Background()
	w.run(t, "r3", domain.RunRunning)
	if _, err := follow.New(w.hub, w.store, false).Subscribe(ctx, ann, "r3", 0); !errs.Is(err, errs.Unavailable) {
		t.Fatalf("alone: %v; want unavailable", err)
	}
	sub, err := follow.New(w.hub, w.store, true).Subscribe(ctx, ann, "r3", 0)
	if err != nil {
		t.Fatalf("with peers: %v; want the stream reopened here", err)
	}
	sub.Close()
	if _, ok := w.hub.Info("r3"); !ok {
		t.Fatal("the stream was not reopened")
	}
	if _, err := follow.New(w.hub, w.store, true).Subscribe(ctx, ann, "nope", 0); !errs.Is(err, errs.NotFound) {
		t.Fatalf("an unknown run: %v", err)
	}
}
