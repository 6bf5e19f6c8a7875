// Package storetest holds the contracts of store ports, as suites every
// implementation runs — the SQL store on SQLite and on Postgres, and the
// in-memory fake in porttest — so a fake that disagrees with the real store
// is a failing test.
package storetest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// HookDeliveries is the contract of ports.HookDeliveryStore: holding a
// delivery is the replay guard (one holder among Racers, conflict for the
// rest), a release lets it be sent again, an expired row is taken over and
// pruned. s must hold no deliveries.
func HookDeliveries(t *testing.T, s ports.HookDeliveryStore) {
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	until := now.Add(2 * domain.HookWindow)
	d := domain.HookDelivery{TriggerID: "tr1", Timestamp: "1796126400", BodyHash: "aa", Until: until}
	hold := func(d domain.HookDelivery, at time.Time) error {
		t.Helper()
		err := s.HoldDelivery(ctx, d, at)
		if err != nil && errs.CodeOf(err) != errs.Conflict {
			t.Fatalf("hold %+v: %v, want nil or conflict", d, err)
		}
		return err
	}

	if err := hold(d, now); err != nil {
		t.Fatalf("the first hold: %v", err)
	}
	if err := hold(d, now.Add(time.Minute)); err == nil {
		t.Fatal("the same delivery was held twice")
	}
	// Another trigger, timestamp or body is another delivery.
	for _, other := range []domain.HookDelivery{
		{TriggerID: "tr2", Timestamp: d.Timestamp, BodyHash: d.BodyHash, Until: until},
		{TriggerID: d.TriggerID, Timestamp: "1796126401", BodyHash: d.BodyHash, Until: until},
		{TriggerID: d.TriggerID, Timestamp: d.Timestamp, BodyHash: "bb", Until: until},
	} {
		if err := hold(other, now); err != nil {
			t.Fatalf("hold %+v beside %+v: %v", other, d, err)
		}
	}

	// Racers for one delivery: exactly one holds it.
	race := domain.HookDelivery{TriggerID: "tr1", Timestamp: "1796126402", BodyHash: "cc", Until: until}
	results := make([]error, 8)
	var wg sync.WaitGroup
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = s.HoldDelivery(ctx, race, now)
		}()
	}
	wg.Wait()
	held := 0
	for _, err := range results {
		switch {
		case err == nil:
			held++
		case errs.CodeOf(err) != errs.Conflict:
			t.Fatalf("a racing hold: %v", err)
		}
	}
	if held != 1 {
		t.Fatalf("%d of %d Racers held one delivery", held, len(results))
	}

	// A release lets the delivery be held again; releasing one not held
	// is no error.
	if err := s.ReleaseDelivery(ctx, race); err != nil {
		t.Fatal(err)
	}
	if err := s.ReleaseDelivery(ctx, race); err != nil {
		t.Fatalf("releasing a delivery not held: %v", err)
	}
	if err := hold(race, now); err != nil {
		t.Fatalf("a released delivery: %v", err)
	}

	// At its Until it is still held; past it, it is taken over.
	if err := hold(d, until); err == nil {
		t.Fatal("a delivery was taken over at its Until")
	}
	later := d
	later.Until = until.Add(2 * domain.HookWindow)
	if err := hold(later, until.Add(time.Millisecond)); err != nil {
		t.Fatalf("an expired delivery was not taken over: %v", err)
	}

	// Pruning deletes what expired before now and keeps the rest.
	n, err := s.PruneDeliveries(ctx, until.Add(time.Millisecond))
	if err != nil || n != 4 {
		t.Fatalf("prune = %d, %v; want the 4 expired deliveries", n, err)
	}
	if err := hold(later, until.Add(time.Millisecond)); err == nil {
		t.Fatal("pruning deleted a delivery still held")
	}
	if err := hold(race, until.Add(time.Millisecond)); err != nil {
		t.Fatalf("a pruned delivery: %v", err)
	}
	if n, err := s.PruneDeliveries(ctx, now); err != nil || n != 0 {
		t.Fatalf("a prune with nothing expired = %d, %v", n, err)
	}
}
