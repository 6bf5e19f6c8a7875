// Package scoped holds the shape the configuration services share: a row
// found, checked against the caller, then changed or removed — the check
// and the write in one transaction, so the write acts on the state the
// check saw. Each service keeps its own rules (who may write, validation,
// limits, references) and hands them to these functions.
package scoped

import (
	"context"
	"time"

	"github.com/agents-server/agents-server/core/audit"
	"github.com/agents-server/agents-server/core/domain"
)

// Rows is how a service reaches one noun's rows: T the row, Tx the
// noun's write transaction. The functions are a store port's methods as
// method expressions (ports.SkillTx.FindSkill, …).
type Rows[T, Tx any] struct {
	// InTx runs fn in one write transaction, committed when fn returns nil.
	InTx func(ctx context.Context, fn func(tx Tx) error) error
	// Find returns the row or not_found.
	Find func(tx Tx, ctx context.Context, id string) (T, error)
	// Insert stores a new row; conflict when its name is taken.
	Insert func(tx Tx, ctx context.Context, row T) error
	// Update writes a row back; conflict when its name is taken.
	Update func(tx Tx, ctx context.Context, row T) error
	// Delete removes a row; not_found when absent.
	Delete func(tx Tx, ctx context.Context, id string) error
	// Kind names the rows in the audit log: each write records
	// <kind>.create, .update, .delete, or .publish/.unpublish for a move
	// of scope alone, with the fields it changed ("": nothing recorded).
	// ID, Name and Own read a row's id, name and ownership; Now is the
	// clock.
	Kind string
	ID   func(T) string
	Name func(T) string
	Own  func(T) domain.Ownership
	Now  func() time.Time
}

// stage returns ctx staging the audit record of a write to row id (see
// Kind), to complete in the transaction; nil without a Kind.
func (r Rows[T, Tx]) stage(ctx context.Context, verb, id string) (context.Context, *domain.AuditRecord) {
	if r.Kind == "" {
		return ctx, nil
	}
	return audit.Stage(ctx, r.Now(), r.Kind+"."+verb, audit.Object{Kind: r.Kind, ID: id})
}

// changed completes rec (when there is one) for a write from before to
// after; a zero before is a create, a zero after a delete.
func (r Rows[T, Tx]) changed(rec *domain.AuditRecord, before, after *T) {
	if rec == nil {
		return
	}
	var b, a any
	if before != nil {
		b, rec.ObjectID, rec.ObjectName = *before, r.ID(*before), r.Name(*before)
	}
	if after != nil {
		a, rec.ObjectID, rec.ObjectName = *after, r.ID(*after), r.Name(*after)
	}
	if before != nil && after != nil {
		if to := r.Own(*after).Scope; to != r.Own(*before).Scope {
			rec.Action = audit.ScopeAction(r.Kind, to)
		}
	}
	if b != nil || a != nil {
		rec.Fields = audit.Diff(b, a)
	}
}

// Add inserts row in one transaction, after prepare (nil: none) has
// checked what the row may do there and completed it. Returns the stored
// row, or the zero row with prepare's or the store's error (conflict for
// a taken name).
func (r Rows[T, Tx]) Add(ctx context.Context, row T, prepare func(tx Tx, row T) (T, error)) (T, error) {
	actx, rec := r.stage(ctx, "create", "")
	err := r.InTx(actx, func(tx Tx) error {
		if prepare != nil {
			var err error
			if row, err = prepare(tx, row); err != nil {
				return err
			}
		}
		r.changed(rec, nil, &row)
		return r.Insert(tx, ctx, row)
	})
	if err != nil {
		var zero T
		return zero, err
	}
	return row, nil
}

// Change finds row id and, in the same transaction, hands it to edit,
// which checks the caller may change it and returns it changed; the
// changed row is written back unless edit says it is unchanged (write
// false). Returns not_found, edit's error, or the store's.
func (r Rows[T, Tx]) Change(ctx context.Context, id string, edit func(tx Tx, row T) (out T, write bool, err error)) (T, error) {
	var out T
	actx, rec := r.stage(ctx, "update", id)
	err := r.InTx(actx, func(tx Tx) error {
		before, err := r.Find(tx, ctx, id)
		if err != nil {
			return err
		}
		row, write, err := edit(tx, before)
		if err != nil {
			return err
		}
		out = row
		if !write {
			audit.Drop(rec) // nothing written, nothing to record
			return nil
		}
		r.changed(rec, &before, &row)
		return r.Update(tx, ctx, row)
	})
	if err != nil {
		var zero T
		return zero, err
	}
	return out, nil
}

// Remove finds row id and, in the same transaction, deletes it once check
// (the caller's right, a reference that still holds it) lets it go.
// Returns not_found, check's error, or the store's.
func (r Rows[T, Tx]) Remove(ctx context.Context, id string, check func(tx Tx, row T) error) error {
	actx, rec := r.stage(ctx, "delete", id)
	return r.InTx(actx, func(tx Tx) error {
		row, err := r.Find(tx, ctx, id)
		if err != nil {
			return err
		}
		if err := check(tx, row); err != nil {
			return err
		}
		r.changed(rec, &row, nil)
		return r.Delete(tx, ctx, id)
	})
}

// Read returns the row find gives for id once allow lets the caller see
// it; a refusal (not_found for a row the caller may not know of) returns
// the zero row.
func Read[T any](ctx context.Context, id string, find func(ctx context.Context, id string) (T, error), allow func(T) error) (T, error) {
	row, err := find(ctx, id)
	if err == nil {
		err = allow(row)
	}
	if err != nil {
		var zero T
		return zero, err
	}
	return row, nil
}

// Visible lists the rows p can see, in listing order
// (domain.VisibleOrdered): others' shared ones first, then p's own.
func Visible[T any](ctx context.Context, p domain.Principal, list func(ctx context.Context) ([]T, error), own func(T) domain.Ownership) ([]T, error) {
	all, err := list(ctx)
	if err != nil {
		return nil, err
	}
	return domain.VisibleOrdered(all, p, own), nil
}

// Owned is the ownership of a row p creates: private unless scope says
// global. Returns validation for an unknown scope, forbidden for a
// member's global row.
func Owned(p domain.Principal, scope domain.Scope, what string) (domain.Ownership, error) {
	if scope == "" {
		scope = domain.ScopePrivate
	}
	if err := domain.CheckCreate(p, scope, what); err != nil {
		return domain.Ownership{}, err
	}
	return domain.Ownership{Scope: scope, OwnerID: p.User.ID}, nil
}
