// Package guardrails manages guardrail definitions — host configuration
// read by everyone and written by admins — and compiles them into checks
// the run engine evaluates.
package guardrails

import (
	"context"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/scoped"
	"github.com/agents-server/agents-server/ports"
)

// Service manages guardrails.
type Service struct {
	store ports.GuardrailStore
	rows  scoped.Rows[domain.Guardrail, ports.GuardrailTx]
	ids   ports.IDs
	clock ports.Clock
}

// New returns a Service.
func New(store ports.GuardrailStore, ids ports.IDs, clock ports.Clock) *Service {
	rows := scoped.Rows[domain.Guardrail, ports.GuardrailTx]{InTx: store.InGuardrailTx, Find: ports.GuardrailTx.FindGuardrail,
		Insert: ports.GuardrailTx.InsertGuardrail, Update: ports.GuardrailTx.UpdateGuardrail, Delete: ports.GuardrailTx.DeleteGuardrail,
		Kind: "guardrail", ID: func(g domain.Guardrail) string { return g.ID }, Name: func(g domain.Guardrail) string { return g.Name },
		Own: func(domain.Guardrail) domain.Ownership { return domain.Ownership{Scope: domain.ScopeGlobal} }, Now: clock.Now}
	return &Service{store: store, rows: rows, ids: ids, clock: clock}
}

// List returns every guardrail, built-ins first.
func (s *Service) List(ctx context.Context) ([]domain.Guardrail, error) {
	return s.store.ListGuardrails(ctx)
}

// Get returns one guardrail or not_found.
func (s *Service) Get(ctx context.Context, id string) (domain.Guardrail, error) {
	return s.store.FindGuardrail(ctx, id)
}

// Create adds a guardrail, admin only; its regex is compiled now so a bad
// pattern is a 400 rather than a failed run. Returns forbidden, validation,
// or conflict for a taken name.
func (s *Service) Create(ctx context.Context, p domain.Principal, g domain.Guardrail) (domain.Guardrail, error) {
	if err := p.RequireAdmin(); err != nil {
		return domain.Guardrail{}, err
	}
	if _, err := domain.CompileGuardrail(g); err != nil {
		return domain.Guardrail{}, err
	}
	now := s.clock.Now()
	g.ID, g.Builtin, g.CreatedAt, g.UpdatedAt = s.ids.NewID(), false, now, now
	return s.rows.Add(ctx, g, nil)
}

// Update replaces a guardrail, admin only. A guardrail's name is its
// identity, so renaming one that agents reference is refused. Returns
// forbidden, not_found, validation, conflict.
func (s *Service) Update(ctx context.Context, p domain.Principal, id string, g domain.Guardrail) (domain.Guardrail, error) {
	if err := p.RequireAdmin(); err != nil {
		return domain.Guardrail{}, err
	}
	if _, err := domain.CompileGuardrail(g); err != nil {
		return domain.Guardrail{}, err
	}
	return s.rows.Change(ctx, id, func(tx ports.GuardrailTx, cur domain.Guardrail) (domain.Guardrail, bool, error) {
		if cur.Name != g.Name {
			users, err := tx.AgentsUsingGuardrail(ctx, cur.Name)
			if err != nil {
				return cur, false, err
			}
			if len(users) > 0 {
				return cur, false, errs.E(errs.Conflict, "%d agent(s) reference %q by name; a referenced guardrail cannot be renamed", len(users), cur.Name)
			}
		}
		g.ID, g.Builtin, g.CreatedAt, g.UpdatedAt = cur.ID, cur.Builtin, cur.CreatedAt, s.clock.Now()
		return g, true, nil
	})
}

// Delete removes a guardrail no agent references, admin only. Returns
// forbidden, not_found, conflict.
func (s *Service) Delete(ctx context.Context, p domain.Principal, id string) error {
	if err := p.RequireAdmin(); err != nil {
		return err
	}
	return s.rows.Remove(ctx, id, func(tx ports.GuardrailTx, cur domain.Guardrail) error {
		users, err := tx.AgentsUsingGuardrail(ctx, cur.Name)
		if err != nil {
			return err
		}
		if len(users) > 0 {
			return errs.E(errs.Conflict, "%d agent(s) use %q; remove it from them first", len(users), cur.Name)
		}
		return nil
	})
}

// Checks compiles the named guardrails for a run. An unknown name fails the
// agent's build (validation), never silently drops a check.
func (s *Service) Checks(ctx context.Context, names []string) ([]*domain.GuardrailCheck, error) {
	out := make([]*domain.GuardrailCheck, 0, len(names))
	for _, name := range names {
		g, err := s.store.FindGuardrailByName(ctx, name)
		if errs.Is(err, errs.NotFound) {
			return nil, errs.E(errs.Validation, "the agent names guardrail %q, which does not exist", name)
		}
		if err != nil {
			return nil, err
		}
		c, err := domain.CompileGuardrail(g)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}
