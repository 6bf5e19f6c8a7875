package runs

import (
	"context"

	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/sessions"
)

// Why a run ended when its session, or its owner's account, was deleted
// under it.
const (
	reasonSessionDeleted = "session_deleted"
	reasonAccountDeleted = "account_deleted"
)

// StopWork implements sessions.Work for a session about to be deleted: a
// live run is cancelled and waited for until its loop has ended, and a
// paused one is found, to be ended once its row is gone; the session is
// held until Release. (A session's tasks are the task manager's to stop:
// with tasks, it is the sessions' Work and calls this for the session and
// each of its tasks' sessions.) Returns unavailable when ctx ends while a
// run is still stopping.
func (s *Service) StopWork(ctx context.Context, sessionID string) (_ sessions.Stopped, err error) {
	release, err := s.stopAndHold(ctx, sessionID, reasonSessionDeleted)
	if err != nil {
		return sessions.Stopped{}, err
	}
	run, paused, err := s.d.Approvals.FindPausedRun(ctx, sessionID)
	if err != nil {
		release()
		return sessions.Stopped{}, err
	}
	return sessions.Stopped{Release: release, Deleted: func() {
		s.trust.Forget(sessionID)
		if paused {
			// The row went with the session; watchers of the paused run's
			// stream are told it is over.
			s.desk.PausedRunEnded(run, reasonSessionDeleted)
		}
	}}, nil
}

// Hold implements sessions.Work: the hub's slot for the session.
func (s *Service) Hold(sessionID string) (func(), error) { return s.d.Hub.Hold(sessionID) }

// stopAndHold takes the session's slot, first cancelling (for why) and
// waiting out whatever run holds it.
func (s *Service) stopAndHold(ctx context.Context, sessionID, why string) (func(), error) {
	for {
		release, err := s.d.Hub.Hold(sessionID)
		if err == nil {
			if err := s.remote.StopSession(ctx, sessionID, why); err != nil {
				release()
				return nil, err
			}
			return release, nil
		}
		live, busy := s.d.Hub.Busy(sessionID)
		if !busy {
			continue // it let go between the two calls
		}
		s.mu.Lock()
		lr := s.live[live]
		s.mu.Unlock()
		if lr != nil {
			lr.stop(why)
		}
		select {
		case <-s.d.Hub.Freed(sessionID, live):
		case <-ctx.Done():
			return nil, errs.Wrap(errs.Unavailable, ctx.Err(), "the session's run is still stopping; retry shortly")
		}
	}
}

// StopUserWork cancels every live run of a user whose account is being
// deleted — here, and on the other replicas, each told to stop the runs
// it executes — and waits until each has ended, or ctx ends
// (unavailable). A replica that does not answer is left to the failover.
// It implements auth.UserWork.
func (s *Service) StopUserWork(ctx context.Context, userID string) error {
	const still = "the account's runs are still stopping; retry shortly"
	s.mu.Lock()
	var stopping []*liveRun
	for _, lr := range s.live {
		if lr.run.OwnerID == userID {
			lr.stop(reasonAccountDeleted)
			stopping = append(stopping, lr)
		}
	}
	s.mu.Unlock()
	elsewhere, err := s.remote.StopUser(ctx, userID, reasonAccountDeleted)
	if err != nil {
		return err
	}
	for _, lr := range stopping {
		select {
		case <-s.d.Hub.Freed(lr.run.SessionID, lr.run.ID):
		case <-ctx.Done():
			return errs.Wrap(errs.Unavailable, ctx.Err(), "%s", still)
		}
	}
	return elsewhere(ctx, still)
}

// stop cancels a live run for why, the reason its ending will carry
// instead of its owner's "stopped" — and, unlike an owner's cancel, its
// session's title call too: the run's end then waits for that call to let
// go, so nothing of the run calls a model once its end is out.
func (lr *liveRun) stop(why string) {
	lr.stopWhy.Store(&why)
	lr.goneStop()
	lr.cancel()
}
