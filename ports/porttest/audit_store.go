package porttest

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/ports"
)

// AuditStore is an in-memory ports.AuditStore. Times are kept in whole
// milliseconds, as a store keeps them. The zero value is empty and ready.
type AuditStore struct {
	mu   sync.Mutex
	seq  int64
	recs []domain.AuditRecord // by Seq, oldest first
}

var _ ports.AuditStore = (*AuditStore)(nil)

// AppendAudit implements ports.AuditStore.
func (s *AuditStore) AppendAudit(ctx context.Context, rec domain.AuditRecord) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	rec.Seq, rec.At = s.seq, time.UnixMilli(rec.At.UnixMilli()).UTC()
	if rec.Fields == nil {
		rec.Fields = []string{}
	}
	rec.Fields = slices.Clone(rec.Fields)
	s.recs = append(s.recs, rec)
	return nil
}

// ListAudit implements ports.AuditStore.
func (s *AuditStore) ListAudit(ctx context.Context, q domain.AuditQuery) ([]domain.AuditRecord, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []domain.AuditRecord{}
	for i := len(s.recs) - 1; i >= 0 && len(out) < q.Limit; i-- {
		if r := s.recs[i]; auditMatches(r, q) {
			r.Fields = slices.Clone(r.Fields)
			out = append(out, r)
		}
	}
	return out, nil
}

func auditMatches(r domain.AuditRecord, q domain.AuditQuery) bool {
	ms := r.At.UnixMilli()
	return (q.ActorID == "" || r.Actor.ID == q.ActorID) && (q.ActorKind == "" || r.Actor.Kind == q.ActorKind) &&
		(q.ObjectKind == "" || r.ObjectKind == q.ObjectKind) && (q.ObjectID == "" || r.ObjectID == q.ObjectID) &&
		(q.Action == "" || r.Action == q.Action) && (q.Since.IsZero() || ms >= q.Since.UnixMilli()) &&
		(q.Until.IsZero() || ms < q.Until.UnixMilli()) && (q.Before <= 0 || r.Seq < q.Before)
}

// PruneAudit implements ports.AuditStore.
func (s *AuditStore) PruneAudit(ctx context.Context, cutoff time.Time) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	before := len(s.recs)
	s.recs = slices.DeleteFunc(s.recs, func(r domain.AuditRecord) bool { return r.At.UnixMilli() < cutoff.UnixMilli() })
	return before - len(s.recs), nil
}
