package porttest

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
)

// The ports.ApprovalStore and RunLedger side of RunStore.

// ListApprovals returns an owner's pending approvals, oldest first, of one
// session and its tasks' sessions or (sessionID "") of all.
func (s *RunStore) ListApprovals(ctx context.Context, ownerID, sessionID string) ([]domain.Approval, error) {
	of := map[string]bool{sessionID: true}
	for _, id := range s.Sessions.childrenOf(sessionID) {
		of[id] = true
	}
	return s.approvalsWhere(ctx, func(a domain.Approval) bool {
		return a.OwnerID == ownerID && a.Status == domain.ApprovalPending && (sessionID == "" || of[a.SessionID])
	})
}

// FindApproval returns not_found when absent.
func (s *RunStore) FindApproval(ctx context.Context, id string) (domain.Approval, error) {
	if err := ctx.Err(); err != nil {
		return domain.Approval{}, err
	}
	s.mu.Lock()
	a, ok := s.approvals[id]
	s.mu.Unlock()
	if !ok {
		return a, errs.E(errs.NotFound, "approval not found")
	}
	return s.named([]domain.Approval{a})[0], nil
}

// FindApprovalByCall returns an owner's newest pending approval of a tool
// call; not_found when absent.
func (s *RunStore) FindApprovalByCall(ctx context.Context, ownerID, toolCallID string) (domain.Approval, error) {
	found, err := s.approvalsWhere(ctx, func(a domain.Approval) bool {
		return a.OwnerID == ownerID && a.ToolCallID == toolCallID && a.Status == domain.ApprovalPending
	})
	if err != nil {
		return domain.Approval{}, err
	}
	if len(found) == 0 {
		return domain.Approval{}, errs.E(errs.NotFound, "approval not found")
	}
	return found[len(found)-1], nil
}

// DecideApproval records a decision on a pending approval — a
// compare-and-set: not_found when it is no longer pending (or absent) —
// and returns every approval of its run, oldest first.
func (s *RunStore) DecideApproval(ctx context.Context, id, status, scope, reason string, at time.Time, maxLive int) ([]domain.Approval, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	a, ok := s.approvals[id]
	if !ok || a.Status != domain.ApprovalPending {
		s.mu.Unlock()
		return nil, errs.E(errs.NotFound, "approval not found")
	}
	decided := a
	at = storedTime(at)
	decided.Status, decided.Scope, decided.Reason, decided.DecidedAt = status, scope, reason, &at
	s.approvals[id] = decided
	resumes := !slices.ContainsFunc(s.approvalsOfLocked(a.RunID), func(x domain.Approval) bool { return x.Status == domain.ApprovalPending })
	if maxLive > 0 && resumes && s.liveLocked(a.OwnerID) > maxLive {
		s.approvals[id] = a // refused: nothing recorded
		s.mu.Unlock()
		return nil, domain.TooManyRuns(maxLive)
	}
	s.mu.Unlock()
	return s.approvalsWhere(ctx, func(x domain.Approval) bool { return x.RunID == a.RunID })
}

// CountLiveRuns says how many of ownerID's runs are running or paused
// with every call decided.
func (s *RunStore) CountLiveRuns(ctx context.Context, ownerID string) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.liveLocked(ownerID), nil
}

// liveLocked counts ownerID's live runs; s.mu is held.
func (s *RunStore) liveLocked(ownerID string) int {
	n := 0
	for _, r := range s.runs {
		if r.run.OwnerID != ownerID {
			continue
		}
		switch r.run.Status {
		case domain.RunRunning:
			n++
		case domain.RunInterrupted:
			if !slices.ContainsFunc(s.approvalsOfLocked(r.run.ID), func(x domain.Approval) bool { return x.Status == domain.ApprovalPending }) {
				n++
			}
		}
	}
	return n
}

// ExpiredApprovals returns pending approvals filed before cutoff, oldest
// first.
func (s *RunStore) ExpiredApprovals(ctx context.Context, cutoff time.Time) ([]domain.Approval, error) {
	cutoff = storedTime(cutoff)
	return s.approvalsWhere(ctx, func(a domain.Approval) bool {
		return a.Status == domain.ApprovalPending && a.CreatedAt.Before(cutoff)
	})
}

// ResumeRun moves an interrupted run back to running on replica and hands back its
// resume state and its approvals, deleting them; only one caller wins (ok
// false, no error, for the others and for an unknown run).
func (s *RunStore) ResumeRun(ctx context.Context, runID, replica string, at time.Time) (domain.Run, domain.PauseState, []domain.Approval, bool, error) {
	var state domain.PauseState
	if err := ctx.Err(); err != nil {
		return domain.Run{}, state, nil, false, err
	}
	s.mu.Lock()
	cur, ok := s.runs[runID]
	if !ok || cur.run.Status != domain.RunInterrupted {
		s.mu.Unlock()
		return domain.Run{}, state, nil, false, nil
	}
	if err := json.Unmarshal(cur.state, &state); err != nil {
		s.mu.Unlock()
		return domain.Run{}, state, nil, false, errs.Wrap(errs.Internal, err, "run %s has a malformed resume state", runID)
	}
	cur.run.Status, cur.run.Replica, cur.run.UpdatedAt = domain.RunRunning, replica, storedTime(at)
	s.runs[runID] = cur
	decided := s.approvalsOfLocked(runID)
	for _, a := range decided {
		delete(s.approvals, a.ID)
	}
	s.mu.Unlock()
	return cur.run, state, s.named(decided), true, nil
}

// ListInterruptedRuns returns every paused run, oldest first.
func (s *RunStore) ListInterruptedRuns(ctx context.Context) ([]domain.Run, error) {
	return s.runsWhere(ctx, func(r domain.Run) bool { return r.Status == domain.RunInterrupted })
}

// FindPausedRun returns a session's newest paused run; ok false when none.
func (s *RunStore) FindPausedRun(ctx context.Context, sessionID string) (domain.Run, bool, error) {
	paused, err := s.runsWhere(ctx, func(r domain.Run) bool { return r.SessionID == sessionID && r.Status == domain.RunInterrupted })
	if err != nil || len(paused) == 0 {
		return domain.Run{}, false, err
	}
	return paused[len(paused)-1], true, nil
}

// PauseState returns a run's resume state (the zero state when it has
// none); not_found for an unknown run.
func (s *RunStore) PauseState(ctx context.Context, runID string) (domain.PauseState, error) {
	var state domain.PauseState
	if err := ctx.Err(); err != nil {
		return state, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, ok := s.runs[runID]
	if !ok {
		return state, errs.E(errs.NotFound, "run not found")
	}
	if len(cur.state) == 0 {
		return state, nil
	}
	if err := json.Unmarshal(cur.state, &state); err != nil {
		return state, errs.Wrap(errs.Internal, err, "run %s has a malformed resume state", runID)
	}
	return state, nil
}

// FileApprovals pauses a running run: its approvals filed pending, its
// resume state kept, the row at interrupted with run's agent, sequence and
// update time. not_found unless the run is running; conflict for an
// approval id, or a call of the run, already filed. Nothing changes on an
// error.
func (s *RunStore) FileApprovals(ctx context.Context, approvals []domain.Approval, run domain.Run, state domain.PauseState) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	raw, err := json.Marshal(state)
	if err != nil {
		return errs.Wrap(errs.Internal, err, "encode the resume state of run %s", run.ID)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, ok := s.runs[run.ID]
	if !ok || cur.run.Status != domain.RunRunning {
		return errs.E(errs.NotFound, "running run not found")
	}
	filed := map[string]bool{}
	for _, a := range s.approvals {
		filed[a.RunID+"\x00"+a.ToolCallID] = true
	}
	for _, a := range approvals {
		if _, taken := s.approvals[a.ID]; taken || filed[a.RunID+"\x00"+a.ToolCallID] {
			return errs.E(errs.Conflict, "approval %s (call %s) is already filed", a.ID, a.ToolCallID)
		}
		filed[a.RunID+"\x00"+a.ToolCallID] = true
	}
	if s.approvals == nil {
		s.approvals = map[string]domain.Approval{}
	}
	for _, a := range approvals {
		a.Status, a.Scope, a.Reason, a.CreatedAt, a.DecidedAt = domain.ApprovalPending, "", "", storedTime(a.CreatedAt), nil
		s.approvals[a.ID] = a
	}
	cur.run.Status, cur.run.AgentConfigID, cur.run.LastSeq, cur.run.UpdatedAt = domain.RunInterrupted, run.AgentConfigID, run.LastSeq, storedTime(run.UpdatedAt)
	cur.state = raw
	s.runs[run.ID] = cur
	return nil
}

// EndPause ends an interrupted run for good with run's status, error and
// times, dropping its resume state and approvals; false (nothing changed)
// when the run is not interrupted — another caller won.
func (s *RunStore) EndPause(ctx context.Context, run domain.Run) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, ok := s.runs[run.ID]
	if !ok || cur.run.Status != domain.RunInterrupted {
		return false, nil
	}
	run = storedRunRow(run)
	cur.run.Status, cur.run.ErrorCode, cur.run.ErrorMessage, cur.run.UpdatedAt, cur.run.EndedAt = run.Status, run.ErrorCode, run.ErrorMessage, run.UpdatedAt, run.EndedAt
	cur.state = nil
	s.runs[run.ID] = cur
	for _, a := range s.approvalsOfLocked(run.ID) {
		delete(s.approvals, a.ID)
	}
	return true, nil
}

// Approvals returns every approval row, decided or not, oldest first: what
// a test asserts on.
func (s *RunStore) Approvals() []domain.Approval {
	out, _ := s.approvalsWhere(context.Background(), func(domain.Approval) bool { return true })
	return out
}

// approvalsWhere lists the approvals keep accepts, oldest first, named.
func (s *RunStore) approvalsWhere(ctx context.Context, keep func(domain.Approval) bool) ([]domain.Approval, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	out := []domain.Approval{}
	for _, id := range slices.Sorted(maps.Keys(s.approvals)) {
		if a := s.approvals[id]; keep(a) {
			out = append(out, a)
		}
	}
	s.mu.Unlock()
	return s.named(out), nil
}

// named sets each approval's TaskID, as the store reads it: the task
// whose attempt is the approval's run. s.mu is not held (the task store
// reaches this one under its own lock).
func (s *RunStore) named(list []domain.Approval) []domain.Approval {
	for i := range list {
		list[i].TaskID = s.Tasks.taskOfRun(list[i].RunID)
	}
	return list
}

// approvalsOfLocked lists a run's approvals, oldest first; s.mu is held.
func (s *RunStore) approvalsOfLocked(runID string) []domain.Approval {
	var out []domain.Approval
	for _, id := range slices.Sorted(maps.Keys(s.approvals)) {
		if a := s.approvals[id]; a.RunID == runID {
			out = append(out, a)
		}
	}
	return out
}

// fileStepApproval files a workflow's pause_before approval, pending
// under a run that has not started (TaskStore.PauseStep); conflict when
// its id is taken.
func (s *RunStore) fileStepApproval(a domain.Approval) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, taken := s.approvals[a.ID]; taken {
		return errs.E(errs.Conflict, "approval %s is already filed", a.ID)
	}
	if s.approvals == nil {
		s.approvals = map[string]domain.Approval{}
	}
	a.Status, a.Scope, a.Reason, a.CreatedAt, a.DecidedAt = domain.ApprovalPending, "", "", storedTime(a.CreatedAt), nil
	s.approvals[a.ID] = a
	return nil
}

// takePendingApproval deletes an approval that is still pending and
// reports whether it did (TaskStore.ResolveStep's compare-and-set).
func (s *RunStore) takePendingApproval(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.approvals[id]
	if !ok || a.Status != domain.ApprovalPending {
		return false
	}
	delete(s.approvals, id)
	return true
}

// dropUnstartedApprovals deletes the approvals filed under runID when no
// such run was ever started: a step approval going with its task.
func (s *RunStore) dropUnstartedApprovals(runID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, started := s.runs[runID]; started {
		return
	}
	maps.DeleteFunc(s.approvals, func(_ string, a domain.Approval) bool { return a.RunID == runID })
}
