package porttest

import (
	"context"
	"sort"
	"sync"

	"github.com/agents-server/agents-server/ports"
)

// SettingStore is an in-memory ports.SettingStore and ports.MetaStore. The
// zero value is empty and ready.
type SettingStore struct {
	mu       sync.Mutex
	settings map[string]ports.StoredSetting
	meta     map[string]string
}

// ListSettings returns every stored row, by key.
func (s *SettingStore) ListSettings(ctx context.Context) ([]ports.StoredSetting, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]ports.StoredSetting, 0, len(s.settings))
	for _, v := range s.settings {
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

// GetSetting returns a key's row; ok is false when it has none.
func (s *SettingStore) GetSetting(ctx context.Context, key string) (ports.StoredSetting, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.settings[key]
	return v, ok, nil
}

// PutSetting inserts or replaces a key's row, its update time as the store
// keeps it (UTC, whole milliseconds).
func (s *SettingStore) PutSetting(ctx context.Context, v ports.StoredSetting) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.settings == nil {
		s.settings = map[string]ports.StoredSetting{}
	}
	v.UpdatedAt = storedTime(v.UpdatedAt)
	s.settings[v.Key] = v
	return nil
}

// DeleteSetting removes a key's row and reports whether one existed.
func (s *SettingStore) DeleteSetting(ctx context.Context, key string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.settings[key]
	delete(s.settings, key)
	return ok, nil
}

// GetMeta returns a fact; ok is false when it is not recorded.
func (s *SettingStore) GetMeta(ctx context.Context, key string) (string, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.meta[key]
	return v, ok, nil
}

// InitMeta records a fact unless one is recorded, and returns the one
// that stands.
func (s *SettingStore) InitMeta(ctx context.Context, key, value string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.meta == nil {
		s.meta = map[string]string{}
	}
	if v, ok := s.meta[key]; ok {
		return v, nil
	}
	s.meta[key] = value
	return value, nil
}

var (
	_ ports.SettingStore = (*SettingStore)(nil)
	_ ports.MetaStore    = (*SettingStore)(nil)
)
