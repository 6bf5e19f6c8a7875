package sqlstore

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/ports"
)

const auditColumns = `seq, at, actor_kind, actor_id, actor_name, address, action, object_kind, object_id, object_name,
	outcome, fields, reason, method`

// appendAudit writes rec with q (a write transaction's, or the writer).
func appendAudit(ctx context.Context, q querier, rec domain.AuditRecord) error {
	fields := rec.Fields
	if fields == nil {
		fields = []string{}
	}
	names, err := json.Marshal(fields)
	if err != nil {
		return err
	}
	a := rec.Actor
	_, err = q.ExecContext(ctx, `INSERT INTO audit_log (at, actor_kind, actor_id, actor_name, address, action, object_kind,
		object_id, object_name, outcome, fields, reason, method) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		ms(rec.At), string(a.Kind), a.ID, a.Name, a.Address, rec.Action, rec.ObjectKind, rec.ObjectID, rec.ObjectName,
		string(rec.Outcome), string(names), rec.Reason, rec.Method)
	return translate(err)
}

// writeStagedAudit writes the records ctx stages (ports.WithAuditRecord)
// in the transaction t, which is about to commit the change they record.
func writeStagedAudit(ctx context.Context, t querier) error {
	for _, rec := range ports.StagedAudit(ctx).Pending() {
		if rec.Action == "" {
			continue // withdrawn: the write changed nothing
		}
		if err := appendAudit(ctx, t, rec); err != nil {
			return err
		}
	}
	return nil
}

// AppendAudit implements ports.AuditStore.
func (db *DB) AppendAudit(ctx context.Context, rec domain.AuditRecord) error {
	return db.tx(ctx, func(t txQ) error { return appendAudit(ctx, t, rec) })
}

// ListAudit implements ports.AuditStore.
func (db *DB) ListAudit(ctx context.Context, q domain.AuditQuery) ([]domain.AuditRecord, error) {
	var where []string
	var args []any
	add := func(cond string, arg any) {
		where = append(where, cond)
		args = append(args, arg)
	}
	if q.ActorID != "" {
		add("actor_id = ?", q.ActorID)
	}
	if q.ActorKind != "" {
		add("actor_kind = ?", string(q.ActorKind))
	}
	if q.ObjectKind != "" {
		add("object_kind = ?", q.ObjectKind)
	}
	if q.ObjectID != "" {
		add("object_id = ?", q.ObjectID)
	}
	if q.Action != "" {
		add("action = ?", q.Action)
	}
	if !q.Since.IsZero() {
		add("at >= ?", ms(q.Since))
	}
	if !q.Until.IsZero() {
		add("at < ?", ms(q.Until))
	}
	if q.Before > 0 {
		add("seq < ?", q.Before)
	}
	query := `SELECT ` + auditColumns + ` FROM audit_log`
	if len(where) > 0 {
		query += ` WHERE ` + strings.Join(where, " AND ")
	}
	rows, err := db.read.QueryContext(ctx, query+` ORDER BY seq DESC LIMIT ?`, append(args, q.Limit)...)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	out := []domain.AuditRecord{}
	for rows.Next() {
		var r domain.AuditRecord
		var at int64
		var kind, outcome, fields string
		if err := rows.Scan(&r.Seq, &at, &kind, &r.Actor.ID, &r.Actor.Name, &r.Actor.Address, &r.Action, &r.ObjectKind,
			&r.ObjectID, &r.ObjectName, &outcome, &fields, &r.Reason, &r.Method); err != nil {
			return nil, translate(err)
		}
		r.At, r.Actor.Kind, r.Outcome = fromMS(at), domain.ActorKind(kind), domain.AuditOutcome(outcome)
		if err := json.Unmarshal([]byte(fields), &r.Fields); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, translate(rows.Err())
}

// PruneAudit implements ports.AuditStore.
func (db *DB) PruneAudit(ctx context.Context, cutoff time.Time) (int, error) {
	r, err := db.exec(ctx, `DELETE FROM audit_log WHERE at < ?`, ms(cutoff))
	if err != nil {
		return 0, err
	}
	n, _ := r.RowsAffected()
	return int(n), nil
}
