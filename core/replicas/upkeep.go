package replicas

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// Sweep is one kind of upkeep pass: Run does it and says how many things
// it handled; Failed and Done are what the log says when it fails (unless
// the process is stopping) and when it handled something.
type Sweep struct {
	Run    func(context.Context) (int, error)
	Failed string
	Done   string
}

// UpkeepDeps is the upkeep's work; the Roll says which replica does the
// once-only part of it.
type UpkeepDeps struct {
	Roll *Roll
	Log  *slog.Logger
	// Wakeups pays the wake-ups owed when the process stopped, once at
	// start (the task manager's Drain).
	Wakeups func(context.Context)
	// Tick fires the due cron ticks, every TickEvery, on the holder of
	// LeaseTriggers.
	Tick      func(context.Context)
	TickEvery time.Duration
	// Hourly are the pruning passes: at start, then hourly, on the holder
	// of LeaseUpkeep, one after another.
	Hourly []Sweep
	// Adopt notes the sandbox instances a previous process left running,
	// once at start on every replica; IdleStops then stops the idle ones
	// every minute on the holder of LeaseIdle.
	Adopt     func(context.Context) error
	IdleStops Sweep
	// Expiries closes the streams of tokens that expired while open,
	// every ExpiryEvery, on every replica (each holds its own streams).
	Expiries    Sweep
	ExpiryEvery time.Duration
}

// Upkeep is the background work of a replica: its beat and failover (see
// Roll) and the periodic sweeps. Stop ends it.
type Upkeep struct {
	d      UpkeepDeps
	cancel context.CancelFunc
	loops  sync.WaitGroup
}

// StartUpkeep starts the upkeep: the wake-ups owed when the process
// stopped, cron ticks, pruning, idle sandbox stops, expired streams, the
// beat and (on a shared store) the failover.
func StartUpkeep(d UpkeepDeps) *Upkeep {
	ctx, cancel := context.WithCancel(context.Background())
	u := &Upkeep{d: d, cancel: cancel}
	go d.Wakeups(ctx)
	u.loop(ctx, func(ctx context.Context) { Every(ctx, d.TickEvery, d.Roll.Leased(LeaseTriggers, d.Tick)) })
	u.loop(ctx, u.prune)
	u.loop(ctx, u.idleStops)
	u.loop(ctx, func(ctx context.Context) { Every(ctx, d.ExpiryEvery, u.pass(d.Expiries)) })
	u.loop(ctx, d.Roll.Beat)
	u.loop(ctx, d.Roll.Fence)
	u.loop(ctx, d.Roll.Failover)
	return u
}

// loop runs f in the background, counted so Stop can wait for it.
func (u *Upkeep) loop(ctx context.Context, f func(context.Context)) {
	u.loops.Add(1)
	go func() {
		defer u.loops.Done()
		f(ctx)
	}()
}

// Stop ends the loops and waits for them (the wake-ups paid at start are
// told to stop, not waited for).
func (u *Upkeep) Stop() {
	u.cancel()
	u.loops.Wait()
}

// prune runs the hourly passes: now, then hourly.
func (u *Upkeep) prune(ctx context.Context) {
	all := func(ctx context.Context) {
		for _, s := range u.d.Hourly {
			u.pass(s)(ctx)
		}
	}
	all = u.d.Roll.Leased(LeaseUpkeep, all)
	all(ctx)
	Every(ctx, time.Hour, all)
}

// idleStops stops the project instances nobody used for a while, checking
// every minute; first it notes the ones a previous process left running.
func (u *Upkeep) idleStops(ctx context.Context) {
	if err := u.d.Adopt(ctx); err != nil && ctx.Err() == nil {
		u.d.Log.Warn("noting running sandbox instances failed", "err", err)
	}
	Every(ctx, time.Minute, u.d.Roll.Leased(LeaseIdle, u.pass(u.d.IdleStops)))
}

// pass runs s once and logs how it went: a failure (unless the process is
// stopping) or how many things it handled.
func (u *Upkeep) pass(s Sweep) func(context.Context) {
	return func(ctx context.Context) {
		n, err := s.Run(ctx)
		if err != nil && ctx.Err() == nil {
			u.d.Log.Warn(s.Failed, "err", err)
		} else if err == nil && n > 0 {
			u.d.Log.Info(s.Done, "count", n)
		}
	}
}

// Every calls sweep once per interval until ctx ends.
func Every(ctx context.Context, interval time.Duration, sweep func(context.Context)) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		sweep(ctx)
	}
}
