package ports

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/agents-server/agents-server/core/domain"
)

// AuditStore keeps the append-only audit log. The record of a change is
// not appended through it: core stages the record in the change's context
// (WithAuditRecord) and the store that writes the change writes the record
// in the same transaction, so a change cannot commit without its record
// and a failed one leaves none. Append is for what changes nothing: a
// refused sign-in, a refused webhook delivery.
type AuditStore interface {
	// AppendAudit appends rec on its own (its Seq is assigned).
	AppendAudit(ctx context.Context, rec domain.AuditRecord) error
	// ListAudit returns the records q selects, newest first (by Seq), at
	// most q.Limit; q is valid (domain.CheckAuditQuery).
	ListAudit(ctx context.Context, q domain.AuditQuery) ([]domain.AuditRecord, error)
	// PruneAudit deletes the records made before cutoff and says how many.
	PruneAudit(ctx context.Context, cutoff time.Time) (int, error)
}

type actorKey struct{}

// WithActor returns ctx carrying who acts in it (set where a request or a
// schedule enters the server) for the audit records made under it.
func WithActor(ctx context.Context, a domain.Actor) context.Context {
	return context.WithValue(ctx, actorKey{}, a)
}

// ActorOf is the actor ctx carries; the system when none.
func ActorOf(ctx context.Context) domain.Actor {
	if a, ok := ctx.Value(actorKey{}).(domain.Actor); ok {
		return a
	}
	return domain.Actor{Kind: domain.ActorSystem, Name: "system"}
}

// AuditSlot holds the records staged for the next write made with a
// context: a store writes them in that write's transaction, as they read
// when it commits (so a change can complete its record — the object's
// name, the fields it changed — inside the transaction), and marks them
// landed, so a second write with the same context does not repeat them.
type AuditSlot struct {
	mu     sync.Mutex
	recs   []*domain.AuditRecord
	landed bool
}

type auditKey struct{}

// WithAuditRecord returns ctx staging rec (and any records ctx stages
// already) for the next write a store makes with it. rec may be completed
// until that write's transaction ends; one whose Action is emptied by then
// is withdrawn (the write changed nothing) and not written.
func WithAuditRecord(ctx context.Context, rec *domain.AuditRecord) context.Context {
	slot := &AuditSlot{recs: []*domain.AuditRecord{rec}}
	if prev, ok := ctx.Value(auditKey{}).(*AuditSlot); ok {
		prev.mu.Lock()
		if !prev.landed {
			slot.recs = append(slices.Clone(prev.recs), rec)
		}
		prev.mu.Unlock()
	}
	return context.WithValue(ctx, auditKey{}, slot)
}

// StagedAudit is the slot of the records ctx stages, or nil.
func StagedAudit(ctx context.Context) *AuditSlot {
	slot, _ := ctx.Value(auditKey{}).(*AuditSlot)
	return slot
}

// Pending is the records not yet landed, as they read now (none on a nil
// slot).
func (s *AuditSlot) Pending() []domain.AuditRecord {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.landed {
		return nil
	}
	out := make([]domain.AuditRecord, len(s.recs))
	for i, r := range s.recs {
		out[i] = *r
	}
	return out
}

// Landed marks the records written by a committed transaction.
func (s *AuditSlot) Landed() {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.landed = true
	s.mu.Unlock()
}
