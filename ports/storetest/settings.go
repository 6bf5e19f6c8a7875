package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/agents-server/agents-server/ports"
)

// Settings is the contract of ports.SettingStore and ports.MetaStore: a
// put replaces a key's row, rows list by key, a read gives back the update
// time as stored (UTC, whole milliseconds), a delete says whether a row
// was there, and the first fact recorded under a meta key stands. s must
// hold no settings and no meta facts.
func Settings(t *testing.T, s ports.SettingStore, meta ports.MetaStore) {
	ctx := context.Background()
	// A time in another zone with a sub-millisecond part, as a clock
	// hands it out: the store keeps milliseconds in UTC.
	at := time.Date(2026, 12, 1, 12, 0, 0, 123_456_789, time.FixedZone("CET", 3600))
	stored := time.UnixMilli(at.UnixMilli()).UTC()

	if list, err := s.ListSettings(ctx); err != nil || list == nil || len(list) != 0 {
		t.Fatalf("an empty store lists %#v, %v; want an empty, non-nil list", list, err)
	}
	if got, ok, err := s.GetSetting(ctx, "k"); ok || err != nil || got != (ports.StoredSetting{}) {
		t.Fatalf("an absent key = %+v, %v, %v", got, ok, err)
	}
	put := func(key, value string, at time.Time) {
		t.Helper()
		if err := s.PutSetting(ctx, ports.StoredSetting{Key: key, Value: value, UpdatedAt: at}); err != nil {
			t.Fatal(err)
		}
	}
	put("k", "v1", at.Add(-time.Hour))
	put("k", "v2", at)
	put("a", "", at)
	got, ok, err := s.GetSetting(ctx, "k")
	if err != nil || !ok || got.Key != "k" || got.Value != "v2" || !got.UpdatedAt.Equal(stored) || got.UpdatedAt.Location() != time.UTC {
		t.Fatalf("a replaced key = %+v, %v, %v; want v2 at %v (UTC, milliseconds)", got, ok, err, stored)
	}
	if got, ok, _ := s.GetSetting(ctx, "a"); !ok || got.Value != "" {
		t.Fatalf("an empty value = %+v, %v; want a row", got, ok)
	}
	// Keys are exact: no case folding.
	if _, ok, _ := s.GetSetting(ctx, "K"); ok {
		t.Fatal("a key read in another case")
	}
	list, err := s.ListSettings(ctx)
	if err != nil || len(list) != 2 || list[0].Key != "a" || list[1].Key != "k" || list[1].Value != "v2" || !list[1].UpdatedAt.Equal(stored) ||
		list[1].UpdatedAt.Location() != time.UTC {
		t.Fatalf("the rows by key = %+v, %v", list, err)
	}
	if existed, err := s.DeleteSetting(ctx, "k"); err != nil || !existed {
		t.Fatalf("deleting a row = %v, %v", existed, err)
	}
	if existed, err := s.DeleteSetting(ctx, "k"); err != nil || existed {
		t.Fatalf("deleting it again = %v, %v; want false", existed, err)
	}
	if _, ok, _ := s.GetSetting(ctx, "k"); ok {
		t.Fatal("a deleted key still reads")
	}

	// Meta facts: the first one recorded stands, among racers too.
	if v, ok, err := meta.GetMeta(ctx, "m"); ok || err != nil || v != "" {
		t.Fatalf("an absent fact = %q, %v, %v", v, ok, err)
	}
	if v, err := meta.InitMeta(ctx, "m", "1"); err != nil || v != "1" {
		t.Fatalf("the first fact = %q, %v", v, err)
	}
	if v, err := meta.InitMeta(ctx, "m", "2"); err != nil || v != "1" {
		t.Fatalf("a second fact = %q, %v; the first stands", v, err)
	}
	if v, ok, err := meta.GetMeta(ctx, "m"); !ok || err != nil || v != "1" {
		t.Fatalf("the fact = %q, %v, %v", v, ok, err)
	}
	recorded := make([]string, Racers)
	failures := make([]error, Racers)
	Race(Racers, func(i int) { recorded[i], failures[i] = meta.InitMeta(ctx, "race", string(rune('a'+i))) })
	for i := range Racers {
		if failures[i] != nil || recorded[i] != recorded[0] {
			t.Fatalf("racer %d was told %q, %v; racer 0 %q", i, recorded[i], failures[i], recorded[0])
		}
	}
	if v, _, _ := meta.GetMeta(ctx, "race"); v != recorded[0] {
		t.Fatalf("the race recorded %q, its racers were told %q", v, recorded[0])
	}
	// Settings and facts are apart: a fact is no setting.
	if _, ok, _ := s.GetSetting(ctx, "m"); ok {
		t.Fatal("a meta fact reads as a setting")
	}
}
