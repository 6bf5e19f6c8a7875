package approvals

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agents-server/agents-server/core/audit"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/hub"
	"github.com/agents-server/agents-server/core/transcript"
	"github.com/agents-server/agents-server/ports"
)

// Lifecycle hears of paused runs' lives (the run engine's listeners, in
// their order).
type Lifecycle interface {
	// Ending is what a run's end also writes in its transaction (nil:
	// nothing); taskSession false says the run's session is not a task's.
	Ending(ctx context.Context, run domain.Run, taskSession bool) func(tx ports.SessionTx) error
	// Resumed is told when a decision lets a paused run go on.
	Resumed(run domain.Run)
	// Ended is told once a paused run has ended for good.
	Ended(run domain.Run)
}

// Steps decides the approvals that hold a workflow before a step (the
// task manager): no run waits on those, a task does.
type Steps interface {
	DecideStep(ctx context.Context, a domain.Approval, approve bool, reason string) (domain.Run, error)
}

// DeskDeps are what the desk works with.
type DeskDeps struct {
	Gate  *Service
	Hub   *hub.Hub
	Store ports.ApprovalStore
	Runs  interface {
		FindRun(ctx context.Context, id string) (domain.Run, error)
	}
	// Sessions records a paused run's end in its conversation.
	Sessions interface {
		AppendWith(ctx context.Context, sessionID string, entries []domain.Entry, also func(tx ports.SessionTx) error) ([]domain.Entry, error)
	}
	Lifecycle Lifecycle
	// Steps decides workflow steps' approvals; nil: there are none.
	Steps Steps
	// Resume continues a run whose calls are all decided, on this replica:
	// the same run, its events numbered on from its pause.
	Resume func(run domain.Run, state domain.PauseState, decided Decided)
	// Replica is this process's id: a resumed run is this replica's.
	Replica string
	Clock   ports.Clock
}

// Desk is where paused runs' decisions land: a decision resumes the run
// once its last call is decided, and a pause that ends otherwise (a new
// message, a cancel, an expiry) is recorded with its calls not run.
type Desk struct{ d DeskDeps }

// NewDesk returns a Desk.
func NewDesk(d DeskDeps) *Desk { return &Desk{d: d} }

// Pause files a run's turn as it waits for decisions — the turn's entries,
// rows (an approval per gated call) and state (what its resume needs) in
// one transaction — and only then says the run is interrupted: nothing is
// announced as waiting for a decision nobody can make.
func (k *Desk) Pause(ctx context.Context, run domain.Run, entries []domain.Entry, rows []domain.Approval, state domain.PauseState) error {
	if info, ok := k.d.Hub.Info(run.ID); ok {
		run.LastSeq = info.LastSeq + 1 // run.interrupted, below
	}
	if _, err := k.d.Sessions.AppendWith(ctx, run.SessionID, entries,
		func(tx ports.SessionTx) error { return tx.FileApprovals(ctx, rows, run, state) }); err != nil {
		return err
	}
	k.d.Hub.Publish(run.ID, domain.NewEvent(domain.EventInterrupted, domain.RunIDPayload{RunID: run.ID}))
	return nil
}

// AwaitPause waits until a run that is letting go of the session has let
// go — one that announced its pause (its teardown releases the slot right
// after run.interrupted), or one whose end is being recorded — or until
// ctx ends, or letGoWait passes: a pause or an end is recorded in
// milliseconds when the store answers, and one that waits for a store that
// does not must not hold the caller's request with it. It blocks on the
// hub's signal rather than polling.
func (k *Desk) AwaitPause(ctx context.Context, sessionID, runID string) {
	wait := time.NewTimer(letGoWait)
	defer wait.Stop()
	select {
	case <-k.d.Hub.Freed(sessionID, runID):
	case <-ctx.Done():
	case <-wait.C:
	}
}

// letGoWait bounds AwaitPause.
const letGoWait = 5 * time.Second

// Decide approves or rejects a pending call. When it was the run's last
// undecided call the SAME run resumes — same id, same event sequence — and
// the returned status is running; otherwise it stays interrupted. Returns
// not_found (unknown, someone else's, or already decided or superseded),
// validation (scope), conflict (another run is active on the session),
// rate_limited (the decision would resume the run past the owner's
// max_runs_per_user; it stays pending).
func (k *Desk) Decide(ctx context.Context, p domain.Principal, approvalID string, approve bool, scope domain.ApprovalScope, reason string) (domain.Run, error) {
	a, err := k.d.Gate.Pending(ctx, p, approvalID, scope)
	if err != nil {
		return domain.Run{}, err
	}
	// The decision is recorded with its write: who, which call, and
	// whether it trusts commands for the rest of the session.
	verb, fields := "approval.reject", []string{"status"}
	if approve {
		verb = "approval.approve"
		if scope == domain.ScopeSame || scope == domain.ScopeAll {
			verb, fields = "approval.trust_"+string(scope), append(fields, "trust")
		}
	}
	actx := audit.Change(ctx, k.d.Clock.Now(), verb, audit.Object{Kind: "approval", ID: a.ID, Name: a.ToolName}, fields...)
	if a.ToolName == domain.StepApprovalTool && k.d.Steps != nil {
		// A workflow held before a step: no run waits, its task does.
		return k.d.Steps.DecideStep(actx, a, approve, reason)
	}
	// A decision may arrive the moment run.interrupted is out, while the
	// paused run is still letting go of the session: that wait is short.
	k.AwaitPause(ctx, a.SessionID, a.RunID)
	if live, busy := k.d.Hub.Busy(a.SessionID); busy {
		return domain.Run{}, errs.E(errs.Conflict, "the session has an active run (%s); decide when it ends", live)
	}
	all, err := k.d.Gate.Record(actx, a, approve, scope, reason)
	if err != nil {
		return domain.Run{}, err
	}
	for _, x := range all {
		if x.Status == domain.ApprovalPending {
			return k.d.Runs.FindRun(ctx, a.RunID)
		}
	}
	return k.resume(ctx, a)
}

// resume continues a paused run whose calls are all decided. Only one
// decision wins the resume; the others see the run as it now stands.
func (k *Desk) resume(ctx context.Context, a domain.Approval) (domain.Run, error) {
	run, err := k.d.Runs.FindRun(ctx, a.RunID)
	if err != nil {
		return run, err
	}
	k.d.Hub.Reopen(run.ID, run.SessionID, run.OwnerID, run.LastSeq)
	if err := k.d.Hub.Claim(run.SessionID, run.ID, run.OwnerID); err != nil {
		return run, err
	}
	run, state, decided, won, err := k.d.Store.ResumeRun(ctx, run.ID, k.d.Replica, k.d.Clock.Now())
	if err != nil || !won {
		k.d.Hub.Release(a.SessionID, a.RunID)
		if err != nil {
			return run, err
		}
		return k.d.Runs.FindRun(ctx, a.RunID)
	}
	k.d.Hub.Resume(run.ID)
	// A task says it works again before its run can pause once more.
	k.d.Lifecycle.Resumed(run)
	k.d.Resume(run, state, decided)
	return run, nil
}

// errLost rolls a pause's ending back when another ending won.
var errLost = errors.New("the pause already ended")

// EndPause ends a paused run for good — a new message superseded it, a
// cancel stopped it, its approval expired — recording every waiting call as
// not run (so the history stays well-formed for the next call) plus a note
// (note "" says the reason's usual words). Only one ending wins; a late
// decision then finds nothing (404).
func (k *Desk) EndPause(ctx context.Context, run domain.Run, reason, note string) error {
	state, err := k.d.Store.PauseState(ctx, run.ID)
	if err != nil {
		return err
	}
	entries := NotRun(run.ID, state.Calls, reason)
	title := ""
	if reason == "expired" {
		title = "Approval expired"
	}
	if note == "" {
		note = transcript.CancelReason(reason)
	}
	entries = append(entries, transcript.EndingNote(run.ID, domain.RunCancelled, reason, title, note, nil))
	now := k.d.Clock.Now()
	run.Status, run.ErrorCode, run.UpdatedAt, run.EndedAt = domain.RunCancelled, reason, now, &now
	also := k.d.Lifecycle.Ending(ctx, run, true) // the desk does not know the session
	_, err = k.d.Sessions.AppendWith(ctx, run.SessionID, entries, func(tx ports.SessionTx) error {
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
	k.PausedRunEnded(run, reason)
	k.d.Lifecycle.Ended(run)
	return nil
}

// PausedRunEnded tells the watchers of a paused run's stream (reopened
// first: after a restart the hub starts empty) that the run is over.
func (k *Desk) PausedRunEnded(run domain.Run, reason string) {
	k.d.Hub.Reopen(run.ID, run.SessionID, run.OwnerID, run.LastSeq)
	k.d.Hub.Publish(run.ID, domain.NewEvent(domain.EventCancelled, domain.CancelledPayload{RunID: run.ID, Reason: reason}))
}

// Supersede ends a session's paused run, if any, before a new run starts.
func (k *Desk) Supersede(ctx context.Context, sessionID string) error {
	run, ok, err := k.d.Store.FindPausedRun(ctx, sessionID)
	if err != nil || !ok {
		return err
	}
	return k.EndPause(ctx, run, "superseded", "")
}

// ReapApprovals ends the runs whose approvals waited past
// approval_ttl_minutes (0: never), each with a visible note in its
// session; a held workflow step is rejected instead.
func (k *Desk) ReapApprovals(ctx context.Context) (int, error) {
	expired, ttl, err := k.d.Gate.Expired(ctx)
	if err != nil {
		return 0, err
	}
	for i, a := range expired {
		done := i + 1
		if a.ToolName == domain.StepApprovalTool && k.d.Steps != nil {
			if _, err := k.d.Steps.DecideStep(ctx, a, false, fmt.Sprintf("nobody decided within %d minutes", ttl)); err != nil &&
				!errs.Is(err, errs.NotFound) {
				return done, err
			}
			continue
		}
		run, err := k.d.Runs.FindRun(ctx, a.RunID)
		if err != nil {
			return done, err
		}
		note := fmt.Sprintf("The approval for %s waited more than %d minutes without a decision; the run was stopped.", a.ToolName, ttl)
		if err := k.EndPause(ctx, run, "expired", note); err != nil {
			return done, err
		}
	}
	return len(expired), nil
}

// ReopenPaused gives every paused run a live stream again after a restart,
// so its events can be followed and its decision resumes the sequence.
func (k *Desk) ReopenPaused(ctx context.Context) error {
	paused, err := k.d.Store.ListInterruptedRuns(ctx)
	if err != nil {
		return err
	}
	for _, r := range paused {
		k.d.Hub.Reopen(r.ID, r.SessionID, r.OwnerID, r.LastSeq)
	}
	return nil
}
