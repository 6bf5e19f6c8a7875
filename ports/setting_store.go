package ports

import (
	"context"
	"time"
)

// StoredSetting is one row of the settings table: a key's text value as
// stored (sealed when the key is secret and a secret key is set).
type StoredSetting struct {
	Key       string
	Value     string
	UpdatedAt time.Time
}

// SettingStore keeps the explicitly set global settings; a key without a row
// takes its registry default.
type SettingStore interface {
	// ListSettings returns every stored row, by key, including keys the
	// registry no longer defines.
	ListSettings(ctx context.Context) ([]StoredSetting, error)
	// GetSetting returns a key's row; ok is false when it has none.
	GetSetting(ctx context.Context, key string) (s StoredSetting, ok bool, err error)
	// PutSetting inserts or replaces a key's row.
	PutSetting(ctx context.Context, s StoredSetting) error
	// DeleteSetting removes a key's row and reports whether one existed.
	DeleteSetting(ctx context.Context, key string) (bool, error)
}

// MetaStore keeps the server's own facts about its database (such as the
// secret-key canary) apart from anything an API lists.
type MetaStore interface {
	// GetMeta returns a fact; ok is false when it is not recorded.
	GetMeta(ctx context.Context, key string) (value string, ok bool, err error)
	// InitMeta records a fact unless one is recorded under key, and
	// returns the fact that stands: value, or the one recorded first (two
	// replicas starting together agree on one).
	InitMeta(ctx context.Context, key, value string) (recorded string, err error)
}
