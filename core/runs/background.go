package runs

import (
	"context"
	"strings"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/hub"
	"github.com/agents-server/agents-server/core/runcap"
	"github.com/agents-server/agents-server/ports"
)

// backgroundSuffix ends a task run's instructions: nobody reads it live,
// so asking is pointless and the final answer is the report.
const backgroundSuffix = "You are running as a background task: nobody is reading this conversation as it happens, " +
	"and nobody will answer a question. Work on your own until the job is done, then end with a final answer that " +
	"reports the result (what you found or did, and anything left undone) — it is what the conversation that started " +
	"you will read."

// BackgroundStart is a run nobody typed: a task's attempt on its hidden
// session, or a wake-up on a parent session reading its tasks' results.
type BackgroundStart struct {
	SessionID     string
	OwnerID       string
	AgentConfigID string
	// RunID is the run's id, reserved by the task; "" mints one.
	RunID string
	Input string
	// Source is the input entry's source ("" for user) and Display its
	// card: a wake-up's input is for the model, not a chat bubble.
	Source  string
	Display *domain.Display
	// Task ties an attempt's run to its task (run.started carries it).
	Task *domain.TaskLink
	// Also runs in the transaction that records the start.
	Also func(tx ports.SessionTx) error
	// CompactFirst folds the session into a summary before the first turn
	// (a workflow step's compact_before), with the run's agent's settings.
	CompactFirst bool
	// Triggered: the run is trigger-started work (a task's attempt or a
	// wake-up reading its results) and keeps its exec grants to itself.
	Triggered bool
	// Continues: the run carries on work a run of the owner's has just
	// ended (a workflow's next step, a wake-up reading task results), so
	// max_runs_per_user does not refuse it (see run_cap.go).
	Continues bool
	// Note goes before the input in the conversation (a trigger's "asked"
	// note); Title names an untitled session from the input.
	Note  *domain.Entry
	Title bool
	// NotPaused refuses (conflict) a session that waits on an approval
	// rather than setting the pause aside, as a person's message would.
	NotPaused bool
}

// StartBackground starts a run with no person asking, on the owner's
// behalf: no visibility check (the manager checked at the spawn), no
// planning on a task's run. Returns not_found (session), conflict (the
// session is busy), rate_limited (max_runs_per_user, unless it continues
// work) or unavailable (draining).
func (s *Service) StartBackground(ctx context.Context, req BackgroundStart) (domain.Run, error) {
	if err := s.notFenced(); err != nil {
		return domain.Run{}, err
	}
	sess, err := s.d.Sessions.Find(ctx, req.SessionID)
	if err != nil {
		return domain.Run{}, err
	}
	if sess.OwnerID != req.OwnerID {
		return domain.Run{}, errs.E(errs.NotFound, "session not found")
	}
	also := req.Also
	if !req.Continues {
		limit, err := runcap.Admit(ctx, s.d.Settings, s.d.Runs, sess.OwnerID)
		if err != nil {
			return domain.Run{}, err
		}
		also = runcap.In(ctx, sess.OwnerID, limit, req.Also)
	}
	if req.NotPaused {
		if _, paused, err := s.d.Approvals.FindPausedRun(ctx, sess.ID); err != nil {
			return domain.Run{}, err
		} else if paused {
			return domain.Run{}, errs.E(errs.Conflict, "the conversation waits on an approval; a trigger does not set it aside")
		}
	}
	id := req.RunID
	if id == "" {
		id = s.d.IDs.NewID()
	}
	now := s.d.Clock.Now()
	run := domain.Run{ID: id, SessionID: sess.ID, OwnerID: sess.OwnerID, AgentConfigID: req.AgentConfigID, ProjectID: sess.ProjectID, Replica: s.d.Replica, SeqMark: hub.MarkAhead,
		Input: req.Input, Status: domain.RunRunning, CreatedAt: now, UpdatedAt: now}
	s.awaitLetGo(ctx, sess.ID)
	if err := s.d.Hub.Claim(sess.ID, run.ID, sess.OwnerID); err != nil {
		return domain.Run{}, err
	}
	var plan *bool
	if req.Task != nil {
		plan = new(bool) // no plan mode in the background
	}
	var entries []domain.Entry
	if req.Note != nil {
		entries = append(entries, *req.Note)
	}
	if strings.TrimSpace(req.Input) != "" {
		e := userEntry(req.Input, run.ID)
		if req.Source != "" {
			e.Source = req.Source
		}
		e.Display = req.Display
		entries = append(entries, e)
	}
	b, err := s.d.Sessions.BeginRunWith(ctx, run, plan, entries, also)
	if err != nil {
		s.d.Hub.Release(sess.ID, run.ID)
		return domain.Run{}, err
	}
	if req.Triggered {
		s.trust.Triggered(run.ID)
	}
	s.launch(&liveRun{run: run, planning: b.Planning, history: b.History, task: req.Task, source: req.Source, compactFirst: req.CompactFirst,
		titleIt: req.Title && sess.Name == "", taskSession: new(sess.IsTaskSession())})
	return run, nil
}

// StopRun ends a run for the manager (a stopped task, whoever owns it): a
// live one is cancelled for why, a paused one ended as stopped. A run
// already over is left as it is.
func (s *Service) StopRun(ctx context.Context, runID, why string) error {
	if s.stopLive(runID, why) {
		return nil
	}
	run, err := s.d.Runs.FindRun(ctx, runID)
	if errs.Is(err, errs.NotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	switch {
	case run.Status == domain.RunInterrupted:
		return s.desk.EndPause(ctx, run, "stopped", "")
	case run.Status == domain.RunRunning && s.remote.Elsewhere(run):
		return s.remote.Stop(ctx, run.Replica, runID, why)
	}
	return nil
}

// stopLive cancels a run executing here for why; false when none is.
func (s *Service) stopLive(runID, why string) bool {
	s.mu.Lock()
	lr := s.live[runID]
	s.mu.Unlock()
	if lr == nil {
		return false
	}
	lr.stop(why)
	return true
}
