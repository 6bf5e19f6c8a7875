package workbench

import (
	"context"
	"time"

	"github.com/agents-server/agents-server/core/livestreams"
	"github.com/agents-server/agents-server/core/replicas"
)

// startUpkeep starts the background work (see replicas.StartUpkeep): what
// each sweep is, wired to the services that do it.
func (w *Workbench) startUpkeep() {
	w.upkeep = replicas.StartUpkeep(replicas.UpkeepDeps{
		Roll: w.roll, Log: w.log,
		Wakeups:   w.tasks.Drain,
		Tick:      w.triggers.Tick,
		TickEvery: w.opts.TriggerEvery,
		Hourly: []replicas.Sweep{
			{Run: w.auth.PruneExpiredTokens, Failed: "pruning expired tokens failed", Done: "pruned expired tokens"},
			{Run: w.runs.ReapApprovals, Failed: "expiring approvals failed", Done: "expired approvals"},
			{Run: w.traces.Prune, Failed: "pruning old traces failed", Done: "pruned old traces"},
			{Run: w.audit.Prune, Failed: "pruning the audit log failed", Done: "pruned audit records past their retention"},
			{Run: w.tasks.Prune, Failed: "pruning task leftovers failed", Done: "pruned settled wake-ups and orphan task sessions"},
			{Run: w.attachments.Prune, Failed: "pruning unsent attachments failed", Done: "pruned attachments no message carries"},
			{Run: w.triggers.PruneDeliveries, Failed: "pruning remembered webhook deliveries failed",
				Done: "pruned webhook deliveries past their window"},
		},
		Adopt:       w.sandboxes.Adopt,
		IdleStops:   replicas.Sweep{Run: w.sandboxes.SweepIdle, Failed: "idle sandbox stop failed", Done: "stopped idle sandbox instances"},
		Expiries:    replicas.Sweep{Run: w.streams.Sweep, Failed: "closing streams of expired tokens failed", Done: "closed streams of expired tokens"},
		ExpiryEvery: livestreams.SweepEvery,
	})
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
		w.upkeep.Stop()
		w.roll.Leave()
		defer w.unlockReplica()
		w.peers.close()
		w.watch.close(ctx)
		w.docker.Close()
		w.mcp.Close()
		w.closeErr = w.db.Close()
	})
	return w.closeErr
}
