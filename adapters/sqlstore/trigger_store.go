package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
)

const (
	triggerFields = `id, owner_id, name, kind, schedule, target, workflow_id, agent_config_id, session_id,
	brief, enabled, secret, next_fire_at, last_fired_at, last_error, last_started_id, created_at, updated_at`
	// triggerColumns reads them back, a trigger without a workflow as "".
	triggerColumns = `id, owner_id, name, kind, schedule, target, coalesce(workflow_id, ''), agent_config_id, session_id,
	brief, enabled, secret, next_fire_at, last_fired_at, last_error, last_started_id, created_at, updated_at`
)

func scanTrigger(r rowScanner) (domain.Trigger, error) {
	var t domain.Trigger
	var kind, target string
	var next, fired sql.NullInt64
	var created, updated int64
	err := r.Scan(&t.ID, &t.OwnerID, &t.Name, &kind, &t.Schedule, &target, &t.WorkflowID, &t.AgentConfigID, &t.SessionID,
		&t.Brief, &t.Enabled, &t.SealedSecret, &next, &fired, &t.LastError, &t.LastStartedID, &created, &updated)
	t.Kind, t.Target = domain.TriggerKind(kind), domain.TriggerTarget(target)
	t.NextFireAt, t.LastFiredAt = fromNullMS(next), fromNullMS(fired)
	t.CreatedAt, t.UpdatedAt = fromMS(created), fromMS(updated)
	return t, err
}

// InsertTrigger implements ports.TriggerStore.
func (db *DB) InsertTrigger(ctx context.Context, t domain.Trigger, max int) error {
	return db.tx(ctx, func(q txQ) error {
		var n int
		if err := q.QueryRowContext(ctx, `SELECT count(*) FROM triggers WHERE owner_id = ?`, t.OwnerID).Scan(&n); err != nil {
			return translate(err)
		}
		if n >= max {
			return errs.E(errs.Conflict, "you keep %d triggers already, the most one person may: delete one first", n)
		}
		_, err := q.ExecContext(ctx, `INSERT INTO triggers (`+triggerFields+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			t.ID, t.OwnerID, t.Name, string(t.Kind), t.Schedule, string(t.Target), nullable(t.WorkflowID), t.AgentConfigID, t.SessionID,
			t.Brief, t.Enabled, t.SealedSecret, msPtr(t.NextFireAt), msPtr(t.LastFiredAt), t.LastError, t.LastStartedID,
			ms(t.CreatedAt), ms(t.UpdatedAt))
		return translate(err)
	})
}

// FindTrigger implements ports.TriggerStore.
func (db *DB) FindTrigger(ctx context.Context, id string) (domain.Trigger, error) {
	t, err := scanTrigger(db.read.QueryRowContext(ctx, `SELECT `+triggerColumns+` FROM triggers WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return t, notFound("trigger")
	}
	return t, translate(err)
}

// ListTriggers implements ports.TriggerStore.
func (db *DB) ListTriggers(ctx context.Context, ownerID string) ([]domain.Trigger, error) {
	return collect(ctx, db.read, scanTrigger, `SELECT `+triggerColumns+` FROM triggers
		WHERE ?1 = '' OR owner_id = ?1 ORDER BY id DESC`, ownerID)
}

// UpdateTrigger implements ports.TriggerStore. Owner, creation time and the
// record of the last fire stay.
func (db *DB) UpdateTrigger(ctx context.Context, t domain.Trigger) error {
	r, err := db.exec(ctx, `UPDATE triggers SET name = ?, kind = ?, schedule = ?, target = ?, workflow_id = ?, agent_config_id = ?,
		session_id = ?, brief = ?, enabled = ?, secret = ?, next_fire_at = ?, updated_at = ? WHERE id = ?`,
		t.Name, string(t.Kind), t.Schedule, string(t.Target), nullable(t.WorkflowID), t.AgentConfigID,
		t.SessionID, t.Brief, t.Enabled, t.SealedSecret, msPtr(t.NextFireAt), ms(t.UpdatedAt), t.ID)
	return affected(r, err, "trigger")
}

// DeleteTrigger implements ports.TriggerStore.
func (db *DB) DeleteTrigger(ctx context.Context, id string) error {
	r, err := db.exec(ctx, `DELETE FROM triggers WHERE id = ?`, id)
	return affected(r, err, "trigger")
}

// CronTriggers implements ports.TriggerStore.
func (db *DB) CronTriggers(ctx context.Context, due *time.Time) ([]domain.Trigger, error) {
	const query = `SELECT ` + triggerColumns + ` FROM triggers WHERE kind = 'cron' AND enabled = 1`
	if due == nil {
		return collect(ctx, db.read, scanTrigger, query+` ORDER BY next_fire_at, id`)
	}
	return collect(ctx, db.read, scanTrigger, query+` AND next_fire_at <= ? ORDER BY next_fire_at, id`, ms(*due))
}

// ClaimTick implements ports.TriggerStore.
func (db *DB) ClaimTick(ctx context.Context, id string, was, next time.Time) (bool, error) {
	return changed(db.exec(ctx, `UPDATE triggers SET next_fire_at = ? WHERE id = ? AND kind = 'cron' AND enabled = 1 AND next_fire_at = ?`,
		ms(next), id, ms(was)))
}

// RecordFire implements ports.TriggerStore.
func (db *DB) RecordFire(ctx context.Context, id string, at time.Time, lastError, startedID string) error {
	_, err := db.exec(ctx, `UPDATE triggers SET last_fired_at = ?, last_error = ?, last_started_id = ? WHERE id = ?`,
		ms(at), lastError, startedID, id)
	return err
}
