package workflows

import (
	"context"
	"strings"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

const what = "workflow"

// Service manages workflow definitions: scoped configuration like agents,
// validated whole (every offending field named) inside the transaction
// that writes them.
type Service struct {
	store ports.ConfigStore
	ids   ports.IDs
	clock ports.Clock
}

// NewService returns a Service.
func NewService(store ports.ConfigStore, ids ports.IDs, clock ports.Clock) *Service {
	return &Service{store: store, ids: ids, clock: clock}
}

// List returns the workflows the caller can see: others' shared ones
// first, then the caller's own, newest first within each.
func (s *Service) List(ctx context.Context, p domain.Principal) ([]domain.Workflow, error) {
	all, err := s.store.ListWorkflows(ctx)
	if err != nil {
		return nil, err
	}
	return domain.VisibleOrdered(all, p, func(w domain.Workflow) domain.Ownership { return w.Ownership }), nil
}

// Get returns one workflow; another user's private one is not_found.
func (s *Service) Get(ctx context.Context, p domain.Principal, id string) (domain.Workflow, error) {
	w, err := s.store.FindWorkflow(ctx, id)
	if err != nil {
		return w, err
	}
	return w, w.CheckRead(p, what)
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
	if scope == "" {
		scope = domain.ScopePrivate
	}
	if err := domain.CheckCreate(p, scope, what); err != nil {
		return domain.Workflow{}, err
	}
	now := s.clock.Now()
	w := domain.Workflow{ID: s.ids.NewID(), Ownership: domain.Ownership{Scope: scope, OwnerID: p.User.ID}, CreatedAt: now, UpdatedAt: now}
	err := s.store.InConfigTx(ctx, func(tx ports.ConfigTx) error {
		var err error
		if w.WorkflowSpec, err = s.prepare(ctx, tx, w.Ownership, spec, nil); err != nil {
			return err
		}
		return tx.InsertWorkflow(ctx, w)
	})
	return w, err
}

// Update replaces a workflow's definition (PUT). A step keeps its id by
// sending it; a step without one is new. Executions in flight keep the
// definition they started with. Returns not_found, forbidden, validation,
// conflict.
func (s *Service) Update(ctx context.Context, p domain.Principal, id string, spec domain.WorkflowSpec) (domain.Workflow, error) {
	var out domain.Workflow
	err := s.store.InConfigTx(ctx, func(tx ports.ConfigTx) error {
		w, err := tx.FindWorkflow(ctx, id)
		if err != nil {
			return err
		}
		if err := w.CheckUpdate(p, what); err != nil {
			return err
		}
		if w.WorkflowSpec, err = s.prepare(ctx, tx, w.Ownership, spec, w.Steps); err != nil {
			return err
		}
		w.UpdatedAt = s.clock.Now()
		out = w
		return tx.UpdateWorkflow(ctx, w)
	})
	return out, err
}

// Delete removes a workflow; executions in flight run on their snapshot.
// Returns not_found, forbidden.
func (s *Service) Delete(ctx context.Context, p domain.Principal, id string) error {
	return s.store.InConfigTx(ctx, func(tx ports.ConfigTx) error {
		w, err := tx.FindWorkflow(ctx, id)
		if err != nil {
			return err
		}
		if err := w.CheckDelete(p, what); err != nil {
			return err
		}
		return tx.DeleteWorkflow(ctx, id)
	})
}

// SetScope publishes (admin) or unpublishes (admin or author) a workflow;
// a published one may run only global agents. Returns not_found,
// forbidden, conflict.
func (s *Service) SetScope(ctx context.Context, p domain.Principal, id string, to domain.Scope) (domain.Workflow, error) {
	var out domain.Workflow
	err := s.store.InConfigTx(ctx, func(tx ports.ConfigTx) error {
		w, err := tx.FindWorkflow(ctx, id)
		if err != nil {
			return err
		}
		if err := w.CheckScopeChange(p, to, what); err != nil {
			return err
		}
		moved := w
		moved.Scope = to
		if _, err := s.prepare(ctx, tx, moved.Ownership, w.WorkflowSpec, w.Steps); err != nil {
			if errs.FieldsOf(err) != nil {
				return errs.Wrap(errs.Conflict, err, "as a %s workflow it would break a reference: %s", to, errs.MessageOf(err))
			}
			return err
		}
		moved.UpdatedAt = s.clock.Now()
		out = moved
		return tx.UpdateWorkflow(ctx, moved)
	})
	return out, err
}

// prepare normalizes a spec, gives new steps their ids, resolves edges
// written by step name, and validates the whole against the agents the
// holder may use. stored are the definition's current steps: a step id
// that is none of theirs is refused (ids are the server's to assign).
func (s *Service) prepare(ctx context.Context, tx ports.ConfigReader, holder domain.Ownership, spec domain.WorkflowSpec,
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
