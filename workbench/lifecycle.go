package workbench

import (
	"context"
	"time"

	"github.com/agents-server/agents-server/core/livestreams"
)

// startLoops starts the upkeep: the wake-ups owed when the process
// stopped, cron ticks, pruning, idle sandbox stops, expired streams.
func (w *Workbench) startLoops() {
	ctx, cancel := context.WithCancel(context.Background())
	w.stopLoops = cancel
	go w.tasks.Drain(ctx)
	w.loops.Add(5)
	go func() {
		defer w.loops.Done()
		w.every(ctx, w.opts.TriggerEvery, w.leased(leaseTriggers, w.triggers.Tick)) // fires the due cron ticks
	}()
	go w.maintain(ctx)
	go w.idleStops(ctx)
	go w.expireStreams(ctx)
	go w.beat(ctx)
	if w.shared {
		w.loops.Add(1)
		go w.failover(ctx)
	}
}

// Drain refuses new work (503) while live runs and requests in flight
// finish, bounded by Options.DrainTimeout (runs still going then are
// cancelled), then closes every stream and socket. A program serving the
// workbench drains it before shutting its HTTP server down, and closes it
// after.
func (w *Workbench) Drain() {
	w.api.BeginDrain()
	w.runs.Drain()
	ctx, cancel := context.WithTimeout(context.Background(), w.opts.DrainTimeout)
	defer cancel()
	w.runs.Shutdown(ctx)
	w.bus.CloseAll()
	w.terminal.CloseAll()
	if err := w.api.WaitIdle(ctx); err != nil {
		w.log.Warn("drain timed out; closing with requests in flight", "in_flight", w.api.InFlight())
	}
}

// Close drains the workbench (see Drain) and stops it: the upkeep, the
// trace export, the sandbox and MCP connections, and the store. Later
// calls return the first call's result.
func (w *Workbench) Close() error {
	w.closeOnce.Do(func() {
		if !w.api.Draining() {
			w.Drain()
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		w.stopLoops()
		w.loops.Wait()
		w.leaveRoll()
		defer w.unlockReplica()
		w.peers.close()
		w.watch.close(ctx)
		w.docker.Close()
		w.mcp.Close()
		w.closeErr = w.db.Close()
	})
	return w.closeErr
}

// maintain runs the periodic upkeep until ctx ends: now, then hourly.
func (w *Workbench) maintain(ctx context.Context) {
	defer w.loops.Done()
	upkeep := func(ctx context.Context) {
		n, err := w.auth.PruneExpiredTokens(ctx)
		w.logSweep(ctx, n, err, "pruning expired tokens failed", "pruned expired tokens")
		n, err = w.runs.ReapApprovals(ctx)
		w.logSweep(ctx, n, err, "expiring approvals failed", "expired approvals")
		n, err = w.traces.Prune(ctx)
		w.logSweep(ctx, n, err, "pruning old traces failed", "pruned old traces")
		n, err = w.tasks.Prune(ctx)
		w.logSweep(ctx, n, err, "pruning task leftovers failed", "pruned settled wake-ups and orphan task sessions")
		n, err = w.attachments.Prune(ctx)
		w.logSweep(ctx, n, err, "pruning unsent attachments failed", "pruned attachments no message carries")
		n, err = w.triggers.PruneDeliveries(ctx)
		w.logSweep(ctx, n, err, "pruning remembered webhook deliveries failed", "pruned webhook deliveries past their window")
	}
	upkeep = w.leased(leaseUpkeep, upkeep)
	upkeep(ctx)
	w.every(ctx, time.Hour, upkeep)
}

// expireStreams closes, every livestreams.SweepEvery, the streams whose
// token expired while they were open; revocations close theirs at once,
// but an expiry is a moment nobody announces.
func (w *Workbench) expireStreams(ctx context.Context) {
	defer w.loops.Done()
	w.every(ctx, livestreams.SweepEvery, func(ctx context.Context) {
		n, err := w.streams.Sweep(ctx)
		w.logSweep(ctx, n, err, "closing streams of expired tokens failed", "closed streams of expired tokens")
	})
}

// idleStops stops the project instances nobody used for
// sandbox_idle_minutes, checking every minute; first it notes the ones a
// previous process left running.
func (w *Workbench) idleStops(ctx context.Context) {
	defer w.loops.Done()
	if err := w.sandboxes.Adopt(ctx); err != nil && ctx.Err() == nil {
		w.log.Warn("noting running sandbox instances failed", "err", err)
	}
	w.every(ctx, time.Minute, w.leased(leaseIdle, func(ctx context.Context) {
		n, err := w.sandboxes.SweepIdle(ctx)
		w.logSweep(ctx, n, err, "idle sandbox stop failed", "stopped idle sandbox instances")
	}))
}

// every calls sweep once per interval until ctx ends.
func (w *Workbench) every(ctx context.Context, interval time.Duration, sweep func(context.Context)) {
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

// logSweep logs how an upkeep pass went: a failure (unless the process is
// stopping) or how many things it handled.
func (w *Workbench) logSweep(ctx context.Context, n int, err error, failed, done string) {
	if err != nil && ctx.Err() == nil {
		w.log.Warn(failed, "err", err)
	} else if err == nil && n > 0 {
		w.log.Info(done, "count", n)
	}
}
