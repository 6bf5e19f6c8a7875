// Package follow reads runs and follows their events, for whoever may:
// a run's record with its stream's head, and its events — from the hub
// while it holds them, else from the stored record. Neither needs the run
// to be live here, so the run engine hands both to this package.
package follow

import (
	"context"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/hub"
	"github.com/agents-server/agents-server/ports"
)

// Runs reads runs and their streams.
type Runs struct {
	hub   *hub.Hub
	store ports.RunStore
	// shared: other replicas share the store, so a live run this hub
	// does not hold may be running on one of them.
	shared bool
}

// New returns Runs on the hub and the runs table; shared says other
// replicas share the store.
func New(h *hub.Hub, store ports.RunStore, shared bool) *Runs {
	return &Runs{hub: h, store: store, shared: shared}
}

// Get returns a run the caller owns: its stream's head while the hub holds
// it, else the runs table's record — the hub lets a finished run go after
// its retention and starts empty after a restart, and the run still
// exists. Returns not_found.
func (r *Runs) Get(ctx context.Context, p domain.Principal, runID string) (domain.Run, error) {
	info, live := r.hub.Info(runID)
	if live && info.OwnerID != p.User.ID {
		return domain.Run{}, errs.E(errs.NotFound, "run not found")
	}
	run, err := r.stored(ctx, p, runID)
	if err != nil {
		return run, err
	}
	if live {
		run.LastSeq = info.LastSeq
	}
	return run, nil
}

// Subscribe attaches the caller to a run's events after fromSeq. A run the
// hub no longer holds — its retention passed, or the server restarted since
// — still answers, from its stored record: one run.gap for the events the
// watcher lacks (they live on as the conversation's entries, the partial
// answer of a run a crash cut short among them) and the run's terminal
// event from its row, then the end. Returns not_found for a run that is
// not the caller's.
func (r *Runs) Subscribe(ctx context.Context, p domain.Principal, runID string, fromSeq int64) (*hub.Subscription, error) {
	if info, ok := r.hub.Info(runID); ok {
		if info.OwnerID != p.User.ID {
			return nil, errs.E(errs.NotFound, "run not found")
		}
		return r.hub.Subscribe(runID, fromSeq)
	}
	run, err := r.stored(ctx, p, runID)
	if err != nil {
		return nil, err
	}
	events, ok := hub.StoredEnding(run, fromSeq)
	if !ok {
		// Live or paused, yet not in the hub: a run another replica runs,
		// which this one has not heard from since it started. Its stream
		// here begins now, at its last checkpoint (what came before is in
		// the stored conversation); the replica running it relays the rest.
		if !r.shared {
			return nil, errs.E(errs.Unavailable, "the run is not served here; try again")
		}
		r.hub.Reopen(run.ID, run.SessionID, run.OwnerID, run.LastSeq)
		return r.hub.Subscribe(runID, fromSeq)
	}
	return r.hub.Replay(runID, events), nil
}

// stored is the caller's run as the runs table records it. Returns
// not_found for a run that is absent or not the caller's.
func (r *Runs) stored(ctx context.Context, p domain.Principal, runID string) (domain.Run, error) {
	run, err := r.store.FindRun(ctx, runID)
	if errs.Is(err, errs.NotFound) {
		return domain.Run{}, errs.E(errs.NotFound, "run not found")
	}
	if err != nil {
		return domain.Run{}, err
	}
	if err := run.CheckOwner(p); err != nil {
		return domain.Run{}, err
	}
	return run, nil
}
