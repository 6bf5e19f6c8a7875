package porttest

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// RunStore is an in-memory ports.RunStore and ports.ApprovalStore — and
// the run side of a SessionStore's write transactions (set it as
// SessionStore.Runs): run rows, their resume states and their approvals
// live together because pausing, resuming and ending a pause change them
// in one step. Every method is atomic under one lock. Times are kept as a
// store keeps them (UTC, whole milliseconds) and a resume state goes
// through JSON, as it does on disk. The zero value is empty and ready;
// Sessions and Tasks are where the other tables an approval's read
// reaches live.
type RunStore struct {
	// Sessions holds the task sessions whose approvals a session's
	// ListApprovals takes in; without it a session has none.
	Sessions *SessionStore
	// Tasks names the task whose attempt filed an approval (its TaskID);
	// without it no approval has one.
	Tasks *TaskStore

	mu        sync.Mutex
	runs      map[string]storedRun
	approvals map[string]domain.Approval
	roll      map[string]time.Time // replica → its last beat
}

// storedRun is a run row with its resume state (nil when it has none).
type storedRun struct {
	run   domain.Run
	state json.RawMessage
}

var (
	_ ports.RunStore      = (*RunStore)(nil)
	_ ports.ApprovalStore = (*RunStore)(nil)
)

// CreateRun inserts a run row; conflict when its id is taken.
func (s *RunStore) CreateRun(ctx context.Context, r domain.Run) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.createLocked(r)
}

// createSessionRun is SessionTx.CreateRun: conflict when the id is taken
// or another running run holds the session (the store decides between
// replicas starting runs on one session).
func (s *RunStore) createSessionRun(ctx context.Context, r domain.Run) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.Status == domain.RunRunning {
		for id, cur := range s.runs {
			if id != r.ID && cur.run.SessionID == r.SessionID && cur.run.Status == domain.RunRunning {
				return errs.E(errs.Conflict, "the session has an active run (%s)", id)
			}
		}
	}
	return s.createLocked(r)
}

// createLocked inserts a run row; s.mu is held.
func (s *RunStore) createLocked(r domain.Run) error {
	if _, ok := s.runs[r.ID]; ok {
		return errs.E(errs.Conflict, "run %s already exists", r.ID)
	}
	if s.runs == nil {
		s.runs = map[string]storedRun{}
	}
	s.runs[r.ID] = storedRun{run: storedRunRow(r)}
	return nil
}

// UpdateRun stores a run's agent, status, sequence, outcome and times (not
// its session, owner, project, input or creation time); not_found when
// absent.
func (s *RunStore) UpdateRun(ctx context.Context, r domain.Run) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, ok := s.runs[r.ID]
	if !ok {
		return errs.E(errs.NotFound, "run not found")
	}
	r = storedRunRow(r)
	row := &cur.run
	row.AgentConfigID, row.Status, row.LastSeq, row.ErrorCode, row.ErrorMessage = r.AgentConfigID, r.Status, r.LastSeq, r.ErrorCode, r.ErrorMessage
	row.FinalOutput, row.UpdatedAt, row.EndedAt, row.PartialOutput = r.FinalOutput, r.UpdatedAt, r.EndedAt, r.PartialOutput
	row.CallsInFlight = r.CallsInFlight
	s.runs[r.ID] = cur
	return nil
}

// CheckpointRun records a running run's last seq and partial output; a run
// that is not running (or absent) is left alone.
func (s *RunStore) CheckpointRun(ctx context.Context, id string, lastSeq int64, partial string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if cur, ok := s.runs[id]; ok && cur.run.Status == domain.RunRunning {
		cur.run.LastSeq, cur.run.PartialOutput = lastSeq, partial
		s.runs[id] = cur
	}
	return nil
}

// MarkRunSeq raises a run's seq mark to upto; an absent run is left alone.
func (s *RunStore) MarkRunSeq(ctx context.Context, id string, upto int64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if cur, ok := s.runs[id]; ok && cur.run.SeqMark < upto {
		cur.run.SeqMark = upto
		s.runs[id] = cur
	}
	return nil
}

// RecordCallsInFlight sets a running run's calls in flight; a run that is
// not running (or absent) is left alone.
func (s *RunStore) RecordCallsInFlight(ctx context.Context, id, calls string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if cur, ok := s.runs[id]; ok && cur.run.Status == domain.RunRunning {
		cur.run.CallsInFlight = calls
		s.runs[id] = cur
	}
	return nil
}

// FindRun returns not_found when absent.
func (s *RunStore) FindRun(ctx context.Context, id string) (domain.Run, error) {
	if err := ctx.Err(); err != nil {
		return domain.Run{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.runs[id]
	if !ok {
		return domain.Run{}, errs.E(errs.NotFound, "run not found")
	}
	return r.run, nil
}

// ListSessionRuns returns a session's runs, oldest (smallest id) first.
func (s *RunStore) ListSessionRuns(ctx context.Context, sessionID string) ([]domain.Run, error) {
	return s.runsWhere(ctx, func(r domain.Run) bool { return r.SessionID == sessionID })
}

// ListRunningRuns returns ownerID's running runs, oldest (smallest id)
// first.
func (s *RunStore) ListRunningRuns(ctx context.Context, ownerID string) ([]domain.Run, error) {
	return s.runsWhere(ctx, func(r domain.Run) bool { return r.OwnerID == ownerID && r.Status == domain.RunRunning })
}

// FailOrphanedRuns ends every running run of a replica other than o.Self
// that has not beaten since o.AliveSince (and o.Self's too when it
// restarted) as an error with the sweep's code and message, and returns
// them as they were before; the gone replicas leave the roll.
func (s *RunStore) FailOrphanedRuns(ctx context.Context, o ports.Orphans) ([]domain.Run, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	since, at := storedTime(o.AliveSince), storedTime(o.At)
	alive := func(replica string) bool {
		seen, ok := s.roll[replica]
		return ok && !seen.Before(since)
	}
	out := []domain.Run{}
	for _, id := range slices.Sorted(maps.Keys(s.runs)) {
		cur := s.runs[id]
		r := cur.run
		if r.Status != domain.RunRunning || (r.Replica == o.Self && !o.Restarted) || (r.Replica != o.Self && alive(r.Replica)) {
			continue
		}
		out = append(out, r)
		cur.run.Status, cur.run.ErrorCode, cur.run.ErrorMessage, cur.run.UpdatedAt, cur.run.EndedAt = domain.RunError, o.Code, o.Message, at, &at
		cur.run.LastSeq = cur.run.EndingSeq()
		s.runs[id] = cur
	}
	maps.DeleteFunc(s.roll, func(replica string, seen time.Time) bool { return replica != o.Self && seen.Before(since) })
	return out, nil
}

// Beat puts replica on the roll FailOrphanedRuns reads, alive at at
// (ports.ReplicaStore's Beat).
func (s *RunStore) Beat(ctx context.Context, replica string, at time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.roll == nil {
		s.roll = map[string]time.Time{}
	}
	s.roll[replica] = storedTime(at)
	return nil
}

// keep returns what puts the rows and approvals of runIDs back as they
// are now: the rollback of a failing session transaction's run writes.
func (s *RunStore) keep(runIDs ...string) (undo func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rows := map[string]*storedRun{}
	var approvals []domain.Approval
	slices.Sort(runIDs)
	for _, id := range slices.Compact(runIDs) {
		rows[id] = nil
		if cur, ok := s.runs[id]; ok {
			rows[id] = &cur
		}
		approvals = append(approvals, s.approvalsOfLocked(id)...)
	}
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		for id, cur := range rows {
			if cur == nil {
				delete(s.runs, id)
			} else {
				s.runs[id] = *cur
			}
			maps.DeleteFunc(s.approvals, func(_ string, a domain.Approval) bool { return a.RunID == id })
		}
		for _, a := range approvals {
			s.approvals[a.ID] = a
		}
	}
}

// ForgetSession drops a session's runs and their approvals: what deleting
// the session cascades to in the real store (SessionStore.DeleteSession
// calls it when this fake is its Runs).
func (s *RunStore) ForgetSession(sessionID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	maps.DeleteFunc(s.runs, func(_ string, r storedRun) bool { return r.run.SessionID == sessionID })
	maps.DeleteFunc(s.approvals, func(_ string, a domain.Approval) bool { return a.SessionID == sessionID })
}

// Runs returns every run row, oldest first: what a test asserts on.
func (s *RunStore) Runs() []domain.Run {
	out, _ := s.runsWhere(context.Background(), func(domain.Run) bool { return true })
	return out
}

// runsWhere lists the runs keep accepts, oldest (smallest id) first.
func (s *RunStore) runsWhere(ctx context.Context, keep func(domain.Run) bool) ([]domain.Run, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []domain.Run{}
	for _, id := range slices.Sorted(maps.Keys(s.runs)) {
		if r := s.runs[id].run; keep(r) {
			out = append(out, r)
		}
	}
	return out, nil
}

// storedRunRow is r with its times as the store keeps them.
func storedRunRow(r domain.Run) domain.Run {
	r.CreatedAt, r.UpdatedAt = storedTime(r.CreatedAt), storedTime(r.UpdatedAt)
	if r.EndedAt != nil {
		t := storedTime(*r.EndedAt)
		r.EndedAt = &t
	}
	return r
}
