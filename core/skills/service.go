package skills

import (
	"context"
	"slices"
	"strings"

	"github.com/agents-server/agents-server/core/audit"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/scoped"
	"github.com/agents-server/agents-server/ports"
)

const what = "skill"

// Service keeps skills under the ownership rules of scoped configuration.
type Service struct {
	store ports.SkillStore
	rows  scoped.Rows[domain.Skill, ports.SkillTx]
	ids   ports.IDs
	clock ports.Clock
}

// NewService returns a Service.
func NewService(store ports.SkillStore, ids ports.IDs, clock ports.Clock) *Service {
	rows := scoped.Rows[domain.Skill, ports.SkillTx]{InTx: store.InSkillTx, Find: ports.SkillTx.FindSkill,
		Insert: ports.SkillTx.InsertSkill, Update: ports.SkillTx.UpdateSkill, Delete: ports.SkillTx.DeleteSkill,
		Kind: "skill", ID: func(k domain.Skill) string { return k.ID }, Name: func(k domain.Skill) string { return k.Name },
		Own: ownership, Now: clock.Now}
	return &Service{store: store, rows: rows, ids: ids, clock: clock}
}

// ownership is a skill's (scope, owner), what the scoped rules read.
func ownership(k domain.Skill) domain.Ownership { return k.Ownership }

// List returns the skills the caller can see: others' shared ones first,
// then the caller's own, newest first within each.
func (s *Service) List(ctx context.Context, p domain.Principal) ([]domain.Skill, error) {
	return scoped.Visible(ctx, p, s.store.ListSkills, ownership)
}

// Get returns one skill; another user's private one is not_found.
func (s *Service) Get(ctx context.Context, p domain.Principal, id string) (domain.Skill, error) {
	return scoped.Read(ctx, id, s.store.FindSkill, func(k domain.Skill) error { return k.CheckRead(p, what) })
}

// Create adds a skill authored here from its SKILL.md, private unless an
// admin asks for global. Returns validation (the document's problem),
// forbidden, conflict (the name is taken in that scope).
func (s *Service) Create(ctx context.Context, p domain.Principal, scope domain.Scope, content string) (domain.Skill, error) {
	own, err := scoped.Owned(p, scope, what)
	if err != nil {
		return domain.Skill{}, err
	}
	doc, err := Parse(content)
	if err != nil {
		return domain.Skill{}, err
	}
	now := s.clock.Now()
	k := domain.Skill{ID: s.ids.NewID(), Ownership: own, Name: doc.Name,
		Description: doc.Description, Content: content, CreatedAt: now, UpdatedAt: now}
	return s.rows.Add(ctx, k, nil)
}

// Update replaces a skill's document; name and description are read from
// it again. An imported skill edited here is detached: an import never
// overwrites it again. Returns not_found, forbidden, validation, conflict.
func (s *Service) Update(ctx context.Context, p domain.Principal, id, content string) (domain.Skill, error) {
	doc, err := Parse(content)
	if err != nil {
		return domain.Skill{}, err
	}
	return s.rows.Change(ctx, id, func(_ ports.SkillTx, k domain.Skill) (domain.Skill, bool, error) {
		if err := k.CheckUpdate(p, what); err != nil {
			return k, false, err
		}
		if k.Content == content {
			return k, false, nil // nothing changed: an imported skill stays attached
		}
		k.Name, k.Description, k.Content, k.UpdatedAt = doc.Name, doc.Description, content, s.clock.Now()
		k.Detached = k.Imported()
		return k, true, nil
	})
}

// Delete removes a skill no agent selects. Returns not_found, forbidden,
// conflict (naming the agents that select it).
func (s *Service) Delete(ctx context.Context, p domain.Principal, id string) error {
	return s.rows.Remove(ctx, id, func(tx ports.SkillTx, k domain.Skill) error {
		if err := k.CheckDelete(p, what); err != nil {
			return err
		}
		users, err := selecting(ctx, tx, id)
		if err != nil {
			return err
		}
		if len(users) > 0 {
			return errs.E(errs.Conflict, "the agents %s select this skill: take it out of their skills first", names(users))
		}
		return nil
	})
}

// SetScope publishes (admin) or unpublishes (admin or author) a skill
// authored here; an imported one moves with its repository's group.
// Unpublishing is refused while a global agent selects it. Returns
// validation, not_found, forbidden, conflict.
func (s *Service) SetScope(ctx context.Context, p domain.Principal, id string, to domain.Scope) (domain.Skill, error) {
	return s.rows.Change(ctx, id, func(tx ports.SkillTx, k domain.Skill) (domain.Skill, bool, error) {
		if err := k.CheckRead(p, what); err != nil {
			return k, false, err
		}
		if k.Imported() {
			return k, false, errs.E(errs.Validation, "this skill came with %s: a repository's skills move scope together, as one group", k.SourceRepo)
		}
		if err := k.CheckScopeChange(p, to, what); err != nil {
			return k, false, err
		}
		users, err := selecting(ctx, tx, id)
		if err != nil {
			return k, false, err
		}
		var stranded []domain.Agent
		for _, a := range users {
			if !domain.ReferenceSurvives(a.Ownership, k.Ownership, to) {
				stranded = append(stranded, a)
			}
		}
		if len(stranded) > 0 {
			return k, false, errs.E(errs.Conflict, "the shared agents %s select this skill: it cannot become private under them", names(stranded))
		}
		k.Scope, k.UpdatedAt = to, s.clock.Now()
		return k, true, nil
	})
}

// Exists says whether a skill id names a skill an agent held as holder may
// select: it exists, and the holder may reference it.
func (s *Service) Exists(ctx context.Context, holder domain.Ownership, id string) (bool, error) {
	k, err := s.store.FindSkill(ctx, id)
	if errs.Is(err, errs.NotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return holder.MayReference(k.Ownership), nil
}

// ForAgent lists the skills an agent reads: those its holding may
// reference, narrowed by its selection (nil: every one, empty: none), by
// model-facing name.
func (s *Service) ForAgent(ctx context.Context, a domain.Agent) ([]domain.Skill, error) {
	if a.Skills != nil && len(a.Skills) == 0 {
		return nil, nil
	}
	all, err := s.store.ListSkills(ctx)
	if err != nil {
		return nil, err
	}
	var out []domain.Skill
	for _, k := range all {
		if a.MayReference(k.Ownership) && (a.Skills == nil || slices.Contains(a.Skills, k.ID)) {
			out = append(out, k)
		}
	}
	slices.SortFunc(out, func(x, y domain.Skill) int { return strings.Compare(x.ModelName(), y.ModelName()) })
	return out, nil
}

// selecting lists the agents whose selection names the skill.
func selecting(ctx context.Context, tx ports.AgentReader, id string) ([]domain.Agent, error) {
	agents, err := tx.ListAgents(ctx)
	if err != nil {
		return nil, err
	}
	var out []domain.Agent
	for _, a := range agents {
		if slices.Contains(a.Skills, id) {
			out = append(out, a)
		}
	}
	return out, nil
}

// names lists agents by name, quoted.
func names(agents []domain.Agent) string {
	var out []string
	for _, a := range agents {
		out = append(out, `"`+a.Name+`"`)
	}
	return strings.Join(out, ", ")
}

// SetGroupScope publishes (admin) or unpublishes (admin or owner) the
// skills imported from one source by one owner ("" = the caller), all or
// nothing. Returns validation, not_found (no such group), forbidden,
// conflict (already so; a name taken there; a shared agent selecting one).
func (s *Service) SetGroupScope(ctx context.Context, p domain.Principal, sourceRepo, ownerID string, to domain.Scope) ([]domain.Skill, error) {
	if ownerID == "" {
		ownerID = p.User.ID
	}
	var out []domain.Skill
	actx := audit.Change(ctx, s.clock.Now(), audit.ScopeAction("skill", to), audit.Object{Kind: "skill_source", ID: sourceRepo, Name: sourceRepo}, "scope")
	err := s.store.InSkillTx(actx, func(tx ports.SkillTx) error {
		all, err := tx.ListSkills(ctx)
		if err != nil {
			return err
		}
		var group []domain.Skill
		for _, k := range all {
			if k.SourceRepo == sourceRepo && k.SourceRepo != "" && k.OwnerID == ownerID && k.VisibleTo(p) {
				group = append(group, k)
			}
		}
		if len(group) == 0 {
			return errs.E(errs.NotFound, "no skills imported from %s", sourceRepo)
		}
		if err := group[0].CheckScopeChange(p, to, "repository's skills"); err != nil {
			return err
		}
		for _, k := range group {
			moved := k
			moved.Scope = to
			if taken(all, moved) {
				return errs.E(errs.Conflict, "a skill named %q already exists as %s", moved.ModelName(), to)
			}
			users, err := selecting(ctx, tx, k.ID)
			if err != nil {
				return err
			}
			for _, a := range users {
				if !domain.ReferenceSurvives(a.Ownership, k.Ownership, to) {
					return errs.E(errs.Conflict, "the shared agent %q selects %s: the repository cannot become private under it",
						a.Name, k.ModelName())
				}
			}
		}
		now := s.clock.Now()
		for _, k := range group {
			k.Scope, k.UpdatedAt = to, now
			if err := tx.UpdateSkill(ctx, k); err != nil {
				return err
			}
			out = append(out, k)
		}
		return nil
	})
	return out, err
}
