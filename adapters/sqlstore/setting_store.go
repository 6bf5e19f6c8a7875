package sqlstore

import (
	"context"
	"database/sql"
	"errors"

	"github.com/agents-server/agents-server/ports"
)

// ListSettings implements ports.SettingStore.
func (db *DB) ListSettings(ctx context.Context) ([]ports.StoredSetting, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT key, value, updated_at FROM settings ORDER BY key`)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	out := []ports.StoredSetting{}
	for rows.Next() {
		var s ports.StoredSetting
		var at int64
		if err := rows.Scan(&s.Key, &s.Value, &at); err != nil {
			return nil, translate(err)
		}
		s.UpdatedAt = fromMS(at)
		out = append(out, s)
	}
	return out, translate(rows.Err())
}

// GetSetting implements ports.SettingStore.
func (db *DB) GetSetting(ctx context.Context, key string) (ports.StoredSetting, bool, error) {
	s := ports.StoredSetting{Key: key}
	var at int64
	err := db.read.QueryRowContext(ctx, `SELECT value, updated_at FROM settings WHERE key = ?`, key).Scan(&s.Value, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return ports.StoredSetting{}, false, nil
	}
	if err != nil {
		return ports.StoredSetting{}, false, translate(err)
	}
	s.UpdatedAt = fromMS(at)
	return s, true, nil
}

// PutSetting implements ports.SettingStore.
func (db *DB) PutSetting(ctx context.Context, s ports.StoredSetting) error {
	_, err := db.exec(ctx, `INSERT INTO settings (key, value, updated_at) VALUES (?, ?, ?)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`, s.Key, s.Value, ms(s.UpdatedAt))
	return err
}

// DeleteSetting implements ports.SettingStore.
func (db *DB) DeleteSetting(ctx context.Context, key string) (bool, error) {
	r, err := db.exec(ctx, `DELETE FROM settings WHERE key = ?`, key)
	if err != nil {
		return false, err
	}
	n, _ := r.RowsAffected()
	return n > 0, nil
}

// GetMeta implements ports.MetaStore.
func (db *DB) GetMeta(ctx context.Context, key string) (string, bool, error) {
	var v string
	err := db.read.QueryRowContext(ctx, `SELECT value FROM server_meta WHERE key = ?`, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	return v, err == nil, translate(err)
}

// InitMeta implements ports.MetaStore.
func (db *DB) InitMeta(ctx context.Context, key, value string) (recorded string, err error) {
	err = db.tx(ctx, func(tx txQ) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO server_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING`, key, value); err != nil {
			return translate(err)
		}
		return translate(tx.QueryRowContext(ctx, `SELECT value FROM server_meta WHERE key = ?`, key).Scan(&recorded))
	})
	return recorded, err
}
