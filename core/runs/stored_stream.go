package runs

import (
	"context"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/hub"
)

// Subscribe attaches the caller to a run's events after fromSeq. A run the
// hub no longer holds — its retention passed, or the server restarted since
// — still answers, from its stored record: one run.gap for the events the
// watcher lacks (they live on as the conversation's entries, the partial
// answer of a run a crash cut short among them) and the run's terminal
// event from its row, then the end. Returns not_found for a run that is
// not the caller's.
func (s *Service) Subscribe(ctx context.Context, p domain.Principal, runID string, fromSeq int64) (*hub.Subscription, error) {
	if info, ok := s.d.Hub.Info(runID); ok {
		if info.OwnerID != p.User.ID {
			return nil, errs.E(errs.NotFound, "run not found")
		}
		return s.d.Hub.Subscribe(runID, fromSeq)
	}
	run, err := s.storedRun(ctx, p, runID)
	if err != nil {
		return nil, err
	}
	events, ok := hub.StoredEnding(run, fromSeq)
	if !ok {
		// Live or paused, yet not in the hub: a run another replica runs,
		// which this one has not heard from since it started. Its stream
		// here begins now, at its last checkpoint (what came before is in
		// the stored conversation); the replica running it relays the rest.
		if s.d.Peers == nil {
			return nil, errs.E(errs.Unavailable, "the run is not served here; try again")
		}
		s.d.Hub.Reopen(run.ID, run.SessionID, run.OwnerID, run.LastSeq)
		return s.d.Hub.Subscribe(runID, fromSeq)
	}
	return s.d.Hub.Replay(runID, events), nil
}

// storedRun is the caller's run as the runs table records it. Returns
// not_found for a run that is absent or not the caller's.
func (s *Service) storedRun(ctx context.Context, p domain.Principal, runID string) (domain.Run, error) {
	run, err := s.d.Runs.FindRun(ctx, runID)
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
