package settings

import (
	"context"
	"crypto/rand"
	"strings"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/secrets"
	"github.com/agents-server/agents-server/ports"
	"github.com/agents-server/agents-server/ports/porttest"
)

var (
	admin  = domain.Principal{User: domain.User{Role: domain.RoleAdmin}}
	member = domain.Principal{User: domain.User{Role: domain.RoleMember}}
	clock  = ports.ClockFunc(func() time.Time { return time.Unix(1_700_000_000, 0) })
)

// newService is a service over an empty in-memory store (the fake that
// keeps the SQL store's settings contract).
func newService(t *testing.T) (*Service, *porttest.SettingStore) {
	t.Helper()
	k := make([]byte, 32)
	rand.Read(k)
	box, _ := secrets.NewBox(k)
	store := &porttest.SettingStore{}
	return New(store, box, clock), store
}

func TestRegistryIsWellFormed(t *testing.T) {
	seen := map[string]bool{}
	for _, d := range Registry {
		if seen[d.Key] || d.Group == "" || d.Label == "" || d.Description == "" {
			t.Errorf("registry row %q is duplicated or incomplete", d.Key)
		}
		seen[d.Key] = true
		if d.Default != "" {
			if norm, err := d.Normalize(d.Default); err != nil || norm != d.Default {
				t.Errorf("%s: default %q is not canonical for its kind (%v)", d.Key, d.Default, err)
			}
		}
	}
}

func TestSecretSettingsSealMaskAndKeep(t *testing.T) {
	s, store := newService(t)
	ctx := context.Background()
	v, err := s.Put(ctx, admin, KeyProxyURL, "http://u:pw@proxy:3128")
	if err != nil || v.Value != secrets.Mask || !v.Set {
		t.Fatalf("put = %+v %v", v, err)
	}
	if stored, _, _ := store.GetSetting(ctx, KeyProxyURL); !strings.HasPrefix(stored.Value, "enc:v2:") || strings.Contains(stored.Value, "pw@") {
		t.Fatalf("stored %q", stored.Value)
	}
	if _, err := s.Put(ctx, admin, KeyProxyURL, secrets.Mask); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.String(ctx, KeyProxyURL); got != "http://u:pw@proxy:3128" {
		t.Fatalf("mask did not keep: %q", got)
	}
	if _, err := s.Put(ctx, member, KeyProxyURL, ""); errs.CodeOf(err) != errs.Forbidden {
		t.Fatalf("member write: %v", err)
	}
}

func TestReadersFallBackToDefaults(t *testing.T) {
	s, _ := newService(t)
	ctx := context.Background()
	if n, _ := s.Int(ctx, KeyMaxTasksPerSession); n != 6 {
		t.Fatalf("default = %d", n)
	}
	// A value an older build stored that no longer parses reads as default.
	s, store := newService(t)
	store.PutSetting(ctx, ports.StoredSetting{Key: KeyMaxTasksPerSession, Value: "many"})
	if n, _ := s.Int(ctx, KeyMaxTasksPerSession); n != 6 {
		t.Fatalf("stale value read as %d", n)
	}
	if _, err := s.String(ctx, "not_registered"); errs.CodeOf(err) != errs.Internal {
		t.Fatalf("unregistered read: %v", err)
	}
	store.PutSetting(ctx, ports.StoredSetting{Key: "gone", Value: "v"})
	list, _ := s.List(ctx)
	last := list[len(list)-1]
	if len(list) != len(Registry)+1 || last.Key != "gone" || !last.Unknown || last.Value != secrets.Mask {
		t.Fatalf("list tail = %+v", last)
	}
}

// countingStore counts the reads that reach the store.
type countingStore struct {
	porttest.SettingStore
	reads int
}

func (c *countingStore) GetSetting(ctx context.Context, k string) (ports.StoredSetting, bool, error) {
	c.reads++
	return c.SettingStore.GetSetting(ctx, k)
}

func TestReadsAreKeptUntilAWrite(t *testing.T) {
	k := make([]byte, 32)
	rand.Read(k)
	box, _ := secrets.NewBox(k)
	store := &countingStore{}
	s := New(store, box, clock)
	ctx := context.Background()
	read := func(want int) {
		t.Helper()
		if n, err := s.Int(ctx, KeyMaxTasksPerSession); err != nil || n != want {
			t.Fatalf("read %d, %v; want %d", n, err, want)
		}
	}
	read(6)
	read(6)
	if store.reads != 1 {
		t.Fatalf("%d store reads for two reads of one key, want 1", store.reads)
	}
	if _, err := s.Put(ctx, admin, KeyMaxTasksPerSession, "9"); err != nil {
		t.Fatal(err)
	}
	read(9)
	if _, err := s.Put(ctx, admin, KeyMaxTasksPerSession, ""); err != nil {
		t.Fatal(err)
	}
	read(6)
	if _, err := s.Put(ctx, admin, KeyMaxTasksPerSession, "4"); err != nil {
		t.Fatal(err)
	}
	read(4)
	if err := s.Delete(ctx, admin, KeyMaxTasksPerSession); err != nil {
		t.Fatal(err)
	}
	read(6)
	// A refused write changes nothing kept.
	if _, err := s.Put(ctx, member, KeyMaxTasksPerSession, "7"); errs.CodeOf(err) != errs.Forbidden {
		t.Fatalf("a member's write: %v", err)
	}
	read(6)
}
