package porttest

import (
	"cmp"
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// sessionTx implements ports.SessionTx over one session's state: a
// committed snapshot for reads, a private copy for a write transaction.
type sessionTx struct {
	store    *SessionStore
	state    *sessionState
	writable bool
	undo     []func() // puts back what the run and task writes changed, newest last
}

// rollback undoes the transaction's writes to the other fakes (its own
// state is a copy that is simply not committed).
func (t *sessionTx) rollback() {
	for i := len(t.undo) - 1; i >= 0; i-- {
		t.undo[i]()
	}
}

func (t *sessionTx) raw(e storedEntry) domain.RawEntry {
	m := e.meta
	if m.Usage != nil {
		u := *m.Usage
		m.Usage = &u
	}
	return domain.RawEntry{Meta: m, Body: slices.Clone(e.body)}
}

func (t *sessionTx) decode(e storedEntry) (domain.Entry, error) {
	out, err := t.raw(e).Decode()
	if err != nil {
		return out, errs.Wrap(errs.Internal, err, "entry %s has a malformed body", e.meta.RowID)
	}
	return out, nil
}

// filter returns the entries that pass keep, decoded, oldest first.
func (t *sessionTx) filter(keep func(domain.EntryMeta) bool) ([]domain.Entry, error) {
	out := []domain.Entry{}
	for _, e := range t.state.entries {
		if keep(e.meta) {
			d, err := t.decode(e)
			if err != nil {
				return nil, err
			}
			out = append(out, d)
		}
	}
	return out, nil
}

func (t *sessionTx) metas(keep func(domain.EntryMeta) bool) []domain.EntryMeta {
	out := []domain.EntryMeta{}
	for _, e := range t.state.entries {
		if keep(e.meta) {
			out = append(out, t.raw(e).Meta)
		}
	}
	return out
}

func (t *sessionTx) find(entryID string) (storedEntry, error) {
	i := slices.IndexFunc(t.state.entries, func(e storedEntry) bool { return e.meta.ID == entryID })
	if i < 0 {
		return storedEntry{}, errs.E(errs.NotFound, "entry not found")
	}
	return t.state.entries[i], nil
}

// Session implements ports.SessionReader.
func (t *sessionTx) Session(context.Context) (domain.Session, error) { return t.state.row, nil }

// EntryMetas implements ports.SessionReader.
func (t *sessionTx) EntryMetas(_ context.Context, fromSeq int64) ([]domain.EntryMeta, error) {
	return t.metas(func(m domain.EntryMeta) bool { return m.Seq >= fromSeq }), nil
}

// ContentEntries implements ports.SessionReader.
func (t *sessionTx) ContentEntries(_ context.Context, beforeSeq int64, limit int) ([]domain.RawEntry, error) {
	out := []domain.RawEntry{}
	for _, e := range t.state.entries {
		if domain.IsContentKind(e.meta.Kind) && (beforeSeq <= 0 || e.meta.Seq < beforeSeq) {
			out = append(out, t.raw(e))
		}
	}
	if limit > 0 && len(out) > limit {
		out = out[len(out)-limit:]
	}
	return out, nil
}

// Entries implements ports.SessionReader.
func (t *sessionTx) Entries(_ context.Context, maxSeq int64) ([]domain.Entry, error) {
	return t.filter(func(m domain.EntryMeta) bool { return maxSeq <= 0 || m.Seq <= maxSeq })
}

// UpdatesTargeting implements ports.SessionReader.
func (t *sessionTx) UpdatesTargeting(_ context.Context, targets []string) ([]domain.Entry, error) {
	return t.filter(func(m domain.EntryMeta) bool {
		return m.Kind == domain.KindUpdate && slices.Contains(targets, m.Target)
	})
}

// FindEntry implements ports.SessionReader.
func (t *sessionTx) FindEntry(_ context.Context, entryID string) (domain.Entry, error) {
	e, err := t.find(entryID)
	if err != nil {
		return domain.Entry{}, err
	}
	return t.decode(e)
}

// EntriesByID implements ports.SessionReader.
func (t *sessionTx) EntriesByID(_ context.Context, ids []string) ([]domain.Entry, error) {
	return t.filter(func(m domain.EntryMeta) bool { return slices.Contains(ids, m.ID) })
}

// FindMeta implements ports.SessionReader.
func (t *sessionTx) FindMeta(_ context.Context, entryID string) (domain.EntryMeta, error) {
	e, err := t.find(entryID)
	if err != nil {
		return domain.EntryMeta{}, err
	}
	return t.raw(e).Meta, nil
}

// MetasByBranchParent implements ports.SessionReader.
func (t *sessionTx) MetasByBranchParent(_ context.Context, parents []string) ([]domain.EntryMeta, error) {
	return t.metas(func(m domain.EntryMeta) bool {
		return domain.IsContentKind(m.Kind) && slices.Contains(parents, m.BranchParent)
	}), nil
}

// SubtreeTip implements ports.SessionReader.
func (t *sessionTx) SubtreeTip(_ context.Context, entryID string) (string, error) {
	in := map[string]bool{entryID: true}
	tip, tipSeq := entryID, int64(-1)
	// Children are younger than their parents, so one pass in seq order
	// meets every parent before its children.
	for _, e := range t.state.entries {
		if e.meta.ID != entryID && !in[e.meta.ParentID] {
			continue
		}
		in[e.meta.ID] = true
		if domain.IsContentKind(e.meta.Kind) && e.meta.Seq > tipSeq {
			tip, tipSeq = e.meta.ID, e.meta.Seq
		}
	}
	return tip, nil
}

// SeqOfRow implements ports.SessionReader.
func (t *sessionTx) SeqOfRow(_ context.Context, rowID string) (int64, error) {
	for _, e := range t.state.entries {
		if e.meta.RowID == rowID {
			return e.meta.Seq, nil
		}
	}
	return 0, errs.E(errs.NotFound, "entry not found")
}

// LatestContextProfile implements ports.SessionReader.
func (t *sessionTx) LatestContextProfile(context.Context) (json.RawMessage, bool, error) {
	var best storedProfile
	bestRun, found := "", false
	for run, p := range t.state.profiles {
		if !found || p.at.After(best.at) || (p.at.Equal(best.at) && run > bestRun) {
			best, bestRun, found = p, run, true
		}
	}
	return slices.Clone(best.profile), found, nil
}

func (t *sessionTx) checkWritable() error {
	if !t.writable {
		return errs.E(errs.Internal, "a write inside a read snapshot")
	}
	return nil
}

// InsertEntries implements ports.SessionWriter: the entry's own fields
// (ids, parent, seq, kind, source, run, compacted, time) win over the
// meta's, as the SQLite columns take them; conflict when a row id, entry
// id or seq is taken.
func (t *sessionTx) InsertEntries(_ context.Context, entries []domain.Entry, metas []domain.EntryMeta) error {
	if err := t.checkWritable(); err != nil {
		return err
	}
	if len(entries) != len(metas) {
		return errs.E(errs.Internal, "%d entries with %d metas", len(entries), len(metas))
	}
	for i, e := range entries {
		body, err := json.Marshal(e)
		if err != nil {
			return errs.Wrap(errs.Internal, err, "encode entry %s", e.ID)
		}
		m := metas[i]
		m.RowID, m.ID, m.ParentID, m.Seq, m.Kind, m.Source, m.RunID, m.Compacted = e.RowID, e.ID, e.ParentID, e.Seq, e.Kind, e.Source, e.RunID, e.Compacted
		m.CreatedAt = storedTime(e.CreatedAt)
		if m.Usage != nil {
			u := *m.Usage
			m.Usage = &u
		}
		taken := slices.ContainsFunc(t.state.entries, func(x storedEntry) bool {
			return x.meta.RowID == m.RowID || x.meta.ID == m.ID || x.meta.Seq == m.Seq
		})
		if taken || t.store.rowTaken(m.RowID) {
			return errs.E(errs.Conflict, "already exists")
		}
		t.state.entries = append(t.state.entries, storedEntry{meta: m, body: body})
	}
	slices.SortStableFunc(t.state.entries, func(a, b storedEntry) int { return cmp.Compare(a.meta.Seq, b.meta.Seq) })
	return nil
}

// SaveState implements ports.SessionWriter.
func (t *sessionTx) SaveState(_ context.Context, tipID string, lastSeq int64, totals domain.ContextTotals, at time.Time) error {
	if err := t.checkWritable(); err != nil {
		return err
	}
	t.state.row.TipID, t.state.row.LastSeq, t.state.row.Totals, t.state.row.UpdatedAt = tipID, lastSeq, totals, storedTime(at)
	return nil
}

// ledger is the store's RunStore, keeping the rows of runIDs for a
// rollback; internal when it is not set.
func (t *sessionTx) ledger(runIDs ...string) (*RunStore, error) {
	if err := t.checkWritable(); err != nil {
		return nil, err
	}
	if t.store.Runs == nil {
		return nil, errs.E(errs.Internal, "porttest: SessionStore.Runs is not set")
	}
	if len(runIDs) > 0 {
		t.undo = append(t.undo, t.store.Runs.keep(runIDs...))
	}
	return t.store.Runs, nil
}

// FileApprovals implements ports.SessionWriter through the store's RunStore.
func (t *sessionTx) FileApprovals(ctx context.Context, approvals []domain.Approval, run domain.Run, state domain.PauseState) error {
	ids := []string{run.ID}
	for _, a := range approvals {
		ids = append(ids, a.RunID)
	}
	l, err := t.ledger(ids...)
	if err != nil {
		return err
	}
	return l.FileApprovals(ctx, approvals, run, state)
}

// EndPause implements ports.SessionWriter through the store's RunStore.
func (t *sessionTx) EndPause(ctx context.Context, run domain.Run) (bool, error) {
	l, err := t.ledger(run.ID)
	if err != nil {
		return false, err
	}
	return l.EndPause(ctx, run)
}

// CreateRun implements ports.SessionWriter through the store's RunStore:
// conflict when the id is taken or a running run holds the session.
func (t *sessionTx) CreateRun(ctx context.Context, run domain.Run) error {
	if run.SessionID != t.state.row.ID {
		return errs.E(errs.Internal, "run %s is not of session %s", run.ID, t.state.row.ID)
	}
	l, err := t.ledger(run.ID)
	if err != nil {
		return err
	}
	return l.createSessionRun(ctx, run)
}

// CountLiveRuns implements ports.SessionWriter through the store's
// RunStore.
func (t *sessionTx) CountLiveRuns(ctx context.Context, ownerID string) (int, error) {
	l, err := t.ledger()
	if err != nil {
		return 0, err
	}
	return l.CountLiveRuns(ctx, ownerID)
}

// EndRun implements ports.SessionWriter through the store's RunStore.
func (t *sessionTx) EndRun(ctx context.Context, run domain.Run) error {
	l, err := t.ledger(run.ID)
	if err != nil {
		return err
	}
	return l.UpdateRun(ctx, run)
}

// HoldRun implements ports.SessionWriter through the store's RunStore.
func (t *sessionTx) HoldRun(ctx context.Context, runID, replica string) error {
	l, err := t.ledger()
	if err != nil {
		return err
	}
	run, err := l.FindRun(ctx, runID)
	if err != nil {
		return err
	}
	return domain.HeldBy(run, replica)
}

// SetRunContext implements ports.SessionWriter.
func (t *sessionTx) SetRunContext(_ context.Context, agentID string, planning bool, at time.Time) error {
	if err := t.checkWritable(); err != nil {
		return err
	}
	t.state.row.AgentConfigID, t.state.row.Planning, t.state.row.UpdatedAt = agentID, planning, storedTime(at)
	return nil
}

// SaveContextProfile implements ports.SessionWriter: one profile per run,
// the last saved kept.
func (t *sessionTx) SaveContextProfile(_ context.Context, runID string, profile json.RawMessage, at time.Time) error {
	if err := t.checkWritable(); err != nil {
		return err
	}
	if t.state.profiles == nil {
		t.state.profiles = map[string]storedProfile{}
	}
	t.state.profiles[runID] = storedProfile{profile: slices.Clone(profile), at: storedTime(at)}
	return nil
}

// SaveSpans implements ports.SessionWriter through the store's
// TraceStore; a rollback takes the spans out again. Internal when the
// store has no TraceStore.
func (t *sessionTx) SaveSpans(ctx context.Context, spans []domain.Span) error {
	if err := t.checkWritable(); err != nil {
		return err
	}
	if t.store.Traces == nil {
		return errs.E(errs.Internal, "porttest: SessionStore.Traces is not set")
	}
	if err := t.store.Traces.insert(ctx, spans); err != nil {
		return err
	}
	ids := make([]string, len(spans))
	for i, sp := range spans {
		ids[i] = sp.ID
	}
	t.undo = append(t.undo, func() { t.store.Traces.forget(ids) })
	return nil
}

// tasks is the store's TaskStore, keeping the tasks of taskIDs and the
// debts of wakeupIDs for a rollback; internal when it is not set.
func (t *sessionTx) tasks(taskIDs, wakeupIDs []string) (*TaskStore, error) {
	if err := t.checkWritable(); err != nil {
		return nil, err
	}
	if t.store.Tasks == nil {
		return nil, errs.E(errs.Internal, "porttest: SessionStore.Tasks is not set")
	}
	t.undo = append(t.undo, t.store.Tasks.keep(taskIDs, wakeupIDs))
	return t.store.Tasks, nil
}

// FinalizeTask implements ports.SessionWriter through the store's TaskStore.
func (t *sessionTx) FinalizeTask(ctx context.Context, f ports.TaskFinal) (bool, error) {
	ts, err := t.tasks([]string{f.TaskID}, nil)
	if err != nil {
		return false, err
	}
	if t.store.Runs != nil {
		// An ending drops a step approval filed under a run never started.
		t.undo = append(t.undo, t.store.Runs.keep(f.RunID))
	}
	return ts.FinalizeTask(ctx, f)
}

// SettleWakeups implements ports.SessionWriter through the store's
// TaskStore: every debt, or conflict and none.
func (t *sessionTx) SettleWakeups(ctx context.Context, ids []string, at time.Time) error {
	ts, err := t.tasks(nil, ids)
	if err != nil {
		return err
	}
	return ts.settleAll(ctx, ids, at)
}

// MarkCompacted implements ports.SessionWriter.
func (t *sessionTx) MarkCompacted(_ context.Context, ids []string) (int, error) {
	if err := t.checkWritable(); err != nil {
		return 0, err
	}
	n := 0
	for i := range t.state.entries {
		m := &t.state.entries[i].meta
		if !m.Compacted && slices.Contains(ids, m.ID) {
			m.Compacted = true
			n++
		}
	}
	return n, nil
}

// AdvanceTask implements ports.SessionWriter through the store's TaskStore.
func (t *sessionTx) AdvanceTask(ctx context.Context, a ports.TaskAdvance) (bool, error) {
	ts, err := t.tasks([]string{a.TaskID}, nil)
	if err != nil {
		return false, err
	}
	return ts.AdvanceTask(ctx, a)
}

// RecordTaskState implements ports.SessionWriter through the store's
// TaskStore.
func (t *sessionTx) RecordTaskState(ctx context.Context, taskID, runID string, state []byte, at time.Time) error {
	ts, err := t.tasks([]string{taskID}, nil)
	if err != nil {
		return err
	}
	return ts.RecordTaskState(ctx, taskID, runID, state, at)
}
