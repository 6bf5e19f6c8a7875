// Package audit keeps the record of who did what on the server: the
// records of changes, staged by the service making each change for the
// store to write in the change's own transaction; refusals (a failed
// sign-in, a refused webhook) appended on their own; the admins' listing
// and export; and the retention that prunes the log.
package audit

import (
	"context"
	"slices"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// Object is what an action was done to.
type Object struct {
	Kind, ID, Name string
}

// Change returns ctx staging the record of a change to obj by the actor
// ctx carries: the next store write made with the returned context writes
// it in its own transaction. fields are the names of the fields the change
// set (never their values); action is "<kind>.<verb>".
func Change(ctx context.Context, at time.Time, action string, obj Object, fields ...string) context.Context {
	ctx, _ = Stage(ctx, at, action, obj, fields...)
	return ctx
}

// Stage is Change for a record completed inside the write's transaction:
// the change sets the returned record's ObjectName or Fields (see Diff)
// once it has read the stored object, before its transaction ends.
func Stage(ctx context.Context, at time.Time, action string, obj Object, fields ...string) (context.Context, *domain.AuditRecord) {
	rec := record(ctx, at, action, obj, fields)
	return ports.WithAuditRecord(ctx, &rec), &rec
}

func record(ctx context.Context, at time.Time, action string, obj Object, fields []string) domain.AuditRecord {
	return domain.AuditRecord{At: at, Actor: ports.ActorOf(ctx), Action: action, ObjectKind: obj.Kind, ObjectID: obj.ID,
		ObjectName: obj.Name, Outcome: domain.AuditSuccess, Fields: Names(fields)}
}

// Drop withdraws a staged record (nil: none) whose write turned out to
// change nothing: the store writes no record without an action.
func Drop(rec *domain.AuditRecord) {
	if rec != nil {
		rec.Action = ""
	}
}

// Changed completes a staged record of an update inside its transaction:
// the object's name and the fields that differ between before and after
// (see Diff).
func Changed(rec *domain.AuditRecord, name string, before, after any) {
	rec.ObjectName, rec.Fields = name, Diff(before, after)
}

// ScopeAction is the action of moving a kind of object to scope to:
// <kind>.publish to global, <kind>.unpublish back to private.
func ScopeAction(kind string, to domain.Scope) string {
	if to == domain.ScopeGlobal {
		return kind + ".publish"
	}
	return kind + ".unpublish"
}

// Names is a set of field names as a record keeps them: sorted, once each.
func Names(fields []string) []string {
	fields = slices.Clone(fields)
	slices.Sort(fields)
	return slices.Compact(fields)
}

// Service lists, exports and prunes the log, and appends the records of
// what changed nothing.
type Service struct {
	store     ports.AuditStore
	retention func(context.Context) (int, error)
	clock     ports.Clock
}

// New returns a Service; retentionDays reads how many days records are
// kept (the audit_retention_days setting; 0 keeps them for ever).
func New(store ports.AuditStore, retentionDays func(context.Context) (int, error), clock ports.Clock) *Service {
	return &Service{store: store, retention: retentionDays, clock: clock}
}

// Refused appends the record of an action refused before it changed
// anything (a failed sign-in, a webhook delivery turned away), with the
// reason in a person's words and how it was tried (method, may be empty).
// The log failing to take it is returned, for the caller to log: a refusal
// is not made to succeed by a broken log.
func (s *Service) Refused(ctx context.Context, action string, obj Object, method, reason string) error {
	rec := record(ctx, s.clock.Now(), action, obj, nil)
	rec.Outcome, rec.Method, rec.Reason = domain.AuditFailure, method, errs.Short(reason)
	return s.store.AppendAudit(ctx, rec)
}

// Succeeded appends the record of an action that changed nothing stored
// but is worth knowing (a sign-in made with a token that already existed).
func (s *Service) Succeeded(ctx context.Context, action string, obj Object, method string) error {
	rec := record(ctx, s.clock.Now(), action, obj, nil)
	rec.Method = method
	return s.store.AppendAudit(ctx, rec)
}

// List returns a page of the log, newest first; admins only. Returns
// forbidden or validation.
func (s *Service) List(ctx context.Context, p domain.Principal, q domain.AuditQuery) ([]domain.AuditRecord, error) {
	if err := p.RequireAdmin(); err != nil {
		return nil, err
	}
	if err := domain.CheckAuditQuery(q); err != nil {
		return nil, err
	}
	return s.store.ListAudit(ctx, q)
}

// Export hands every record q selects (its cursor and limit aside) to
// emit, newest first, a page at a time; admins only. emit's error stops
// it. Returns forbidden, validation or emit's error.
func (s *Service) Export(ctx context.Context, p domain.Principal, q domain.AuditQuery, emit func(domain.AuditRecord) error) error {
	q.Limit = domain.AuditPageMax
	for {
		page, err := s.List(ctx, p, q)
		if err != nil {
			return err
		}
		for _, r := range page {
			if err := emit(r); err != nil {
				return err
			}
		}
		if len(page) < q.Limit {
			return nil
		}
		q.Before = page[len(page)-1].Seq
	}
}

// Prune deletes records older than audit_retention_days (0 keeps them).
func (s *Service) Prune(ctx context.Context) (int, error) {
	days, err := s.retention(ctx)
	if err != nil || days <= 0 {
		return 0, err
	}
	return s.store.PruneAudit(ctx, s.clock.Now().Add(-time.Duration(days)*24*time.Hour))
}
