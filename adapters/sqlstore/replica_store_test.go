package sqlstore

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/ports"
	"github.com/agents-server/agents-server/ports/storetest"
)

// TestOrphanedRunsAreOnlyThoseOfGoneReplicas: the failover sweep ends the
// runs of replicas whose beat is too old (and of none at all), never its
// own nor a live replica's, and takes the gone replicas off the roll.
func TestOrphanedRunsAreOnlyThoseOfGoneReplicas(t *testing.T) {
	db := openTemp(t)
	ctx := context.Background()
	now := when.Add(time.Hour)
	bound := 30 * time.Second
	for replica, seen := range map[string]time.Time{"alive": now.Add(-bound / 2), "dead": now.Add(-2 * bound), "me": now.Add(-5 * bound)} {
		if err := db.Beat(ctx, replica, seen); err != nil {
			t.Fatal(err)
		}
	}
	s := newSession(t, db, "replicas")
	runOn := func(id, replica string) {
		t.Helper()
		r := domain.Run{ID: id, SessionID: s.ID, OwnerID: s.OwnerID, Status: domain.RunRunning, CreatedAt: when, UpdatedAt: when, Replica: replica}
		if err := db.CreateRun(ctx, r); err != nil {
			t.Fatal(err)
		}
		if got, _ := db.FindRun(ctx, id); got.Replica != replica {
			t.Fatalf("run %s stored on %q, want %q", id, got.Replica, replica)
		}
	}
	runOn("on-alive", "alive")
	runOn("on-dead", "dead")
	runOn("on-me", "me")
	runOn("on-unknown", "never-beat")

	out, err := db.FailOrphanedRuns(ctx, ports.Orphans{Self: "me", AliveSince: now.Add(-bound), Code: domain.CodeServerRestarted, Message: "gone", At: now})
	if err != nil {
		t.Fatal(err)
	}
	ids, _ := runIDs(out, nil)
	slices.Sort(ids)
	if !slices.Equal(ids, []string{"on-dead", "on-unknown"}) {
		t.Fatalf("failed %v, want the dead replica's and the unknown one's", ids)
	}
	for id, want := range map[string]domain.RunStatus{"on-alive": domain.RunRunning, "on-me": domain.RunRunning, "on-dead": domain.RunError} {
		if r, _ := db.FindRun(ctx, id); r.Status != want {
			t.Fatalf("%s is %s, want %s", id, r.Status, want)
		}
	}
	var roll []string
	rows, err := db.read.QueryContext(ctx, `SELECT id FROM replicas ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id string
		rows.Scan(&id)
		roll = append(roll, id)
	}
	rows.Close()
	if !slices.Equal(roll, []string{"alive", "me"}) {
		t.Fatalf("roll after the sweep = %v, want the gone replica off it", roll)
	}
	// Self restarted: what it ran is its previous life's, and ends.
	if out, err := db.FailOrphanedRuns(ctx, ports.Orphans{Self: "me", Restarted: true, AliveSince: now.Add(-bound),
		Code: domain.CodeServerRestarted, Message: "gone", At: now}); err != nil || len(out) != 1 || out[0].ID != "on-me" {
		t.Fatalf("a restart's sweep ended %+v, %v; want its own previous run", out, err)
	}
	// The live replica leaves cleanly: its runs are the next sweep's.
	if err := db.Leave(ctx, "alive"); err != nil {
		t.Fatal(err)
	}
	if out, err := db.FailOrphanedRuns(ctx, ports.Orphans{Self: "me", AliveSince: now.Add(-bound), Code: domain.CodeServerRestarted, Message: "gone", At: now}); err != nil || len(out) != 1 || out[0].ID != "on-alive" {
		t.Fatalf("after a clean leave the sweep ended %+v, %v", out, err)
	}
}

// TestALeaseHasOneHolderUntilItExpires: a lease is taken, renewed by its
// holder, refused to others until it expires, then taken over; leaving the
// roll gives it up at once.
func TestALeaseHasOneHolderUntilItExpires(t *testing.T) {
	db := openTemp(t)
	ctx := context.Background()
	ttl := 10 * time.Second
	claim := func(holder string, at time.Time, want bool) {
		t.Helper()
		got, err := db.ClaimLease(ctx, "ticks", holder, at, ttl)
		if err != nil || got != want {
			t.Fatalf("%s claims at +%s: %v, %v; want %v", holder, at.Sub(when), got, err, want)
		}
	}
	claim("a", when, true)
	claim("b", when.Add(time.Second), false)
	claim("a", when.Add(5*time.Second), true) // renewed: now until +15s
	claim("b", when.Add(12*time.Second), false)
	claim("b", when.Add(15*time.Second), true) // a's lapsed
	claim("a", when.Add(16*time.Second), false)
	if ok, _ := db.ClaimLease(ctx, "other", "a", when.Add(16*time.Second), ttl); !ok {
		t.Fatal("a lease of another name was refused")
	}
	if err := db.Leave(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	claim("a", when.Add(17*time.Second), true)

	// Replicas racing for a free lease: exactly one wins.
	for round := range 20 {
		at := when.Add(time.Hour * time.Duration(round+1))
		var wins [4]bool
		storetest.Race(4, func(i int) {
			ok, err := db.ClaimLease(ctx, "race", string(rune('p'+i)), at, ttl)
			if err != nil {
				t.Error(err)
			}
			wins[i] = ok
		})
		n := 0
		for _, w := range wins {
			if w {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("round %d: %d replicas won the lease", round, n)
		}
	}
}
