package workflows

import (
	"context"
	"strings"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/scoped"
	"github.com/agents-server/agents-server/ports"
)

const what = "workflow"

// Service manages workflow definitions: scoped configuration like agents,
// validated whole (every offending field named) inside the transaction
// that writes them.
type Service struct {
	store ports.WorkflowStore
	rows  scoped.Rows[domain.Workflow, ports.WorkflowTx]
	ids   ports.IDs
	clock ports.Clock
}

// NewService returns a Service.
func NewService(store ports.WorkflowStore, ids ports.IDs, clock ports.Clock) *Service {
	rows := scoped.Rows[domain.Workflow, ports.WorkflowTx]{InTx: store.InWorkflowTx, Find: ports.WorkflowTx.FindWorkflow,
		Insert: ports.WorkflowTx.InsertWorkflow, Update: ports.WorkflowTx.UpdateWorkflow, Delete: ports.WorkflowTx.DeleteWorkflow,
		Kind: "workflow", ID: func(w domain.Workflow) string { return w.ID }, Name: func(w domain.Workflow) string { return w.Name },
		Own: ownership, Now: clock.Now}
	return &Service{store: store, rows: rows, ids: ids, clock: clock}
}

// ownership is a workflow's (scope, owner), what the scoped rules read.
func ownership(w domain.Workflow) domain.Ownership { return w.Ownership }

// List returns the workflows the caller can see: others' shared ones
// first, then the caller's own, newest first within each.
func (s *Service) List(ctx context.Context, p domain.Principal) ([]domain.Workflow, error) {
	return scoped.Visible(ctx, p, s.store.ListWorkflows, ownership)
}

// Get returns one workflow; another user's private one is not_found.
func (s *Service) Get(ctx context.Context, p domain.Principal, id string) (domain.Workflow, error) {
	return scoped.Read(ctx, id, s.store.FindWorkflow, func(w domain.Workflow) error { return w.CheckRead(p, what) })
}

// ByName returns the workflow a user means by name: their own private one
// first, else a global one (names compare whatever their case). Returns
// not_found naming what there is.
func (s *Service) ByName(ctx context.Context, ownerID, name string) (domain.Workflow, error) {
	all, err := s.store.ListWorkflows(ctx)
	if err != nil {
		return domain.Workflow{}, err
	}
	name = strings.TrimSpace(name)
	var global *domain.Workflow
	for i, w := range all {
		if !strings.EqualFold(w.Name, name) {
			continue
		}
		if w.Scope == domain.ScopePrivate && w.OwnerID == ownerID {
			return w, nil
		}
		if w.Scope == domain.ScopeGlobal && global == nil {
			global = &all[i]
		}
	}
	if global != nil {
		return *global, nil
	}
	return domain.Workflow{}, errs.E(errs.NotFound, "there is no workflow named %q", name)
}

// Usable lists the workflows a user may start, by name: their own and the
// shared ones.
func (s *Service) Usable(ctx context.Context, ownerID string) ([]domain.Workflow, error) {
	return s.List(ctx, domain.Principal{User: domain.User{ID: ownerID}})
}

// Create adds a workflow owned by the caller, private unless an admin asks
// for global. Step ids are assigned here; edges may name steps by name.
// Returns validation (every offending field), forbidden, conflict.
func (s *Service) Create(ctx context.Context, p domain.Principal, scope domain.Scope, spec domain.WorkflowSpec) (domain.Workflow, error) {
	own, err := scoped.Owned(p, scope, what)
	if err != nil {
		return domain.Workflow{}, err
	}
	now := s.clock.Now()
	w := domain.Workflow{ID: s.ids.NewID(), Ownership: own, CreatedAt: now, UpdatedAt: now}
	return s.rows.Add(ctx, w, func(tx ports.WorkflowTx, w domain.Workflow) (domain.Workflow, error) {
		var err error
		w.WorkflowSpec, err = s.prepare(ctx, tx, w.Ownership, spec, nil)
		return w, err
	})
}

// Update replaces a workflow's definition (PUT). A step keeps its id by
// sending it; a step without one is new. Executions in flight keep the
// definition they started with. Returns not_found, forbidden, validation,
// conflict.
func (s *Service) Update(ctx context.Context, p domain.Principal, id string, spec domain.WorkflowSpec) (domain.Workflow, error) {
	return s.rows.Change(ctx, id, func(tx ports.WorkflowTx, w domain.Workflow) (domain.Workflow, bool, error) {
		if err := w.CheckUpdate(p, what); err != nil {
			return w, false, err
		}
		var err error
		if w.WorkflowSpec, err = s.prepare(ctx, tx, w.Ownership, spec, w.Steps); err != nil {
			return w, false, err
		}
		w.UpdatedAt = s.clock.Now()
		return w, true, nil
	})
}

// Delete removes a workflow; executions in flight run on their snapshot.
// Returns not_found, forbidden.
func (s *Service) Delete(ctx context.Context, p domain.Principal, id string) error {
	return s.rows.Remove(ctx, id, func(_ ports.WorkflowTx, w domain.Workflow) error { return w.CheckDelete(p, what) })
}

// SetScope publishes (admin) or unpublishes (admin or author) a workflow;
// a published one may run only global agents. Returns not_found,
// forbidden, conflict.
func (s *Service) SetScope(ctx context.Context, p domain.Principal, id string, to domain.Scope) (domain.Workflow, error) {
	return s.rows.Change(ctx, id, func(tx ports.WorkflowTx, w domain.Workflow) (domain.Workflow, bool, error) {
		if err := w.CheckScopeChange(p, to, what); err != nil {
			return w, false, err
		}
		moved := w
		moved.Scope = to
		if _, err := s.prepare(ctx, tx, moved.Ownership, w.WorkflowSpec, w.Steps); err != nil {
			if errs.FieldsOf(err) != nil {
				return w, false, errs.Wrap(errs.Conflict, err, "as a %s workflow it would break a reference: %s", to, errs.MessageOf(err))
			}
			return w, false, err
		}
		moved.UpdatedAt = s.clock.Now()
		return moved, true, nil
	})
}

// prepare normalizes a spec, gives new steps their ids, resolves edges
// written by step name, and validates the whole against the agents the
// holder may use. stored are the definition's current steps: a step id
// that is none of theirs is refused (ids are the server's to assign).
func (s *Service) prepare(ctx context.Context, tx ports.AgentReader, holder domain.Ownership, spec domain.WorkflowSpec,
	stored []domain.WorkflowStep) (domain.WorkflowSpec, error) {
	spec.Name, spec.Description = strings.TrimSpace(spec.Name), strings.TrimSpace(spec.Description)
	known := map[string]bool{}
	for _, st := range stored {
		known[st.ID] = true
	}
	var f errs.FieldErrors
	for i := range spec.Steps {
		spec.Steps[i].Name = strings.TrimSpace(spec.Steps[i].Name)
		if id := spec.Steps[i].ID; id != "" && !known[id] {
			f.Add(fieldAt(i, "id"), "%q is not a step of this workflow: leave id empty for a new step", id)
		}
	}
	if err := f.Err(); err != nil {
		return spec, err
	}
	spec.Steps = AssignIDs(spec.Steps, s.ids.NewID)
	if spec.Steps == nil {
		spec.Steps = []domain.WorkflowStep{}
	}
	var lookupErr error
	agentOK := func(id string) bool {
		a, err := tx.FindAgent(ctx, id)
		if err != nil {
			if !errs.Is(err, errs.NotFound) && lookupErr == nil {
				lookupErr = err
			}
			return false
		}
		return a.VisibleTo(domain.Principal{User: domain.User{ID: holder.OwnerID}}) && holder.MayReference(a.Ownership)
	}
	err := Validate(spec, agentOK)
	if lookupErr != nil {
		return spec, lookupErr
	}
	return spec, err
}
