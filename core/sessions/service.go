// Package sessions manages conversations: the session rows, the append-only
// entry tree (append, branch, fork), its listing with folding and paging,
// and the context report — all under the rule that a session's content is
// its owner's alone.
package sessions

import (
	"context"
	"strings"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// Journal keeps sessions and their entries: it creates, reads, lists,
// patches and forks them, and records what runs write (their starts,
// turns and ends). It stops no live work, so it is built before the run
// engine, which writes through it (as do the models, the task manager and
// the approval gate); Service adds what must stop or hold that work.
type Journal struct {
	store  ports.SessionStore
	agents ports.ConfigReader
	traces ports.TraceStore
	runs   ports.RunStore
	ids    ports.IDs
	clock  ports.Clock
	mcp    MCPProbe
	search ports.MessageSearch
}

// MCPProbe sizes the MCP tool definitions an agent selects, per server,
// asking each connected server within a short bound: -1 marks a server
// that could not answer.
type MCPProbe interface {
	ToolChars(ctx context.Context, holder domain.Ownership, user string, names []string) (map[string]int, error)
}

// Deps are what a Journal needs.
type Deps struct {
	Store ports.SessionStore
	// Agents resolves the agent a session is bound to.
	Agents ports.ConfigReader
	// Traces lets a fork carry the source's spans along.
	Traces ports.TraceStore
	// Runs tells a run listing how each run ended.
	Runs ports.RunStore
	// MCP lets the context report count MCP tools live, per server (nil:
	// they are not counted).
	MCP MCPProbe
	// Search finds words in the sessions' messages (nil: searching
	// answers unavailable).
	Search ports.MessageSearch
	IDs    ports.IDs
	Clock  ports.Clock
}

// NewJournal returns a Journal.
func NewJournal(d Deps) *Journal {
	return &Journal{store: d.Store, agents: d.Agents, traces: d.Traces, runs: d.Runs, ids: d.IDs, clock: d.Clock, mcp: d.MCP, search: d.Search}
}

// Create starts an empty session owned by the caller, optionally bound to
// an agent the caller can see (another person's private agent reads as
// absent: a 400 on the field). Returns validation.
func (s *Journal) Create(ctx context.Context, p domain.Principal, name, agentID string) (domain.Session, error) {
	name = strings.TrimSpace(name)
	if err := domain.ValidateSessionName(name); err != nil {
		return domain.Session{}, err
	}
	if agentID != "" {
		if err := s.checkAgent(ctx, p, agentID); err != nil {
			return domain.Session{}, err
		}
	}
	now := s.clock.Now()
	sess := domain.Session{ID: s.ids.NewID(), OwnerID: p.User.ID, Name: name, AgentConfigID: agentID, CreatedAt: now, UpdatedAt: now}
	return sess, s.store.CreateSession(ctx, sess)
}

// CreateChild starts a background task's session: hidden, owned by the
// parent's owner, on the parent's project (the task works in the same
// tree), running agentID.
func (s *Journal) CreateChild(ctx context.Context, parent domain.Session, name, agentID string) (domain.Session, error) {
	now := s.clock.Now()
	sess := domain.Session{ID: s.ids.NewID(), OwnerID: parent.OwnerID, Name: name, AgentConfigID: agentID, ProjectID: parent.ProjectID,
		Hidden: true, ParentSessionID: parent.ID, CreatedAt: now, UpdatedAt: now}
	return sess, s.store.CreateSession(ctx, sess)
}

// Find returns a session whoever owns it, for the engine's own use (a
// caller's request goes through Get). Returns not_found.
func (s *Journal) Find(ctx context.Context, id string) (domain.Session, error) {
	return s.store.FindSession(ctx, id)
}

func (s *Journal) checkAgent(ctx context.Context, p domain.Principal, agentID string) error {
	a, err := s.agents.FindAgent(ctx, agentID)
	if errs.Is(err, errs.NotFound) || (err == nil && !a.VisibleTo(p)) {
		return errs.Field("agent_config_id", "no such agent")
	}
	return err
}

// List returns the caller's sessions, pinned first then by latest activity;
// all (admins only) lists everyone's. Returns forbidden for a member's all.
func (s *Journal) List(ctx context.Context, p domain.Principal, all bool) ([]domain.Session, error) {
	if all {
		if err := p.RequireAdmin(); err != nil {
			return nil, err
		}
		return s.store.ListSessions(ctx, "")
	}
	return s.store.ListSessions(ctx, p.User.ID)
}

// Get returns one of the caller's sessions; anyone else's is not_found.
func (s *Journal) Get(ctx context.Context, p domain.Principal, id string) (domain.Session, error) {
	sess, err := s.store.FindSession(ctx, id)
	if err != nil {
		return sess, err
	}
	return sess, sess.CheckContent(p)
}

// Patch renames and/or pins a session; nil leaves a field. Returns
// not_found or validation.
func (s *Journal) Patch(ctx context.Context, p domain.Principal, id string, name *string, pinned *bool) (domain.Session, error) {
	// Whose session it is comes first: a stranger learns nothing from
	// which of their fields would have been refused.
	return s.store.UpdateSession(ctx, id, func(sess *domain.Session) error {
		if err := sess.CheckContent(p); err != nil {
			return err
		}
		if name != nil {
			trimmed := strings.TrimSpace(*name)
			if err := domain.ValidateSessionName(trimmed); err != nil {
				return err
			}
			sess.Name = trimmed
		}
		if pinned != nil {
			sess.Pinned = *pinned
		}
		sess.UpdatedAt = s.clock.Now()
		return nil
	})
}

// CheckDelete reports whether the caller may delete the session: its owner
// or an admin may. Returns not_found.
func (s *Journal) CheckDelete(ctx context.Context, p domain.Principal, id string) error {
	sess, err := s.store.FindSession(ctx, id)
	if err != nil {
		return err
	}
	return sess.CheckDelete(p)
}

// Append adds entries at the session's tip in one transaction: each gets an
// entry id (unless it has one), a row id, the next seq and the previous
// entry as parent, and the context totals move with them. It is how the run
// engine records a turn; a crash loses the whole append or nothing.
func (s *Journal) Append(ctx context.Context, sessionID string, entries []domain.Entry) ([]domain.Entry, error) {
	return s.AppendWith(ctx, sessionID, entries, nil)
}

// AppendWith is Append plus also, run in the same transaction after the
// entries are written: what must hold together with them (a pause filing
// its approvals, the end of a pause) does, or nothing does.
func (s *Journal) AppendWith(ctx context.Context, sessionID string, entries []domain.Entry, also func(tx ports.SessionTx) error) ([]domain.Entry, error) {
	var out []domain.Entry
	err := s.store.WriteSession(ctx, sessionID, func(tx ports.SessionTx) error {
		var err error
		if out, err = s.appendIn(ctx, tx, entries); err != nil || also == nil {
			return err
		}
		return also(tx)
	})
	return out, err
}

// appendIn is Append inside a write transaction.
func (s *Journal) appendIn(ctx context.Context, tx ports.SessionTx, entries []domain.Entry) ([]domain.Entry, error) {
	if len(entries) == 0 {
		return nil, nil
	}
	sess, err := tx.Session(ctx)
	if err != nil {
		return nil, err
	}
	prev, err := s.metaOf(ctx, tx, sess.TipID)
	if err != nil {
		return nil, err
	}
	now := s.clock.Now()
	out := make([]domain.Entry, len(entries))
	metas := make([]domain.EntryMeta, len(entries))
	totals := sess.Totals
	for i, e := range entries {
		if e.Kind == "" {
			return nil, errs.E(errs.Internal, "an entry without a kind was appended")
		}
		if e.ID == "" {
			e.ID = s.ids.NewID()
		}
		if e.CreatedAt.IsZero() {
			e.CreatedAt = now
		}
		e.RowID, e.Seq, e.Compacted = s.ids.NewID(), sess.LastSeq+int64(i)+1, false
		e.ParentID = ""
		if prev != nil {
			e.ParentID = prev.ID
		}
		m := domain.MetaOf(e, domain.BranchParentFor(prev))
		totals.Extend(m)
		out[i], metas[i] = e, m
		prev = &metas[i]
	}
	if err := tx.InsertEntries(ctx, out, metas); err != nil {
		return nil, err
	}
	last := out[len(out)-1]
	return out, tx.SaveState(ctx, last.ID, last.Seq, totals, now)
}

// metaOf returns the meta of an entry id, or nil for "" (an empty session).
func (s *Journal) metaOf(ctx context.Context, r ports.SessionReader, id string) (*domain.EntryMeta, error) {
	if id == "" {
		return nil, nil
	}
	m, err := r.FindMeta(ctx, id)
	if err != nil {
		return nil, err
	}
	return &m, nil
}

// moveBranch moves the session's active branch to an entry by appending a
// leaf under it: nothing is deleted, and the abandoned attempt stays
// readable with on_path false. The next run continues from the entry.
// Returns not_found, or validation for an entry that is not the session's
// content. domain.BranchRoot continues from before the first message.
func (s *Journal) moveBranch(ctx context.Context, p domain.Principal, id, entryID string) (domain.Session, error) {
	var out domain.Session
	err := s.store.WriteSession(ctx, id, func(tx ports.SessionTx) error {
		sess, err := tx.Session(ctx)
		if err != nil {
			return err
		}
		if err := sess.CheckContent(p); err != nil {
			return err
		}
		// The root: a leaf with no parent, so the next message opens a new
		// first branch (editing the first message).
		var target *domain.EntryMeta
		if entryID != domain.BranchRoot {
			meta, err := tx.FindMeta(ctx, entryID)
			if errs.Is(err, errs.NotFound) {
				return errs.Field("entry_id", "no such entry in this session")
			}
			if err != nil {
				return err
			}
			if !domain.IsContentKind(meta.Kind) {
				return errs.Field("entry_id", "a %s entry is not a place a conversation can continue from", meta.Kind)
			}
			target = &meta
		}
		now := s.clock.Now()
		leaf := domain.Entry{ID: s.ids.NewID(), RowID: s.ids.NewID(), Kind: domain.KindLeaf, Seq: sess.LastSeq + 1, CreatedAt: now}
		if target != nil {
			leaf.ParentID = target.ID
		}
		if err := tx.InsertEntries(ctx, []domain.Entry{leaf}, []domain.EntryMeta{domain.MetaOf(leaf, domain.BranchParentFor(target))}); err != nil {
			return err
		}
		// The active branch changed shape: recompute its totals (a walk over
		// the rows, never the bodies).
		metas, err := tx.EntryMetas(ctx, 0)
		if err != nil {
			return err
		}
		totals := domain.ComputeTotals(metas, domain.ActivePath(domain.IndexMetas(metas), leaf.ID))
		if err := tx.SaveState(ctx, leaf.ID, leaf.Seq, totals, now); err != nil {
			return err
		}
		sess.TipID, sess.LastSeq, sess.Totals, sess.UpdatedAt = leaf.ID, leaf.Seq, totals, now
		out = sess
		return nil
	})
	return out, err
}
