package sessions

import (
	"context"
	"encoding/json"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// History returns what the model sees of a session: the active branch's
// model-visible, uncompacted entries, oldest first. The run engine reads it
// once per run and keeps it up to date itself.
func (s *Journal) History(ctx context.Context, sessionID string) ([]domain.Entry, error) {
	var out []domain.Entry
	err := s.store.ReadSession(ctx, sessionID, func(r ports.SessionReader) (err error) {
		out, err = history(ctx, r)
		return err
	})
	return out, err
}

// history is History in a transaction already open: never nil.
func history(ctx context.Context, r ports.SessionReader) ([]domain.Entry, error) {
	active, err := activeMetas(ctx, r)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(active))
	for i, m := range active {
		ids[i] = m.ID
	}
	out, err := r.EntriesByID(ctx, ids)
	if out == nil {
		out = []domain.Entry{}
	}
	return out, err
}

// activeMetas are the lifted columns of what the model sees of a session:
// the active branch's model-visible, uncompacted entries, oldest first.
func activeMetas(ctx context.Context, r ports.SessionReader) ([]domain.EntryMeta, error) {
	sess, err := r.Session(ctx)
	if err != nil {
		return nil, err
	}
	metas, err := r.EntryMetas(ctx, 0)
	if err != nil {
		return nil, err
	}
	path := domain.ActivePath(domain.IndexMetas(metas), sess.TipID)
	var out []domain.EntryMeta
	for _, m := range metas {
		if path[m.ID] && !m.Compacted && domain.ModelVisible(m.Kind) {
			out = append(out, m)
		}
	}
	return out, nil
}

// ModelInput projects entries into model input items: a compaction
// checkpoint first, as a system message carrying its summary (it is
// appended where the fold happened, after the window it kept, but it
// stands for what came before that window), then the items as they are.
func ModelInput(entries []domain.Entry) []json.RawMessage {
	out := make([]json.RawMessage, 0, len(entries))
	for _, e := range entries {
		if e.Kind == domain.KindCompaction && e.Checkpoint != nil {
			out = append(out, domain.TextMessage("system", "input_text", "Summary of the earlier conversation:\n"+e.Checkpoint.Summary))
		}
	}
	for _, e := range entries {
		if e.Kind == domain.KindItem && len(e.Item) > 0 {
			out = append(out, e.Item)
		}
	}
	return out
}

// Begun is what a run's start filed: the planning phase the run works in
// and the session's history with the run's input, as History reads it.
type Begun struct {
	Planning bool
	History  []domain.Entry
}

// BeginRun files a run's start in one transaction: the session's agent
// and, when plan is set, its planning phase; entries (the user's message);
// the run row. A crash keeps all of it or none of it. It returns the
// planning phase the run works in. Returns not_found.
func (s *Journal) BeginRun(ctx context.Context, run domain.Run, plan *bool, entries []domain.Entry) (planning bool, err error) {
	b, err := s.BeginRunWith(ctx, run, plan, entries, nil)
	return b.Planning, err
}

// BeginRunWith is BeginRun that also runs also (if not nil) in the
// transaction (a wake-up run settles the debts its input pays), and reads
// the run's history there: the transaction that wrote it has it at hand,
// where a read of its own would come after the commit.
func (s *Journal) BeginRunWith(ctx context.Context, run domain.Run, plan *bool, entries []domain.Entry, also func(tx ports.SessionTx) error) (b Begun, err error) {
	if run.AgentConfigID == "" {
		return b, errs.E(errs.Internal, "a run without an agent")
	}
	_, err = s.AppendWith(ctx, run.SessionID, entries, func(tx ports.SessionTx) error {
		sess, err := tx.Session(ctx)
		if err != nil {
			return err
		}
		planning := sess.Planning
		if plan != nil {
			planning = *plan
		}
		b.Planning = planning
		// The append moved the activity time already: the row is written
		// only for what it does not hold yet.
		if len(entries) == 0 || sess.AgentConfigID != run.AgentConfigID || sess.Planning != planning {
			if err := tx.SetRunContext(ctx, run.AgentConfigID, planning, s.clock.Now()); err != nil {
				return err
			}
		}
		if err := tx.CreateRun(ctx, run); err != nil {
			return err
		}
		if also != nil {
			if err := also(tx); err != nil {
				return err
			}
		}
		b.History, err = history(ctx, tx)
		return err
	})
	if err != nil {
		return Begun{}, err
	}
	return b, nil
}

// EndRun files how a run ended in one transaction: entries (a note of the
// ending, if any), the run row's status, and also (if not nil: a task
// attempt's end) — all of it only if fence (if not nil), checked before
// the row changes, lets it. Returns not_found, or fence's error.
func (s *Journal) EndRun(ctx context.Context, run domain.Run, entries []domain.Entry, fence, also func(tx ports.SessionTx) error) error {
	_, err := s.AppendWith(ctx, run.SessionID, entries, func(tx ports.SessionTx) error {
		if fence != nil {
			if err := fence(tx); err != nil {
				return err
			}
		}
		if err := tx.EndRun(ctx, run); err != nil || also == nil {
			return err
		}
		return also(tx)
	})
	return err
}

// LeavePlanning ends a session's planning phase: its plan was approved.
// Returns not_found.
func (s *Journal) LeavePlanning(ctx context.Context, sessionID string) error {
	_, err := s.store.UpdateSession(ctx, sessionID, func(sess *domain.Session) error {
		sess.Planning = false
		sess.UpdatedAt = s.clock.Now()
		return nil
	})
	return err
}

// SetTitle names a session that has no name yet, and reports whether it did:
// a name the person gave meanwhile is never overwritten. Returns not_found.
func (s *Journal) SetTitle(ctx context.Context, sessionID, title string) (bool, error) {
	set := false
	_, err := s.store.UpdateSession(ctx, sessionID, func(sess *domain.Session) error {
		if sess.Name == "" {
			sess.Name, set = title, true
		}
		return nil
	})
	return set, err
}

// SaveContextProfile records what a run's build put in front of the
// conversation, for the context report's prompt section.
func (s *Journal) SaveContextProfile(ctx context.Context, sessionID, runID string, profile json.RawMessage) error {
	return s.store.SaveContextProfile(ctx, sessionID, runID, profile, s.clock.Now())
}
