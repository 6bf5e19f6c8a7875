package runs

import (
	"context"
	"errors"
	"maps"
	"slices"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/remote"
	"github.com/agents-server/agents-server/ports"
)

// The fence. A replica cut off from the store (its database unreachable,
// or the process stopped) past the failover bound may find, when it comes
// back, that another replica ended its runs. Every write a run makes to
// its conversation and its row begins by checking the row still says it
// runs here (ports.SessionWriter.HoldRun); a run that lost the check was
// taken over, and its replica lets it go without a further write, event
// or notice — the failover already said how it ended.

// errTakenOver is a run's write refused by the fence.
var errTakenOver = errors.New("the run was taken over by another replica's failover")

// held puts the fence first in a run's transaction: nothing else in it
// is written for a run this replica no longer holds.
func (s *Service) held(ctx context.Context, runID string, also func(ports.SessionTx) error) func(ports.SessionTx) error {
	return func(tx ports.SessionTx) error {
		err := tx.HoldRun(ctx, runID, s.d.Replica)
		switch {
		case errs.Is(err, errs.Conflict):
			return errors.Join(errTakenOver, err)
		case err != nil || also == nil:
			return err
		}
		return also(tx)
	}
}

// letGo ends a run here that another replica's failover ended: its slot is
// freed and its context cancelled; nothing is written or relayed. Its
// watchers here get the ending the failover stored (as its relay would
// have brought it), numbered past what they saw.
func (s *Service) letGo(lr *liveRun) {
	s.d.Log.Warn("a run this replica lost while cut off was ended by another replica; letting it go", "run_id", lr.run.ID)
	if row, err := s.d.Runs.FindRun(context.WithoutCancel(lr.ctx), lr.run.ID); err == nil {
		remote.FileEnding(s.d.Hub, row)
	}
	s.d.Hub.Release(lr.run.SessionID, lr.run.ID)
	lr.cancel()
}

// cutOff reports whether this replica is fenced (Deps.Fenced).
func (s *Service) cutOff() bool { return s.d.Fenced != nil && s.d.Fenced() }

// notFenced refuses a start on a fenced replica: unavailable.
func (s *Service) notFenced() error {
	if s.cutOff() {
		return errs.E(errs.Unavailable, "this server has lost its database for the moment; retry shortly")
	}
	return nil
}

// stopIfFenced stops a run at a turn, a tool call or a streamed fragment
// when its replica is fenced; it reports whether it did (the run's context
// is then done).
func (s *Service) stopIfFenced(lr *liveRun) bool {
	if !s.cutOff() {
		return false
	}
	lr.stop(domain.CancelDatabaseUnreachable)
	return true
}

// StopAll stops every run executing here for why (a fenced replica's
// roll calls it) and returns how many it stopped.
func (s *Service) StopAll(why string) int {
	s.mu.Lock()
	live := slices.Collect(maps.Values(s.live))
	s.mu.Unlock()
	for _, lr := range live {
		lr.stop(why)
	}
	return len(live)
}
