package porttest

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// TriggerStore is an in-memory ports.TriggerStore. Every method is atomic
// under one lock, so a tick's claim has one winner; times are kept as a
// store keeps them (UTC, whole milliseconds). The zero value is empty and
// ready.
type TriggerStore struct {
	mu       sync.Mutex
	triggers map[string]domain.Trigger
}

var _ ports.TriggerStore = (*TriggerStore)(nil)

// storedTrigger is t as a read gives it back: times in UTC milliseconds,
// behind pointers of its own, so a caller never shares memory with a row.
func storedTrigger(t domain.Trigger) domain.Trigger {
	t.CreatedAt, t.UpdatedAt = storedTime(t.CreatedAt), storedTime(t.UpdatedAt)
	t.NextFireAt, t.LastFiredAt = storedTimePtr(t.NextFireAt), storedTimePtr(t.LastFiredAt)
	return t
}

// InsertTrigger implements ports.TriggerStore.
func (s *TriggerStore) InsertTrigger(ctx context.Context, t domain.Trigger, max int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, x := range s.triggers {
		if x.OwnerID == t.OwnerID {
			n++
		}
	}
	if n >= max {
		return errs.E(errs.Conflict, "you keep %d triggers already, the most one person may: delete one first", n)
	}
	if _, taken := s.triggers[t.ID]; taken {
		return errs.E(errs.Conflict, "trigger %s already exists", t.ID)
	}
	if s.triggers == nil {
		s.triggers = map[string]domain.Trigger{}
	}
	s.triggers[t.ID] = storedTrigger(t)
	return nil
}

// FindTrigger implements ports.TriggerStore.
func (s *TriggerStore) FindTrigger(ctx context.Context, id string) (domain.Trigger, error) {
	if err := ctx.Err(); err != nil {
		return domain.Trigger{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.triggers[id]
	if !ok {
		return domain.Trigger{}, errs.E(errs.NotFound, "trigger not found")
	}
	return storedTrigger(t), nil
}

// ListTriggers implements ports.TriggerStore: newest (largest id) first.
func (s *TriggerStore) ListTriggers(ctx context.Context, ownerID string) ([]domain.Trigger, error) {
	out, err := s.where(ctx, func(t domain.Trigger) bool { return ownerID == "" || t.OwnerID == ownerID })
	slices.Reverse(out)
	return out, err
}

// where lists the triggers keep accepts, oldest (smallest id) first.
func (s *TriggerStore) where(ctx context.Context, keep func(domain.Trigger) bool) ([]domain.Trigger, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []domain.Trigger{}
	for _, t := range s.triggers {
		if keep(t) {
			out = append(out, storedTrigger(t))
		}
	}
	slices.SortFunc(out, func(a, b domain.Trigger) int { return cmp.Compare(a.ID, b.ID) })
	return out, nil
}

// UpdateTrigger implements ports.TriggerStore: the owner, creation time
// and record of the last fire stay.
func (s *TriggerStore) UpdateTrigger(ctx context.Context, t domain.Trigger) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, ok := s.triggers[t.ID]
	if !ok {
		return errs.E(errs.NotFound, "trigger not found")
	}
	t.OwnerID, t.CreatedAt, t.LastFiredAt, t.LastError, t.LastStartedID = cur.OwnerID, cur.CreatedAt, cur.LastFiredAt, cur.LastError, cur.LastStartedID
	s.triggers[t.ID] = storedTrigger(t)
	return nil
}

// DeleteTrigger implements ports.TriggerStore.
func (s *TriggerStore) DeleteTrigger(ctx context.Context, id string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.triggers[id]; !ok {
		return errs.E(errs.NotFound, "trigger not found")
	}
	delete(s.triggers, id)
	return nil
}

// CronTriggers implements ports.TriggerStore: by next fire time, then id.
func (s *TriggerStore) CronTriggers(ctx context.Context, due *time.Time) ([]domain.Trigger, error) {
	out, err := s.where(ctx, func(t domain.Trigger) bool {
		return t.Kind == domain.TriggerCron && t.Enabled && (due == nil || (t.NextFireAt != nil && !t.NextFireAt.After(storedTime(*due))))
	})
	slices.SortStableFunc(out, func(a, b domain.Trigger) int {
		switch {
		case a.NextFireAt == nil || b.NextFireAt == nil:
			return cmp.Compare(boolRank(a.NextFireAt != nil), boolRank(b.NextFireAt != nil))
		}
		return a.NextFireAt.Compare(*b.NextFireAt)
	})
	return out, err
}

// boolRank sorts a trigger without a next fire time (never an enabled
// cron trigger's) first.
func boolRank(set bool) int {
	if set {
		return 1
	}
	return 0
}

// ClaimTick implements ports.TriggerStore.
func (s *TriggerStore) ClaimTick(ctx context.Context, id string, was, next time.Time) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.triggers[id]
	if !ok || t.Kind != domain.TriggerCron || !t.Enabled || t.NextFireAt == nil || !t.NextFireAt.Equal(storedTime(was)) {
		return false, nil
	}
	t.NextFireAt = &next
	s.triggers[id] = storedTrigger(t)
	return true, nil
}

// RecordFire implements ports.TriggerStore; a trigger that is gone is
// left gone.
func (s *TriggerStore) RecordFire(ctx context.Context, id string, at time.Time, lastError, startedID string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if t, ok := s.triggers[id]; ok {
		t.LastFiredAt, t.LastError, t.LastStartedID = &at, lastError, startedID
		s.triggers[id] = storedTrigger(t)
	}
	return nil
}

// ForgetSession drops the triggers targeting a session: what deleting the
// session cascades to in the real store (SessionStore.DeleteSession calls
// it when this fake is its Triggers).
func (s *TriggerStore) ForgetSession(sessionID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	maps.DeleteFunc(s.triggers, func(_ string, t domain.Trigger) bool { return t.SessionID == sessionID })
}
