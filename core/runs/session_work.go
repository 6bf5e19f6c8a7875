package runs

import (
	"context"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/hub"
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
			if err := s.stopElsewhere(ctx, sessionID, why); err != nil {
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

// stopElsewhere stops the session's run executing on another replica, if
// any, and waits until its row says it ended, or ctx ends (unavailable). A
// replica that does not answer is left to the failover.
func (s *Service) stopElsewhere(ctx context.Context, sessionID, why string) error {
	if s.d.Peers == nil {
		return nil
	}
	list, err := s.d.Runs.ListSessionRuns(ctx, sessionID)
	if err != nil {
		return err
	}
	for _, r := range list {
		if r.Status != domain.RunRunning || !s.elsewhere(r) {
			continue
		}
		err := s.d.Peers.Command(ctx, r.Replica, Command{Op: OpStop, RunID: r.ID, Why: why})
		if errs.Is(err, errs.Unavailable) {
			continue
		}
		if err != nil {
			return err
		}
		if _, err := s.awaitEnd(ctx, r.ID, "the session's run is still stopping; retry shortly"); err != nil {
			return err
		}
	}
	return nil
}

// awaitEnd polls a run another replica is stopping until its row says it
// ended (or it is gone), and returns the row as it ended; when ctx ends
// first it returns unavailable saying still.
func (s *Service) awaitEnd(ctx context.Context, runID, still string) (domain.Run, error) {
	for {
		now, err := s.d.Runs.FindRun(ctx, runID)
		if err != nil || now.Status != domain.RunRunning {
			return now, nil
		}
		select {
		case <-ctx.Done():
			return now, errs.Wrap(errs.Unavailable, ctx.Err(), "%s", still)
		case <-time.After(50 * time.Millisecond):
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
	elsewhere, err := s.stopUserElsewhere(ctx, userID)
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
	for _, r := range elsewhere {
		ended, err := s.awaitEnd(ctx, r.ID, still)
		if err != nil {
			return err
		}
		s.hearEnd(ctx, ended)
	}
	return nil
}

// relayWait bounds how long hearEnd waits for another replica's final
// event to reach this one: the backplane takes milliseconds.
const relayWait = time.Second

// hearEnd has this replica's watchers of a run another replica ended see
// it end before the account's streams close (the closing is this
// replica's own, the final event comes over the backplane): it waits, a
// moment at most, for the relayed final event — which comes after the
// run's other events, so nothing is missed — and otherwise files the
// stored ending (a repeat of a final event heard is dropped).
func (s *Service) hearEnd(ctx context.Context, ended domain.Run) {
	info, ok := s.d.Hub.Info(ended.ID)
	if !ok || !info.Live {
		return // not streamed here, or its end already heard
	}
	if sub, err := s.d.Hub.Subscribe(ended.ID, info.LastSeq); err == nil {
		wait, cancel := context.WithTimeout(ctx, relayWait)
		for {
			if ev, err := sub.Next(wait); err != nil || ev.Final() {
				break
			}
		}
		cancel()
		sub.Close()
	}
	// Numbered past what was heard here, after a run.gap for whatever
	// the relay did not bring.
	head, _, _ := s.d.Hub.Head(ended.ID)
	if evs, ok := hub.StoredEnding(ended, head); ok {
		s.d.Hub.Fill(ended.ID, evs)
	}
}

// stopUserElsewhere tells the replicas running userID's runs to stop them
// (for an account deleted) and returns the runs they took the command
// for.
func (s *Service) stopUserElsewhere(ctx context.Context, userID string) ([]domain.Run, error) {
	if s.d.Peers == nil {
		return nil, nil
	}
	list, err := s.d.Runs.ListRunningRuns(ctx, userID)
	if err != nil {
		return nil, err
	}
	var out []domain.Run
	for _, r := range list {
		if !s.elsewhere(r) {
			continue
		}
		err := s.d.Peers.Command(ctx, r.Replica, Command{Op: OpStop, RunID: r.ID, Why: reasonAccountDeleted})
		if errs.Is(err, errs.Unavailable) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
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
