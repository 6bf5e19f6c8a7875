package replicas

import (
	"context"
	"log/slog"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/ports"
)

// DefaultFailoverAfter is the failover bound a workbench takes when its
// options leave it zero.
const DefaultFailoverAfter = 30 * time.Second

// The roll. Every workbench is a replica with an id on the store's roll,
// beating while it lives. On SQLite it is the only one: at start every run
// left running is a crash's, and all the once-only work is its own. On
// Postgres several share the database: a replica is gone when its beat is
// older than half of the failover bound; the holder of the failover lease
// then ends the runs it left running and the tasks they attempted, and
// pays the wake-ups they owe. The timings keep the whole within the bound,
// and a database outage from looking like a death (see Standing):
//
//	beat every bound/10 · fenced after 0.35 × bound without one taken,
//	checked every bound/20 · gone after bound/2 · judged every bound/10,
//	only by a replica whose beats were taken for bound/2 · leases last
//	bound/4, so a dead holder's lapse first
//
// so the worst case (the dead replica held the failover lease) is about
// 0.6 × the bound after its last beat, and a replica cut off stops its
// runs (at 0.4 × the bound at the latest) before another may end them.

// Timings are the roll's periods, all derived from the failover bound.
type Timings struct {
	Beat       time.Duration // how often a replica says it is alive
	Gone       time.Duration // how long without a beat makes a replica gone
	Check      time.Duration // how often the failover lease's holder looks
	Lease      time.Duration // how long a claimed lease lasts unrenewed
	Fence      time.Duration // how long without a beat taken makes a replica stop its runs
	FenceCheck time.Duration // how often a replica looks at its own beats
}

// TimingsFor derives the roll's timings from the failover bound (see the
// roll's description above).
func TimingsFor(bound time.Duration) Timings {
	return Timings{Beat: bound / 10, Gone: bound / 2, Check: bound / 10, Lease: bound / 4, Fence: bound * 7 / 20, FenceCheck: bound / 20}
}

// Lease names: the work only one replica does at a time.
const (
	LeaseFailover = "failover"
	LeaseTriggers = "triggers"
	LeaseUpkeep   = "upkeep"
	LeaseIdle     = "idle-sandboxes"
)

// OrphanRuns ends the runs crashed replicas left running (core/recovery).
type OrphanRuns interface {
	RecoverOrphans(ctx context.Context, aliveSince time.Time, restarted bool) ([]domain.Run, error)
}

// OrphanTasks fails the tasks those runs attempted and pays the wake-ups
// they then owe, and launches the queued tasks a gone replica owed a
// launch (the task manager).
type OrphanTasks interface {
	Recover(ctx context.Context, runs []string, launchedBefore time.Time) error
	Drain(ctx context.Context)
	PumpStalled(ctx context.Context, queuedBefore time.Time) (int, error)
}

// RollDeps is what a Roll needs.
type RollDeps struct {
	Store ports.ReplicaStore
	Runs  OrphanRuns
	Tasks OrphanTasks
	Clock ports.Clock
	Log   *slog.Logger
	// Self is this replica's id on the roll.
	Self string
	// Shared says other replicas may share the store (Postgres): leases
	// then gate the once-only work, and a failover loop runs.
	Shared bool
	// FailoverAfter is the bound the timings derive from (0:
	// DefaultFailoverAfter).
	FailoverAfter time.Duration
	// Standing is this replica's hold on the roll, which its beats keep
	// (nil: a new one); the run engine asks it whether it is fenced.
	Standing *Standing
	// Fenced stops this replica's runs, when its beats have gone untaken
	// too long (nil: nothing to stop).
	Fenced func()
}

// Roll is this replica's place on the roll: its beat, its leases, and the
// failover of the replicas that are gone.
type Roll struct {
	d     RollDeps
	times Timings
}

// NewRoll returns this replica's roll; Join puts it on.
func NewRoll(d RollDeps) *Roll {
	if d.FailoverAfter <= 0 {
		d.FailoverAfter = DefaultFailoverAfter
	}
	if d.Standing == nil {
		d.Standing = NewStanding(d.Shared, d.FailoverAfter)
	}
	return &Roll{d: d, times: TimingsFor(d.FailoverAfter)}
}

// Shared says whether other replicas may share the store.
func (r *Roll) Shared() bool { return r.d.Shared }

// Join puts this replica on the roll and ends what crashed replicas left
// running: its own previous life's runs, and every other replica's on
// SQLite or those of replicas gone for good on Postgres (the rest are the
// failover loop's). Run it before serving.
func (r *Roll) Join(ctx context.Context) error {
	now := r.d.Clock.Now()
	if err := r.d.Store.Beat(ctx, r.d.Self, now); err != nil {
		return err
	}
	r.d.Standing.beat(true)
	aliveSince := now
	if r.d.Shared {
		aliveSince = now.Add(-r.times.Gone)
	}
	_, err := r.recover(ctx, aliveSince, true)
	return err
}

// recover ends the orphaned runs and the tasks they attempted (on SQLite
// every task left working); it returns how many runs it ended.
func (r *Roll) recover(ctx context.Context, aliveSince time.Time, restarted bool) (int, error) {
	orphans, err := r.d.Runs.RecoverOrphans(ctx, aliveSince, restarted)
	if err != nil {
		return 0, err
	}
	var runIDs []string
	var launchedBefore time.Time
	if r.d.Shared {
		runIDs = make([]string, 0, len(orphans))
		for _, o := range orphans {
			runIDs = append(runIDs, o.ID)
		}
		// A task launched by a replica gone since, whose run it never
		// recorded, has no run to end: it fails too.
		launchedBefore = aliveSince
	}
	return len(orphans), r.d.Tasks.Recover(ctx, runIDs, launchedBefore)
}

// Beat keeps this replica on the roll until ctx ends.
func (r *Roll) Beat(ctx context.Context) {
	Every(ctx, r.times.Beat, func(ctx context.Context) {
		now := r.d.Clock.Now()
		err := r.d.Store.Beat(ctx, r.d.Self, now)
		if err != nil && ctx.Err() == nil {
			r.d.Log.Warn("replica heartbeat failed", "err", err)
		}
		r.d.Standing.beat(err == nil)
	})
}

// Fence stops this replica's runs while its beats go untaken past the
// fence interval, looking every FenceCheck until ctx ends: before another
// replica may count it gone and end them, and at once when a stopped
// process wakes to find it was away too long.
func (r *Roll) Fence(ctx context.Context) {
	if !r.d.Shared || r.d.Fenced == nil {
		return
	}
	fenced := false
	Every(ctx, r.times.FenceCheck, func(ctx context.Context) {
		now := r.d.Standing.Fenced()
		if now && !fenced {
			r.d.Log.Error("the database has not taken this replica's heartbeat for too long; stopping its runs before another replica may take them over")
		}
		if now {
			r.d.Fenced()
		}
		fenced = now
	})
}

// Failover, on the holder of its lease, ends what gone replicas left
// running, pays the wake-ups their tasks now owe and launches the queued
// tasks they owed a launch, until ctx ends. Only
// a shared store has other replicas to take over from: elsewhere it
// returns at once.
func (r *Roll) Failover(ctx context.Context) {
	if !r.d.Shared {
		return
	}
	Every(ctx, r.times.Check, r.Leased(LeaseFailover, func(ctx context.Context) {
		if !r.d.Standing.judging() {
			// Just back from an outage (or started): the others get the
			// time to beat again before anyone is counted gone.
			return
		}
		n, err := r.recover(ctx, r.d.Clock.Now().Add(-r.times.Gone), false)
		if err != nil {
			if ctx.Err() == nil {
				r.d.Log.Warn("failover sweep failed", "err", err)
			}
			return
		}
		if n > 0 {
			r.d.Log.Warn("failover: ended the runs of replicas that are gone", "count", n)
			r.d.Tasks.Drain(ctx)
		}
		// A workflow whose driver died between two steps has no run to
		// end: its next step waits queued, a launch nobody else makes.
		// Nothing of that step ran, so it starts here.
		stalled, err := r.d.Tasks.PumpStalled(ctx, r.d.Clock.Now().Add(-r.times.Gone))
		if err != nil && ctx.Err() == nil {
			r.d.Log.Warn("failover: launching stalled queues failed", "err", err)
		} else if stalled > 0 {
			r.d.Log.Warn("failover: launched what replicas that are gone left queued", "conversations", stalled)
		}
	}))
}

// Leased wraps once-only work: on a shared store it runs only on the
// replica holding the lease called name (taken or renewed at each pass);
// on SQLite it always runs.
func (r *Roll) Leased(name string, sweep func(context.Context)) func(context.Context) {
	if !r.d.Shared {
		return sweep
	}
	return func(ctx context.Context) {
		held, err := r.d.Store.ClaimLease(ctx, name, r.d.Self, r.d.Clock.Now(), r.times.Lease)
		if err != nil {
			if ctx.Err() == nil {
				r.d.Log.Warn("claiming a lease failed", "lease", name, "err", err)
			}
			return
		}
		if held {
			sweep(ctx)
		}
	}
}

// Leave takes this replica off the roll at a clean stop, giving up its
// leases: the others take its work over at once.
func (r *Roll) Leave() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := r.d.Store.Leave(ctx, r.d.Self); err != nil {
		r.d.Log.Warn("leaving the replica roll failed", "err", err)
	}
}
