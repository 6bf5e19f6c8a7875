package settings

import (
	"context"
	"strconv"
	"sync"

	"github.com/agents-server/agents-server/core/audit"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/secrets"
	"github.com/agents-server/agents-server/ports"
)

// Setting is a key's value as a client sees it.
type Setting struct {
	Key     string
	Value   string // effective text; the mask when secret and set
	Set     bool   // an explicit value is stored (false: the default applies)
	Secret  bool
	Unknown bool // stored, but no longer defined by the registry
}

// Service reads and writes global settings through the registry. It keeps
// the effective values it has read, since runs and requests read settings
// far more often than admins write them; its own writes drop them. It
// assumes it is the only writer of the store (another process writing the
// same settings would be seen after a restart).
type Service struct {
	store ports.SettingStore
	box   *secrets.Box
	clock ports.Clock
	defs  map[string]domain.SettingDef

	mu     sync.RWMutex
	values map[string]string // key → effective plaintext value
	gen    uint64            // moved by every write: a read that raced one is not kept
}

// New returns a Service over store, sealing secret values with box.
func New(store ports.SettingStore, box *secrets.Box, clock ports.Clock) *Service {
	defs := make(map[string]domain.SettingDef, len(Registry))
	for _, d := range Registry {
		defs[d.Key] = d
	}
	return &Service{store: store, box: box, clock: clock, defs: defs, values: map[string]string{}}
}

// Defs returns the registry, for /setting-defs.
func (s *Service) Defs() []domain.SettingDef { return Registry }

func place(key string) string { return secrets.Place("settings", "value", key) }

// List returns every defined key with its effective value, then every stored
// key the registry no longer defines (masked: whether it was a secret is
// unknowable once its definition is gone). Secret values are masked.
func (s *Service) List(ctx context.Context) ([]Setting, error) {
	rows, err := s.store.ListSettings(ctx)
	if err != nil {
		return nil, err
	}
	stored := make(map[string]string, len(rows))
	for _, r := range rows {
		stored[r.Key] = r.Value
	}
	out := make([]Setting, 0, len(Registry)+len(rows))
	for _, d := range Registry {
		v, ok := stored[d.Key]
		out = append(out, s.view(d, v, ok))
	}
	for _, r := range rows {
		if _, defined := s.defs[r.Key]; !defined {
			out = append(out, Setting{Key: r.Key, Value: secrets.Masked(r.Value), Set: true, Unknown: true})
		}
	}
	return out, nil
}

func (s *Service) view(d domain.SettingDef, stored string, ok bool) Setting {
	st := Setting{Key: d.Key, Value: d.Default, Secret: d.Secret, Set: ok}
	if ok {
		st.Value = stored
	}
	if d.Secret && ok {
		st.Value = secrets.Masked(stored)
	}
	return st
}

// Put writes a defined key, admin only. The value must parse as the key's
// kind; "" returns the key to its default; a secret key accepts its mask back
// to keep what is stored. Returns forbidden, validation (unknown key or wrong
// kind) or a store error.
func (s *Service) Put(ctx context.Context, p domain.Principal, key, value string) (Setting, error) {
	if err := p.RequireAdmin(); err != nil {
		return Setting{}, err
	}
	d, ok := s.defs[key]
	if !ok {
		return Setting{}, errs.E(errs.Validation, "%q is not a setting this server defines", key)
	}
	if d.Secret && value == secrets.Mask {
		cur, ok, err := s.store.GetSetting(ctx, key)
		if err != nil {
			return Setting{}, err
		}
		return s.view(d, cur.Value, ok), nil
	}
	norm, err := d.Normalize(value)
	if err != nil {
		return Setting{}, err
	}
	defer s.forget()
	ctx = audit.Change(ctx, s.clock.Now(), "setting.update", audit.Object{Kind: "setting", ID: key, Name: d.Label}, "value")
	if norm == "" {
		if _, err := s.store.DeleteSetting(ctx, key); err != nil {
			return Setting{}, err
		}
		return s.view(d, "", false), nil
	}
	storedValue := norm
	if d.Secret {
		if storedValue, err = s.box.Seal(place(key), norm); err != nil {
			return Setting{}, err
		}
	}
	if err := s.store.PutSetting(ctx, ports.StoredSetting{Key: key, Value: storedValue, UpdatedAt: s.clock.Now()}); err != nil {
		return Setting{}, err
	}
	return s.view(d, norm, true), nil
}

// Delete removes a stored value, admin only: a defined key returns to its
// default, a leftover unknown key disappears. Returns forbidden, or not_found
// for a key that is neither defined nor stored.
func (s *Service) Delete(ctx context.Context, p domain.Principal, key string) error {
	if err := p.RequireAdmin(); err != nil {
		return err
	}
	defer s.forget()
	existed, err := s.store.DeleteSetting(audit.Change(ctx, s.clock.Now(), "setting.reset", audit.Object{Kind: "setting", ID: key}, "value"), key)
	if err != nil {
		return err
	}
	if _, defined := s.defs[key]; !defined && !existed {
		return errs.E(errs.NotFound, "setting %q not found", key)
	}
	return nil
}

// String returns a key's effective value in plaintext, for backend readers.
// Returns internal for a key the registry does not define (a programming
// error) or a secret that will not open.
func (s *Service) String(ctx context.Context, key string) (string, error) {
	d, ok := s.defs[key]
	if !ok {
		return "", errs.E(errs.Internal, "setting %q is not in the registry", key)
	}
	s.mu.RLock()
	v, ok := s.values[key]
	gen := s.gen
	s.mu.RUnlock()
	if ok {
		return v, nil
	}
	v, err := s.read(ctx, d)
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	if s.gen == gen {
		s.values[key] = v
	}
	s.mu.Unlock()
	return v, nil
}

// read is a key's effective value from the store.
func (s *Service) read(ctx context.Context, d domain.SettingDef) (string, error) {
	row, ok, err := s.store.GetSetting(ctx, d.Key)
	if err != nil || !ok {
		return d.Default, err
	}
	if d.Secret {
		return s.box.Open(place(d.Key), row.Value)
	}
	return row.Value, nil
}

// forget drops the kept values after a write (whatever its outcome).
func (s *Service) forget() {
	s.mu.Lock()
	s.gen++
	clear(s.values)
	s.mu.Unlock()
}

// Int returns an int setting's effective value, falling back to the default
// when a stored value no longer parses (written by an older build).
func (s *Service) Int(ctx context.Context, key string) (int, error) {
	v, err := s.String(ctx, key)
	if err != nil {
		return 0, err
	}
	n, perr := strconv.Atoi(v)
	if perr != nil {
		n, _ = strconv.Atoi(s.defs[key].Default)
	}
	return n, nil
}

// Bool returns a bool setting's effective value, like Int.
func (s *Service) Bool(ctx context.Context, key string) (bool, error) {
	v, err := s.String(ctx, key)
	if err != nil {
		return false, err
	}
	b, perr := strconv.ParseBool(v)
	if perr != nil {
		b, _ = strconv.ParseBool(s.defs[key].Default)
	}
	return b, nil
}
