package runs

import (
	"context"
	"errors"
	"fmt"

	"github.com/agents-server/agents-server/core/approvals"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/tools"
	"github.com/agents-server/agents-server/core/transcript"
	"github.com/agents-server/agents-server/ports"
)

// gates says which of a turn's calls wait for a person: those the agent's
// approve_tools names — except a shell command the session already trusts —
// a tool that always asks (unless its toolset refuses the call anyway,
// which the model hears at once), and a plan submitted while planning,
// always.
func (s *Service) gates(rc *runCtx, calls []domain.Item) []bool {
	out := make([]bool, len(calls))
	for i, c := range calls {
		if spec, ok := rc.agent.Offered(c.Name); ok && spec.AlwaysAsks {
			out[i] = !s.refuses(rc, c)
			continue
		}
		out[i] = (rc.planning && c.Name == tools.SubmitPlan.Name) ||
			domain.Gated(rc.agent.Agent.Approval.ApproveTools, c.Name) && !s.trust.Covers(rc.lr.run.SessionID, rc.lr.run.ID, c)
	}
	return out
}

// refuses asks the toolset of an always-asking tool whether it would
// refuse the call anyway.
func (s *Service) refuses(rc *runCtx, c domain.Item) bool {
	i, ok := rc.agent.Owner[c.Name]
	if !ok {
		return false
	}
	asker, ok := s.d.Toolsets[i].(tools.Asker)
	return ok && asker.Refuses(rc.lr.ctx, s.runCall(rc, i, c), c)
}

func anyTrue(bs []bool) bool {
	for _, b := range bs {
		if b {
			return true
		}
	}
	return false
}

// pause files the turn: the model's items, an approval per gated call and
// everything the resume needs, in one transaction — and only then says the
// run is interrupted. A pause that cannot be recorded ends the run as
// persist_error: nothing is announced as waiting for a decision nobody can
// make.
func (s *Service) pause(ctx context.Context, rc *runCtx, turn int, resp ports.ModelResponse, calls []domain.Item, gated []bool) outcome {
	lr := rc.lr
	now := s.d.Clock.Now()
	rows := approvals.Rows(lr.run, calls, gated, now, s.d.IDs.NewID)
	// From here on the run takes no injection (Inject refuses while it
	// pauses); what it took and has not read travels with the pause.
	lr.mu.Lock()
	lr.pausing.Store(true)
	var queued []domain.QueuedInput
	for _, in := range lr.queue {
		queued = append(queued, domain.QueuedInput{Queue: in.queue, Input: in.input})
	}
	lr.queue = nil
	lr.mu.Unlock()
	state := domain.PauseState{Turn: turn, AgentConfigID: rc.agent.Agent.ID, ToolChoice: rc.toolChoice, Planning: rc.planning,
		Injected: lr.injected, Calls: calls, Gated: gated, Queued: queued}
	run := lr.run
	run.AgentConfigID, run.UpdatedAt = rc.agent.Agent.ID, now
	if info, ok := s.d.Hub.Info(run.ID); ok {
		run.LastSeq = info.LastSeq + 1 // run.interrupted, below
	}
	_, err := s.d.Sessions.AppendWith(context.WithoutCancel(ctx), run.SessionID, transcript.TurnEntries(run.ID, resp, nil),
		func(tx ports.SessionTx) error { return tx.FileApprovals(ctx, rows, run, state) })
	if err != nil {
		s.d.Log.Error("recording a pause failed", "run_id", run.ID, "err", err)
		return s.failed(lr, domain.CodePersistError, "the pause for approval could not be recorded: "+errs.MessageOf(err))
	}
	s.publish(lr, domain.EventInterrupted, domain.RunIDPayload{RunID: run.ID})
	return outcome{status: domain.RunInterrupted, paused: true, pending: rows[0].ToolCallID}
}

// Approvals lists the caller's pending decisions: of one session, or (""),
// of all. Returns not_found for a session that is not the caller's.
func (s *Service) Approvals(ctx context.Context, p domain.Principal, sessionID string) ([]domain.Approval, error) {
	return s.gate.List(ctx, p, sessionID)
}

// ApprovalByCall finds the caller's pending approval of a tool call (the
// WebSocket names calls, not approvals). Returns not_found.
func (s *Service) ApprovalByCall(ctx context.Context, p domain.Principal, toolCallID string) (domain.Approval, error) {
	return s.gate.ByCall(ctx, p, toolCallID)
}

// awaitPause waits until a run that announced its pause has let go of the
// session (its teardown releases the slot right after run.interrupted), or
// until ctx ends. It blocks on the hub's signal rather than polling.
func (s *Service) awaitPause(ctx context.Context, sessionID, runID string) {
	select {
	case <-s.d.Hub.Freed(sessionID, runID):
	case <-ctx.Done():
	}
}

// Decide approves or rejects a pending call. When it was the run's last
// undecided call the SAME run resumes — same id, same event sequence — and
// the returned status is running; otherwise it stays interrupted. Returns
// not_found (unknown, someone else's, or already decided or superseded),
// validation (scope), conflict (another run is active on the session),
// rate_limited (the decision would resume the run past the owner's
// max_runs_per_user; it stays pending).
func (s *Service) Decide(ctx context.Context, p domain.Principal, approvalID string, approve bool, scope domain.ApprovalScope, reason string) (domain.Run, error) {
	a, err := s.gate.Pending(ctx, p, approvalID, scope)
	if err != nil {
		return domain.Run{}, err
	}
	if a.ToolName == domain.StepApprovalTool && s.d.Tasks != nil {
		// A workflow held before a step: no run waits, its task does.
		return s.d.Tasks.DecideStep(ctx, a, approve, reason)
	}
	// A decision may arrive the moment run.interrupted is out, while the
	// paused run is still letting go of the session: that wait is short.
	s.awaitPause(ctx, a.SessionID, a.RunID)
	if live, busy := s.d.Hub.Busy(a.SessionID); busy {
		return domain.Run{}, errs.E(errs.Conflict, "the session has an active run (%s); decide when it ends", live)
	}
	all, err := s.gate.Record(ctx, a, approve, scope, reason)
	if err != nil {
		return domain.Run{}, err
	}
	for _, x := range all {
		if x.Status == domain.ApprovalPending {
			run, err := s.d.Runs.FindRun(ctx, a.RunID)
			return run, err
		}
	}
	return s.resume(ctx, a)
}

// resume continues a paused run whose calls are all decided. Only one
// decision wins the resume; the others see the run as it now stands.
func (s *Service) resume(ctx context.Context, a domain.Approval) (domain.Run, error) {
	run, err := s.d.Runs.FindRun(ctx, a.RunID)
	if err != nil {
		return run, err
	}
	s.d.Hub.Reopen(run.ID, run.SessionID, run.OwnerID, run.LastSeq)
	if err := s.d.Hub.Claim(run.SessionID, run.ID, run.OwnerID); err != nil {
		return run, err
	}
	run, state, decided, won, err := s.d.Approvals.ResumeRun(ctx, run.ID, s.d.Replica, s.d.Clock.Now())
	if err != nil || !won {
		s.d.Hub.Release(a.SessionID, a.RunID)
		if err != nil {
			return run, err
		}
		return s.d.Runs.FindRun(ctx, a.RunID)
	}
	s.d.Hub.Resume(run.ID)
	// A task says it works again before its run can pause once more.
	listeners(s.d.Listeners).resumed(run)
	s.launchResumed(&liveRun{run: run, planning: state.Planning, resume: &resumeData{state: state, decided: decided}})
	return run, nil
}

// resumeData is what a resumed run picks up.
type resumeData struct {
	state   domain.PauseState
	decided approvals.Decided
}

// errLost rolls a pause's ending back when another ending won.
var errLost = errors.New("the pause already ended")

// endPause ends a paused run for good — a new message superseded it, a
// cancel stopped it, its approval expired — recording every waiting call as
// not run (so the history stays well-formed for the next call) plus a note.
// Only one ending wins; a late decision then finds nothing (404).
func (s *Service) endPause(ctx context.Context, run domain.Run, reason, note string) error {
	state, err := s.d.Approvals.PauseState(ctx, run.ID)
	if err != nil {
		return err
	}
	entries := approvals.NotRun(run.ID, state.Calls, reason)
	title := ""
	if reason == "expired" {
		title = "Approval expired"
	}
	if note == "" {
		note = transcript.CancelReason(reason)
	}
	entries = append(entries, transcript.EndingNote(run.ID, domain.RunCancelled, reason, title, note, nil))
	now := s.d.Clock.Now()
	run.Status, run.ErrorCode, run.UpdatedAt, run.EndedAt = domain.RunCancelled, reason, now, &now
	also := listeners(s.d.Listeners).ending(ctx, run)
	_, err = s.d.Sessions.AppendWith(ctx, run.SessionID, entries, func(tx ports.SessionTx) error {
		won, err := tx.EndPause(ctx, run)
		if err == nil && !won {
			err = errLost
		}
		if err == nil && also != nil {
			err = also(tx)
		}
		return err
	})
	if errors.Is(err, errLost) {
		return nil
	}
	if err != nil {
		return err
	}
	s.pausedRunEnded(run, reason)
	listeners(s.d.Listeners).ended(run)
	return nil
}

// pausedRunEnded tells the watchers of a paused run's stream (reopened
// first: after a restart the hub starts empty) that the run is over.
func (s *Service) pausedRunEnded(run domain.Run, reason string) {
	s.d.Hub.Reopen(run.ID, run.SessionID, run.OwnerID, run.LastSeq)
	s.d.Hub.Publish(run.ID, domain.NewEvent(domain.EventCancelled, domain.CancelledPayload{RunID: run.ID, Reason: reason}))
}

// supersede ends a session's paused run, if any, before a new run starts.
func (s *Service) supersede(ctx context.Context, sessionID string) error {
	run, ok, err := s.d.Approvals.FindPausedRun(ctx, sessionID)
	if err != nil || !ok {
		return err
	}
	return s.endPause(ctx, run, "superseded", "")
}

// ReapApprovals ends the runs whose approvals waited past
// approval_ttl_minutes (0: never), each with a visible note in its session.
func (s *Service) ReapApprovals(ctx context.Context) (int, error) {
	expired, ttl, err := s.gate.Expired(ctx)
	if err != nil {
		return 0, err
	}
	for i, a := range expired {
		done := i + 1
		if a.ToolName == domain.StepApprovalTool && s.d.Tasks != nil {
			if _, err := s.d.Tasks.DecideStep(ctx, a, false, fmt.Sprintf("nobody decided within %d minutes", ttl)); err != nil &&
				!errs.Is(err, errs.NotFound) {
				return done, err
			}
			continue
		}
		run, err := s.d.Runs.FindRun(ctx, a.RunID)
		if err != nil {
			return done, err
		}
		note := fmt.Sprintf("The approval for %s waited more than %d minutes without a decision; the run was stopped.", a.ToolName, ttl)
		if err := s.endPause(ctx, run, "expired", note); err != nil {
			return done, err
		}
	}
	return len(expired), nil
}

// ReopenPaused gives every paused run a live stream again after a restart,
// so its events can be followed and its decision resumes the sequence.
func (s *Service) ReopenPaused(ctx context.Context) error {
	paused, err := s.d.Approvals.ListInterruptedRuns(ctx)
	if err != nil {
		return err
	}
	for _, r := range paused {
		s.d.Hub.Reopen(r.ID, r.SessionID, r.OwnerID, r.LastSeq)
	}
	return nil
}
