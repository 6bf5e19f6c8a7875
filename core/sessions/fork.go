package sessions

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// ForkRequest bounds a fork: no MessageID copies everything; with one, the
// copy ends at that entry (Exclusive: just before it).
type ForkRequest struct {
	MessageID string
	Exclusive bool
	Label     string
}

// Fork copies a session's entries into a new session of the caller's, up to
// and including the boundary (entries later in the log, on any branch, are
// left out). Ids, parent links and update targets are rewritten into the
// fork's namespace. The fork keeps the source's agent and project — the same
// conversation over the same files. Returns not_found or validation.
func (s *Journal) Fork(ctx context.Context, p domain.Principal, id string, req ForkRequest) (domain.Session, error) {
	label := strings.TrimSpace(req.Label)
	if err := domain.ValidateSessionName(label); err != nil {
		return domain.Session{}, errs.Field("label", "%s", errs.FieldsOf(err)["name"])
	}
	var src domain.Session
	var plan domain.ForkPlan
	err := s.store.ReadSession(ctx, id, func(r ports.SessionReader) error {
		var err error
		if src, err = r.Session(ctx); err != nil {
			return err
		}
		if err := src.CheckContent(p); err != nil {
			return err
		}
		cut, tip := int64(0), src.TipID
		if req.MessageID != "" {
			b, err := r.FindMeta(ctx, req.MessageID)
			if errs.Is(err, errs.NotFound) {
				return errs.Field("message_id", "no such entry in this session")
			}
			if err != nil {
				return err
			}
			if !domain.IsContentKind(b.Kind) {
				return errs.Field("message_id", "a %s entry cannot bound a fork", b.Kind)
			}
			cut, tip = b.Seq, b.ID
			if req.Exclusive {
				cut, tip = b.Seq-1, b.ParentID
			}
		}
		if cut < 0 {
			cut = 0
		}
		var entries []domain.Entry
		if req.MessageID != "" && cut == 0 {
			entries = nil // an exclusive fork at the very first entry is empty
		} else if entries, err = r.Entries(ctx, cut); err != nil {
			return err
		}
		plan = domain.PlanFork(entries, tip, s.ids.NewID)
		return nil
	})
	if err != nil {
		return domain.Session{}, err
	}
	now := s.clock.Now()
	metas := make([]domain.EntryMeta, len(plan.Entries))
	index := make(map[string]*domain.EntryMeta, len(plan.Entries))
	for i := range plan.Entries {
		e := &plan.Entries[i]
		e.RowID, e.Seq = s.ids.NewID(), int64(i)+1
		metas[i] = domain.MetaOf(*e, domain.BranchParentFor(index[e.ParentID]))
		index[e.ID] = &metas[i]
	}
	if label == "" {
		label = forkName(src.Name, now)
	}
	fork := domain.Session{
		ID: s.ids.NewID(), OwnerID: p.User.ID, Name: label, AgentConfigID: src.AgentConfigID, ProjectID: src.ProjectID,
		Planning: src.Planning, TipID: plan.TipID, LastSeq: int64(len(metas)),
		Totals:    domain.ComputeTotals(metas, domain.ActivePath(domain.IndexMetas(metas), plan.TipID)),
		CreatedAt: now, UpdatedAt: now,
	}
	if err := s.store.CreateSessionWithEntries(ctx, fork, plan.Entries, metas); err != nil {
		return domain.Session{}, err
	}
	// The fork's history comes with the traces of the runs that wrote it.
	var runs []string
	for _, m := range metas {
		if m.RunID != "" && !slices.Contains(runs, m.RunID) {
			runs = append(runs, m.RunID)
		}
	}
	return fork, s.traces.CopySpans(ctx, src.ID, fork.ID, runs, s.ids.NewID)
}

func forkName(source string, now time.Time) string {
	if source == "" {
		return "Fork " + now.Format("2006-01-02 15:04")
	}
	name := source + " (fork)"
	if r := []rune(name); len(r) > domain.MaxSessionName {
		name = string(r[:domain.MaxSessionName])
	}
	return name
}
