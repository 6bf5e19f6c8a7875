package storetest

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// TriggerStores is one database as the trigger contract uses it: its
// triggers and the sessions they target.
type TriggerStores struct {
	Triggers ports.TriggerStore
	Sessions ports.SessionStore
	// NewSession stores a visible session with that id, of an owner of
	// its own, and returns it.
	NewSession func(t *testing.T, id string) domain.Session
}

// Triggers is the contract of ports.TriggerStore: the per-owner cap
// counted at the insert, a taken id is conflict, listings newest (largest
// id) first, due cron triggers by next fire time then id, one claim per
// tick among Racers, an update that keeps the owner, creation time and
// record of the last fire, triggers that go with the session they target,
// and times kept as UTC milliseconds. s must hold no triggers.
func Triggers(t *testing.T, stores TriggerStores) {
	ctx := context.Background()
	s, sessionID := stores.Triggers, stores.NewSession(t, "triggered").ID
	// Times with a sub-millisecond part in another zone, as clocks hand
	// them out: the store keeps UTC milliseconds.
	zone := time.FixedZone("CET", 3600)
	at := time.Date(2026, 12, 1, 12, 0, 0, 400_000, zone)
	stored := func(x time.Time) time.Time { return time.UnixMilli(x.UnixMilli()).UTC() }
	trigger := func(id, owner string, kind domain.TriggerKind, next *time.Time, enabled bool) domain.Trigger {
		tr := domain.Trigger{ID: id, OwnerID: owner, TriggerSpec: domain.TriggerSpec{Name: "n-" + id, Kind: kind, Target: domain.TargetAgent,
			AgentConfigID: "agent-1", SessionID: sessionID, Brief: "brief " + id, Enabled: enabled},
			NextFireAt: next, CreatedAt: at, UpdatedAt: at}
		if kind == domain.TriggerCron {
			tr.Schedule = "*/5 * * * *"
		} else {
			tr.SealedSecret = "secret-" + id
		}
		return tr
	}
	insert := func(tr domain.Trigger, max int) error {
		t.Helper()
		return s.InsertTrigger(ctx, tr, max)
	}
	find := func(id string) domain.Trigger {
		t.Helper()
		got, err := s.FindTrigger(ctx, id)
		if err != nil {
			t.Fatalf("find %s: %v", id, err)
		}
		return got
	}
	ids := func(list []domain.Trigger, err error) []string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		out := []string{}
		for _, tr := range list {
			out = append(out, tr.ID)
		}
		return out
	}
	ptr := func(x time.Time) *time.Time { return &x }

	// Round trip: every field back, times as stored.
	first := trigger("t1", "ann", domain.TriggerCron, ptr(at.Add(time.Hour)), true)
	first.LastFiredAt, first.LastError, first.LastStartedID = ptr(at.Add(-time.Hour)), "refused", "run-0"
	if err := insert(first, 3); err != nil {
		t.Fatal(err)
	}
	want := first
	want.NextFireAt, want.LastFiredAt = ptr(stored(*first.NextFireAt)), ptr(stored(*first.LastFiredAt))
	want.CreatedAt, want.UpdatedAt = stored(at), stored(at)
	if got := find("t1"); !reflect.DeepEqual(got, want) {
		t.Fatalf("read back\n%+v\nwant\n%+v", got, want)
	}
	if _, err := s.FindTrigger(ctx, "nope"); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("a missing trigger: %v, want not_found", err)
	}
	// A read is the caller's copy: changing it changes nothing stored.
	copied := find("t1")
	*copied.NextFireAt, *copied.LastFiredAt = at.Add(time.Minute), at.Add(time.Minute)
	if got := find("t1"); !reflect.DeepEqual(got, want) {
		t.Fatalf("a caller's change to a read reached the store:\n%+v", got)
	}

	// The cap counts the owner's triggers, whatever their kind; a taken id
	// is conflict.
	for _, tr := range []domain.Trigger{
		trigger("t2", "ann", domain.TriggerWebhook, nil, true),
		trigger("t3", "ann", domain.TriggerCron, ptr(at), true),
		trigger("t4", "bob", domain.TriggerCron, ptr(at), true),
		trigger("t5", "bob", domain.TriggerCron, ptr(at.Add(-time.Minute)), false),
		trigger("t6", "bob", domain.TriggerCron, ptr(at.Add(2*time.Hour)), true),
	} {
		if err := insert(tr, 3); err != nil {
			t.Fatalf("insert %s: %v", tr.ID, err)
		}
	}
	if err := insert(trigger("t7", "ann", domain.TriggerWebhook, nil, true), 3); errs.CodeOf(err) != errs.Conflict {
		t.Fatalf("past the cap: %v, want conflict", err)
	}
	if err := insert(trigger("t1", "cy", domain.TriggerWebhook, nil, true), 3); errs.CodeOf(err) != errs.Conflict {
		t.Fatalf("a taken id: %v, want conflict", err)
	}
	if _, err := s.FindTrigger(ctx, "t7"); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("a refused insert stored a trigger: %v", err)
	}

	// Listings: newest (largest id) first.
	if got := ids(s.ListTriggers(ctx, "ann")); !reflect.DeepEqual(got, []string{"t3", "t2", "t1"}) {
		t.Fatalf("ann's triggers = %v", got)
	}
	if got := ids(s.ListTriggers(ctx, "")); !reflect.DeepEqual(got, []string{"t6", "t5", "t4", "t3", "t2", "t1"}) {
		t.Fatalf("every trigger = %v", got)
	}
	if got := ids(s.ListTriggers(ctx, "nobody")); len(got) != 0 {
		t.Fatalf("no one's triggers = %v", got)
	}

	// Due cron triggers: enabled ones only, due inclusive (to the
	// millisecond), by next fire time then id.
	if got := ids(s.CronTriggers(ctx, ptr(at.Add(time.Hour)))); !reflect.DeepEqual(got, []string{"t3", "t4", "t1"}) {
		t.Fatalf("due within the hour = %v", got)
	}
	if got := ids(s.CronTriggers(ctx, ptr(at.Add(-time.Millisecond)))); len(got) != 0 {
		t.Fatalf("due before the first tick = %v", got)
	}
	if got := ids(s.CronTriggers(ctx, nil)); !reflect.DeepEqual(got, []string{"t3", "t4", "t1", "t6"}) {
		t.Fatalf("every enabled cron trigger = %v", got)
	}

	// A tick is claimed once among racers; a stale, disabled, webhook or
	// missing trigger claims nothing, with no error.
	next := at.Add(5 * time.Minute)
	won := make([]bool, Racers)
	failures := make([]error, Racers)
	Race(Racers, func(i int) { won[i], failures[i] = s.ClaimTick(ctx, "t3", at, next) })
	winners := 0
	for i := range Racers {
		if failures[i] != nil {
			t.Fatalf("claim %d: %v", i, failures[i])
		}
		if won[i] {
			winners++
		}
	}
	if winners != 1 {
		t.Fatalf("%d claims won one tick", winners)
	}
	if got := find("t3"); got.NextFireAt == nil || !got.NextFireAt.Equal(stored(next)) || got.NextFireAt.Location() != time.UTC {
		t.Fatalf("the claimed trigger's next tick = %v, want %v", got.NextFireAt, stored(next))
	}
	for _, c := range []struct {
		id  string
		was time.Time
	}{{"t3", at}, {"t5", at.Add(-time.Minute)}, {"t2", at}, {"nope", at}} {
		if ok, err := s.ClaimTick(ctx, c.id, c.was, next); ok || err != nil {
			t.Fatalf("claim %s at %v = %v, %v; want false, nil", c.id, c.was, ok, err)
		}
	}
	// The claim compares what is stored: the same millisecond claims.
	if ok, err := s.ClaimTick(ctx, "t4", at.Add(500*time.Microsecond), next); !ok || err != nil {
		t.Fatalf("a claim within the stored millisecond = %v, %v", ok, err)
	}

	// A fire's record, and an update that keeps it.
	if err := s.RecordFire(ctx, "t1", at.Add(time.Minute), "", "run-1"); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordFire(ctx, "nope", at, "x", ""); err != nil {
		t.Fatalf("recording the fire of a trigger gone: %v, want nil", err)
	}
	if got := find("t1"); got.LastFiredAt == nil || !got.LastFiredAt.Equal(stored(at.Add(time.Minute))) || got.LastError != "" || got.LastStartedID != "run-1" {
		t.Fatalf("after a fire = %+v", got)
	}
	edit := find("t1")
	edit.OwnerID, edit.CreatedAt = "mallory", at.Add(time.Hour)
	edit.LastFiredAt, edit.LastError, edit.LastStartedID = nil, "forged", "forged"
	edit.Name, edit.Enabled, edit.Schedule, edit.NextFireAt, edit.UpdatedAt = "renamed", false, "0 * * * *", nil, at.Add(time.Hour)
	if err := s.UpdateTrigger(ctx, edit); err != nil {
		t.Fatal(err)
	}
	got := find("t1")
	if got.OwnerID != "ann" || !got.CreatedAt.Equal(stored(at)) || got.LastFiredAt == nil || got.LastError != "" || got.LastStartedID != "run-1" {
		t.Fatalf("an update moved the owner, creation or last fire: %+v", got)
	}
	if got.Name != "renamed" || got.Enabled || got.Schedule != "0 * * * *" || got.NextFireAt != nil || !got.UpdatedAt.Equal(stored(at.Add(time.Hour))) {
		t.Fatalf("an update did not store the spec: %+v", got)
	}
	if got := ids(s.CronTriggers(ctx, nil)); !reflect.DeepEqual(got, []string{"t3", "t4", "t6"}) {
		t.Fatalf("the enabled cron triggers once t1 is disabled = %v", got)
	}
	edit.ID = "nope"
	if err := s.UpdateTrigger(ctx, edit); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("updating a missing trigger: %v, want not_found", err)
	}

	// A delete frees a place under the cap.
	if err := s.DeleteTrigger(ctx, "t1"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteTrigger(ctx, "t1"); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("a second delete: %v, want not_found", err)
	}
	if err := insert(trigger("t7", "ann", domain.TriggerWebhook, nil, true), 3); err != nil {
		t.Fatalf("an insert under the cap again: %v", err)
	}

	// Deleting a session deletes the triggers targeting it, and only them.
	other := stores.NewSession(t, "other").ID
	moved := trigger("t8", "cy", domain.TriggerCron, ptr(at), true)
	moved.SessionID = other
	if err := insert(moved, 3); err != nil {
		t.Fatal(err)
	}
	if err := stores.Sessions.DeleteSession(ctx, other); err != nil {
		t.Fatal(err)
	}
	if _, err := s.FindTrigger(ctx, "t8"); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("the trigger of a deleted session: %v, want not_found", err)
	}
	if got := ids(s.ListTriggers(ctx, "")); !reflect.DeepEqual(got, []string{"t7", "t6", "t5", "t4", "t3", "t2"}) {
		t.Fatalf("the triggers of the sessions left = %v", got)
	}
}
