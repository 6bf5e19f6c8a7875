package replicas_test

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/replicas"
	"github.com/agents-server/agents-server/ports"
)

// leaseTable is a ports.ReplicaStore in memory: the roll's beats and the
// leases, each held until it expires (ports/porttest has none; the SQL
// store's own tests and the API's replica tests cover the real one).
type leaseTable struct {
	mu     sync.Mutex
	away   bool // the database does not answer
	beats  map[string]time.Time
	leases map[string]struct {
		holder string
		until  time.Time
	}
}

func newLeaseTable() *leaseTable {
	return &leaseTable{beats: map[string]time.Time{}, leases: map[string]struct {
		holder string
		until  time.Time
	}{}}
}

func (t *leaseTable) Beat(_ context.Context, replica string, at time.Time) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.away {
		return errs.E(errs.Unavailable, "the database does not answer")
	}
	t.beats[replica] = at
	return nil
}

// setAway has the database stop (or go on) answering.
func (t *leaseTable) setAway(away bool) {
	t.mu.Lock()
	t.away = away
	t.mu.Unlock()
}

func (t *leaseTable) Leave(_ context.Context, replica string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.beats, replica)
	for name, l := range t.leases {
		if l.holder == replica {
			delete(t.leases, name)
		}
	}
	return nil
}

func (t *leaseTable) ClaimLease(_ context.Context, name, holder string, now time.Time, ttl time.Duration) (bool, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if l, ok := t.leases[name]; ok && l.holder != holder && now.Before(l.until) {
		return false, nil
	}
	t.leases[name] = struct {
		holder string
		until  time.Time
	}{holder, now.Add(ttl)}
	return true, nil
}

// orphans records what the roll asked the run engine and the task manager.
type orphans struct {
	mu         sync.Mutex
	runs       []domain.Run // what RecoverOrphans ends, once
	aliveSince []time.Time
	restarted  []bool
	tasks      [][]string
	launched   []time.Time // the launches before which a task with no run fails
	drains     int
	queued     []time.Time // the cutoffs before which a queue with room stalled
}

func (o *orphans) RecoverOrphans(_ context.Context, aliveSince time.Time, restarted bool) ([]domain.Run, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.aliveSince, o.restarted = append(o.aliveSince, aliveSince), append(o.restarted, restarted)
	ended := o.runs
	o.runs = nil
	return ended, nil
}

func (o *orphans) Recover(_ context.Context, runs []string, launchedBefore time.Time) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.tasks, o.launched = append(o.tasks, runs), append(o.launched, launchedBefore)
	return nil
}

func (o *orphans) Drain(context.Context) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.drains++
}

func (o *orphans) PumpStalled(_ context.Context, queuedBefore time.Time) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.queued = append(o.queued, queuedBefore)
	return 0, nil
}

func newRoll(store ports.ReplicaStore, o *orphans, self string, shared bool, now time.Time) *replicas.Roll {
	return replicas.NewRoll(replicas.RollDeps{Store: store, Runs: o, Tasks: o, Clock: ports.ClockFunc(func() time.Time { return now }),
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Self: self, Shared: shared, FailoverAfter: 30 * time.Second})
}

func TestTimingsKeepFailoverWithinTheBound(t *testing.T) {
	got := replicas.TimingsFor(30 * time.Second)
	want := replicas.Timings{Beat: 3 * time.Second, Gone: 15 * time.Second, Check: 3 * time.Second, Lease: 7500 * time.Millisecond,
		Fence: 10500 * time.Millisecond, FenceCheck: 1500 * time.Millisecond}
	if got != want {
		t.Fatalf("TimingsFor(30s) = %+v, want %+v", got, want)
	}
	// A dead lease holder's lease lapses before the replica counts as
	// gone, so the next check's claim can find it free.
	if got.Lease >= got.Gone || got.Beat >= got.Gone {
		t.Fatalf("a lease (%v) or a beat (%v) outlasts being gone (%v)", got.Lease, got.Beat, got.Gone)
	}
	// A replica cut off stops its runs, even at its last look, before
	// the others may count it gone; a few missed beats do not fence it.
	if got.Fence+got.FenceCheck >= got.Gone || got.Fence < 3*got.Beat {
		t.Fatalf("fenced after %v (looked at every %v) against gone after %v, beating every %v", got.Fence, got.FenceCheck, got.Gone, got.Beat)
	}
}

func TestJoinEndsWhatACrashLeftRunning(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	t.Run("alone", func(t *testing.T) {
		o := &orphans{runs: []domain.Run{{ID: "r1"}}}
		store := newLeaseTable()
		if err := newRoll(store, o, "me", false, now).Join(context.Background()); err != nil {
			t.Fatal(err)
		}
		// Alone on the store, every run left running is a crash's, and
		// every task left working too (nil: all of them).
		if !o.aliveSince[0].Equal(now) || !o.restarted[0] || len(o.tasks) != 1 || o.tasks[0] != nil || !o.launched[0].IsZero() {
			t.Fatalf("alone: asked since %v restarted %v, tasks %v", o.aliveSince, o.restarted, o.tasks)
		}
		if _, on := store.beats["me"]; !on {
			t.Fatal("the replica is not on the roll")
		}
	})
	t.Run("shared", func(t *testing.T) {
		o := &orphans{runs: []domain.Run{{ID: "r1"}, {ID: "r2"}}}
		if err := newRoll(newLeaseTable(), o, "me", true, now).Join(context.Background()); err != nil {
			t.Fatal(err)
		}
		// Shared, only the runs of replicas gone for good end, and only
		// the tasks those runs attempted.
		if want := now.Add(-15 * time.Second); !o.aliveSince[0].Equal(want) || !slices.Equal(o.tasks[0], []string{"r1", "r2"}) ||
			!o.launched[0].Equal(want) {
			t.Fatalf("shared: asked since %v (want %v), tasks %v", o.aliveSince[0], want, o.tasks)
		}
	})
}

func TestLeasedWorkRunsOnOneReplica(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	store := newLeaseTable()
	var ran []string
	sweep := func(who string) func(context.Context) {
		return func(context.Context) { ran = append(ran, who) }
	}
	a, b := newRoll(store, &orphans{}, "a", true, now), newRoll(store, &orphans{}, "b", true, now)
	ctx := context.Background()
	a.Leased(replicas.LeaseUpkeep, sweep("a"))(ctx)
	b.Leased(replicas.LeaseUpkeep, sweep("b"))(ctx)
	a.Leased(replicas.LeaseUpkeep, sweep("a"))(ctx)
	if !slices.Equal(ran, []string{"a", "a"}) {
		t.Fatalf("ran %v; want the holder alone", ran)
	}
	// A clean stop gives the lease up at once.
	a.Leave()
	b.Leased(replicas.LeaseUpkeep, sweep("b"))(ctx)
	// Alone on the store, no lease is asked for.
	newRoll(nil, &orphans{}, "c", false, now).Leased(replicas.LeaseUpkeep, sweep("c"))(ctx)
	if !slices.Equal(ran, []string{"a", "a", "b", "c"}) {
		t.Fatalf("ran %v after a left", ran)
	}
}

// liveRoll is a roll on the bubble's clock, beating until ctx ends.
func liveRoll(ctx context.Context, store ports.ReplicaStore, o *orphans, fenced func()) *replicas.Roll {
	r := replicas.NewRoll(replicas.RollDeps{Store: store, Runs: o, Tasks: o, Clock: ports.ClockFunc(time.Now),
		Log: slog.New(slog.DiscardHandler), Self: "me", Shared: true, FailoverAfter: 30 * time.Second, Fenced: fenced})
	go r.Beat(ctx)
	return r
}

func TestFailoverEndsTheRunsOfGoneReplicas(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		o := &orphans{runs: []domain.Run{{ID: "r1"}}}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			liveRoll(ctx, newLeaseTable(), o, nil).Failover(ctx)
			close(done)
		}()
		// Its first beat is taken at 3 s: it judges from 18 s on, at
		// the check then.
		time.Sleep(17 * time.Second)
		synctest.Wait()
		o.mu.Lock()
		early := len(o.restarted)
		o.mu.Unlock()
		if early != 0 {
			t.Fatal("a replica judged others gone before its own beats were taken for the gone interval")
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		cancel()
		<-done
		o.mu.Lock()
		defer o.mu.Unlock()
		if len(o.restarted) != 1 || o.restarted[0] || !slices.Equal(o.tasks[0], []string{"r1"}) || o.drains != 1 {
			t.Fatalf("failover: restarted %v, tasks %v, drains %d", o.restarted, o.tasks, o.drains)
		}
		// The queues gone replicas owed a launch are pumped: those stalled
		// since the gone cutoff (the check ran at 18 s).
		if want := start.Add(18*time.Second - 15*time.Second); len(o.queued) != 1 || !o.queued[0].Equal(want) {
			t.Fatalf("failover: stalled queues asked for %v, want once before %v", o.queued, want)
		}
		// Alone on the store there is nobody to take over from.
		now := time.Now()
		alone := &orphans{runs: []domain.Run{{ID: "r1"}}}
		newRoll(newLeaseTable(), alone, "me", false, now).Failover(context.Background())
		if len(alone.restarted) != 0 || len(alone.queued) != 0 {
			t.Fatal("a replica alone ran a failover")
		}
	})
}

// TestADatabaseOutageIsNoDeath: while the database does not answer, a
// replica's beats go untaken; past the fence interval it stops its runs
// (before anyone may count it gone), and once the database is back it
// judges nobody gone until every replica had the time to beat again.
func TestADatabaseOutageIsNoDeath(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		o := &orphans{runs: []domain.Run{{ID: "r1"}}}
		store := newLeaseTable()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var mu sync.Mutex
		var stops []time.Duration
		start := time.Now()
		r := liveRoll(ctx, store, o, func() {
			mu.Lock()
			stops = append(stops, time.Since(start))
			mu.Unlock()
		})
		go r.Fence(ctx)
		go r.Failover(ctx)
		time.Sleep(20 * time.Second) // healthy: judging from 18 s
		synctest.Wait()
		store.setAway(true) // the last beat taken was at 18 s
		time.Sleep(2 * time.Second)
		synctest.Wait() // the beat at 21 s failed: judging no more
		o.mu.Lock()
		judged := len(o.restarted)
		o.mu.Unlock()
		time.Sleep(13 * time.Second)
		synctest.Wait()
		mu.Lock()
		first := stops
		mu.Unlock()
		if len(first) == 0 || first[0] > 18*time.Second+12*time.Second || first[0] <= 18*time.Second+10500*time.Millisecond {
			t.Fatalf("the runs were stopped at %v; want once 10.5 s without a beat taken passed (after 28.5 s, before 30 s)", first)
		}
		store.setAway(false) // at 35 s: beats taken from 36 s, judging from 51 s
		time.Sleep(14 * time.Second)
		synctest.Wait()
		o.mu.Lock()
		after := len(o.restarted)
		o.mu.Unlock()
		if after != judged {
			t.Fatalf("a replica back from an outage judged others gone %d times within the gone interval", after-judged)
		}
		mu.Lock()
		n := len(stops)
		mu.Unlock()
		time.Sleep(5 * time.Second)
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		if len(stops) != n {
			t.Fatal("the runs were still being stopped after the beats were taken again")
		}
	})
}
