package porttest

import (
	"cmp"
	"context"
	"encoding/json"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// SessionStore is an in-memory ports.SessionStore. Writes are serialised
// (as SQLite's single writer is) and copy-on-write, so a failing
// transaction leaves nothing behind and a reader keeps the snapshot it
// started with. Deleting a session takes its hidden task sessions, and
// what the sessions hold in Runs, Tasks, Traces and Triggers, with it (the
// store's foreign keys). The zero value is empty and ready.
type SessionStore struct {
	// Runs receives the run methods of SessionTx (FileApprovals,
	// EndPause, CreateRun, CountLiveRuns, EndRun); without it they fail
	// with internal. A transaction that fails puts back the runs and
	// approvals they changed.
	Runs *RunStore
	// Tasks receives the task methods of SessionTx (FinalizeTask,
	// AdvanceTask, RecordTaskState, SettleWakeups); without it they fail.
	// A transaction that fails puts back the tasks and debts they changed.
	Tasks *TaskStore
	// Traces loses a session's spans when the session is deleted; without
	// it they stay.
	Traces *TraceStore
	// Triggers loses the triggers targeting a session when the session is
	// deleted; without it they stay.
	Triggers *TriggerStore

	writer sync.Mutex // held by every write, for its whole transaction
	mu     sync.Mutex // guards sessions (the committed state)

	sessions map[string]*sessionState
	commits  int          // the writes that stored a session's state
	reads    atomic.Int64 // the read snapshots taken (ReadSession)
}

// sessionState is one session's committed state; never changed in place
// once committed.
type sessionState struct {
	row      domain.Session
	entries  []storedEntry // by seq
	profiles map[string]storedProfile
}

type storedEntry struct {
	meta domain.EntryMeta
	body json.RawMessage
}

type storedProfile struct {
	profile json.RawMessage
	at      time.Time
}

var _ ports.SessionStore = (*SessionStore)(nil)

// storedTime is t as a store keeps it: UTC, whole milliseconds.
func storedTime(t time.Time) time.Time { return time.UnixMilli(t.UnixMilli()).UTC() }

func storedSession(s domain.Session) domain.Session {
	s.CreatedAt, s.UpdatedAt = storedTime(s.CreatedAt), storedTime(s.UpdatedAt)
	return s
}

func (s *SessionStore) snapshot(id string) (*sessionState, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.sessions[id]
	return st, ok
}

// commit replaces (or with nil removes) a session's state.
func (s *SessionStore) commit(id string, st *sessionState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st == nil {
		delete(s.sessions, id)
		return
	}
	if s.sessions == nil {
		s.sessions = map[string]*sessionState{}
	}
	s.sessions[id] = st
	s.commits++
}

// Commits is how many writes stored a session's state (a transaction
// each on a real store); a deletion is not counted.
func (s *SessionStore) Commits() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.commits
}

// Reads is how many read snapshots were taken (a read transaction each
// on a real store).
func (s *SessionStore) Reads() int { return int(s.reads.Load()) }

// rowTaken reports whether any session holds an entry with that row id
// (row ids are a global primary key).
func (s *SessionStore) rowTaken(rowID string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, st := range s.sessions {
		if slices.ContainsFunc(st.entries, func(e storedEntry) bool { return e.meta.RowID == rowID }) {
			return true
		}
	}
	return false
}

// CreateSession implements ports.SessionStore; conflict when the id is taken.
func (s *SessionStore) CreateSession(ctx context.Context, sess domain.Session) error {
	return s.CreateSessionWithEntries(ctx, sess, nil, nil)
}

// FindSession implements ports.SessionStore; not_found when absent.
func (s *SessionStore) FindSession(_ context.Context, id string) (domain.Session, error) {
	st, ok := s.snapshot(id)
	if !ok {
		return domain.Session{}, errs.E(errs.NotFound, "session not found")
	}
	return st.row, nil
}

// ListSessions implements ports.SessionStore.
func (s *SessionStore) ListSessions(_ context.Context, ownerID string) ([]domain.Session, error) {
	s.mu.Lock()
	out := []domain.Session{}
	for _, st := range s.sessions {
		if !st.row.Hidden && (ownerID == "" || st.row.OwnerID == ownerID) {
			out = append(out, st.row)
		}
	}
	s.mu.Unlock()
	slices.SortFunc(out, func(a, b domain.Session) int {
		if a.Pinned != b.Pinned {
			if a.Pinned {
				return -1
			}
			return 1
		}
		if c := b.UpdatedAt.Compare(a.UpdatedAt); c != 0 {
			return c
		}
		return cmp.Compare(b.ID, a.ID)
	})
	return out, nil
}

// UpdateSession implements ports.SessionStore: only name, pinned, planning,
// agent and the update time are stored, whatever else change touched.
func (s *SessionStore) UpdateSession(_ context.Context, id string, change func(*domain.Session) error) (domain.Session, error) {
	s.writer.Lock()
	defer s.writer.Unlock()
	st, ok := s.snapshot(id)
	if !ok {
		return domain.Session{}, errs.E(errs.NotFound, "session not found")
	}
	row := st.row
	if err := change(&row); err != nil {
		return domain.Session{}, err
	}
	next := *st
	next.row.Name, next.row.Pinned, next.row.Planning, next.row.AgentConfigID = row.Name, row.Pinned, row.Planning, row.AgentConfigID
	next.row.UpdatedAt = storedTime(row.UpdatedAt)
	s.commit(id, &next)
	return row, nil
}

// DeleteSession implements ports.SessionStore; not_found when absent. Its
// hidden task sessions go with it, and their runs, approvals, tasks,
// debts and trace spans.
func (s *SessionStore) DeleteSession(_ context.Context, id string) error {
	s.writer.Lock()
	defer s.writer.Unlock()
	if _, ok := s.snapshot(id); !ok {
		return errs.E(errs.NotFound, "session not found")
	}
	gone := []string{id}
	for _, child := range s.childrenOf(id) {
		if st, ok := s.snapshot(child); ok && st.row.Hidden {
			gone = append(gone, child)
		}
	}
	for _, g := range gone {
		s.commit(g, nil)
		if s.Runs != nil {
			s.Runs.ForgetSession(g)
		}
		if s.Tasks != nil {
			s.Tasks.ForgetSession(g)
		}
		if s.Traces != nil {
			s.Traces.ForgetSession(g)
		}
		if s.Triggers != nil {
			s.Triggers.ForgetSession(g)
		}
	}
	return nil
}

// ReadSession implements ports.SessionStore over the committed snapshot.
func (s *SessionStore) ReadSession(_ context.Context, id string, fn func(r ports.SessionReader) error) error {
	s.reads.Add(1)
	st, ok := s.snapshot(id)
	if !ok {
		return errs.E(errs.NotFound, "session not found")
	}
	return fn(&sessionTx{state: st})
}

// Entries returns every entry of a session, oldest first: what a test
// asserts on.
func (s *SessionStore) Entries(ctx context.Context, id string) ([]domain.Entry, error) {
	var out []domain.Entry
	err := s.ReadSession(ctx, id, func(r ports.SessionReader) error {
		var err error
		out, err = r.Entries(ctx, 0)
		return err
	})
	return out, err
}

// WriteSession implements ports.SessionStore: fn works on a copy that is
// committed only when it returns nil.
func (s *SessionStore) WriteSession(_ context.Context, id string, fn func(tx ports.SessionTx) error) error {
	s.writer.Lock()
	defer s.writer.Unlock()
	st, ok := s.snapshot(id)
	if !ok {
		return errs.E(errs.NotFound, "session not found")
	}
	tx := &sessionTx{store: s, state: st.clone(), writable: true}
	if err := fn(tx); err != nil {
		tx.rollback()
		return err
	}
	s.commit(id, tx.state)
	return nil
}

// CreateSessionWithEntries implements ports.SessionStore; conflict when the
// session id or an entry's row id, entry id or seq is taken.
func (s *SessionStore) CreateSessionWithEntries(ctx context.Context, sess domain.Session, entries []domain.Entry, metas []domain.EntryMeta) error {
	s.writer.Lock()
	defer s.writer.Unlock()
	if _, ok := s.snapshot(sess.ID); ok {
		return errs.E(errs.Conflict, "already exists")
	}
	tx := &sessionTx{store: s, state: &sessionState{row: storedSession(sess)}, writable: true}
	if err := tx.InsertEntries(ctx, entries, metas); err != nil {
		return err
	}
	s.commit(sess.ID, tx.state)
	return nil
}

// SaveContextProfile implements ports.SessionStore: one profile per run,
// the later save winning; conflict when the session does not exist (a
// foreign key in SQLite).
func (s *SessionStore) SaveContextProfile(_ context.Context, sessionID, runID string, profile json.RawMessage, at time.Time) error {
	s.writer.Lock()
	defer s.writer.Unlock()
	st, ok := s.snapshot(sessionID)
	if !ok {
		return errs.E(errs.Conflict, "still referenced by other rows")
	}
	next := st.clone()
	if next.profiles == nil {
		next.profiles = map[string]storedProfile{}
	}
	next.profiles[runID] = storedProfile{profile: slices.Clone(profile), at: storedTime(at)}
	s.commit(sessionID, next)
	return nil
}

func (st *sessionState) clone() *sessionState {
	return &sessionState{row: st.row, entries: slices.Clone(st.entries), profiles: maps.Clone(st.profiles)}
}

// bindProject sets a session's project when it has none: the session side
// of ProjectStore.BindSession, applied when its transaction commits.
func (s *SessionStore) bindProject(_ context.Context, sessionID, projectID string) error {
	if s == nil {
		return errs.E(errs.NotFound, "session not found")
	}
	s.writer.Lock()
	defer s.writer.Unlock()
	st, ok := s.snapshot(sessionID)
	if !ok {
		return errs.E(errs.NotFound, "session not found")
	}
	if st.row.ProjectID != "" {
		return nil
	}
	next := *st
	next.row.ProjectID = projectID
	s.commit(sessionID, &next)
	return nil
}

// childrenOf lists the ids of the sessions parentID spawned (none when s
// is nil or parentID is "").
func (s *SessionStore) childrenOf(parentID string) []string {
	if s == nil || parentID == "" {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for id, st := range s.sessions {
		if st.row.ParentSessionID == parentID {
			out = append(out, id)
		}
	}
	return out
}

// countByProject counts the sessions (hidden ones too) binding each of
// projectIDs; a project none binds is absent.
func (s *SessionStore) countByProject(projectIDs []string) map[string]int {
	out := map[string]int{}
	if s == nil {
		return out
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, st := range s.sessions {
		if st.row.ProjectID != "" && slices.Contains(projectIDs, st.row.ProjectID) {
			out[st.row.ProjectID]++
		}
	}
	return out
}

// pruneTaskSessionsLocked deletes the hidden task sessions gone accepts
// and returns their ids (TaskStore.PruneTasks, which forgets what they
// cascade to); s.writer is held.
func (s *SessionStore) pruneTaskSessionsLocked(gone func(domain.Session) bool) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ids []string
	for id, st := range s.sessions {
		if st.row.IsTaskSession() && gone(st.row) {
			delete(s.sessions, id)
			ids = append(ids, id)
		}
	}
	return ids
}
