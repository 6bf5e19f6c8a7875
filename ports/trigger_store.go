package ports

import (
	"context"
	"time"

	"github.com/agents-server/agents-server/core/domain"
)

// TriggerStore keeps triggers. A cron tick is claimed by a compare-and-set
// on the trigger's next fire time, so one tick fires once however many
// schedulers look at it.
type TriggerStore interface {
	// InsertTrigger adds t unless its owner keeps max triggers already
	// (conflict), counted in the same transaction.
	InsertTrigger(ctx context.Context, t domain.Trigger, max int) error
	// FindTrigger returns not_found when absent.
	FindTrigger(ctx context.Context, id string) (domain.Trigger, error)
	// ListTriggers returns an owner's triggers (every owner's for ""),
	// newest first.
	ListTriggers(ctx context.Context, ownerID string) ([]domain.Trigger, error)
	// UpdateTrigger stores t's spec, secret and next fire time; not_found
	// when it is gone.
	UpdateTrigger(ctx context.Context, t domain.Trigger) error
	// DeleteTrigger returns not_found when absent.
	DeleteTrigger(ctx context.Context, id string) error
	// CronTriggers returns the enabled cron triggers whose next fire time
	// is at or before due (every enabled cron trigger for a nil due).
	CronTriggers(ctx context.Context, due *time.Time) ([]domain.Trigger, error)
	// ClaimTick moves an enabled cron trigger's next fire time from was to
	// next; false when it no longer stands at was (another claim won, or
	// the trigger changed).
	ClaimTick(ctx context.Context, id string, was, next time.Time) (bool, error)
	// RecordFire writes how a fire went: the error that refused it ("" when
	// it started something) and what it started.
	RecordFire(ctx context.Context, id string, at time.Time, lastError, startedID string) error
}
