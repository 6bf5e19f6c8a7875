package porttest_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports/porttest"
)

// epoch is when the stored rows of these tests happen.
var epoch = time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC)

// The trigger fake's promises the trigger service leans on: the per-owner
// cap, due cron triggers in tick order, one winner per tick, an update
// that keeps the record of the last fire.
func TestTriggerStoreClaimsATickOnce(t *testing.T) {
	ctx := context.Background()
	s := &porttest.TriggerStore{}
	at := epoch.Add(time.Hour)
	cron := func(id string, next time.Time, enabled bool) domain.Trigger {
		return domain.Trigger{ID: id, OwnerID: "u", TriggerSpec: domain.TriggerSpec{Kind: domain.TriggerCron, Enabled: enabled}, NextFireAt: &next}
	}
	for _, tr := range []domain.Trigger{cron("t1", at, true), cron("t2", epoch, true), cron("t3", epoch, false), cron("t4", at.Add(time.Hour), true)} {
		if err := s.InsertTrigger(ctx, tr, 4); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.InsertTrigger(ctx, cron("t5", at, true), 4); errs.CodeOf(err) != errs.Conflict {
		t.Fatalf("past the cap: %v", err)
	}
	due, _ := s.CronTriggers(ctx, &at)
	if len(due) != 2 || due[0].ID != "t2" || due[1].ID != "t1" {
		t.Fatalf("due = %+v", due)
	}
	if all, _ := s.CronTriggers(ctx, nil); len(all) != 3 {
		t.Fatalf("every enabled cron trigger = %d", len(all))
	}
	var wins atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if won, err := s.ClaimTick(ctx, "t1", at, at.Add(time.Hour)); err == nil && won {
				wins.Add(1)
			}
		})
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Fatalf("%d claims won one tick", wins.Load())
	}
	if err := s.RecordFire(ctx, "t1", at, "refused", ""); err != nil {
		t.Fatal(err)
	}
	tr, _ := s.FindTrigger(ctx, "t1")
	tr.Name, tr.LastError = "renamed", ""
	if err := s.UpdateTrigger(ctx, tr); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.FindTrigger(ctx, "t1"); got.Name != "renamed" || got.LastError != "refused" || got.LastFiredAt == nil {
		t.Fatalf("updated = %+v", got)
	}
	if list, _ := s.ListTriggers(ctx, "u"); len(list) != 4 || list[0].ID != "t4" {
		t.Fatalf("list = %+v", list)
	}
	if err := s.DeleteTrigger(ctx, "t1"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteTrigger(ctx, "t1"); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("a second delete: %v", err)
	}
}

// The user fake folds usernames as the real store does and counts the
// other active admins for an update.
func TestUserStoreFoldsUsernames(t *testing.T) {
	ctx := context.Background()
	s := &porttest.UserStore{}
	if err := s.CreateUser(ctx, domain.User{ID: "a", Username: "Ada", Role: domain.RoleAdmin, CreatedAt: epoch}); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateUser(ctx, domain.User{ID: "b", Username: "ADA"}); errs.CodeOf(err) != errs.Conflict {
		t.Fatalf("a folded duplicate: %v", err)
	}
	if err := s.CreateUser(ctx, domain.User{ID: "b", Username: "bob", Role: domain.RoleAdmin, CreatedAt: epoch.Add(time.Second)}); err != nil {
		t.Fatal(err)
	}
	if u, err := s.FindUserByUsername(ctx, "ada"); err != nil || u.ID != "a" {
		t.Fatalf("by name = %+v, %v", u, err)
	}
	var others int
	if _, err := s.UpdateUser(ctx, "a", func(u *domain.User, n int) error { others, u.Disabled = n, true; return nil }); err != nil || others != 1 {
		t.Fatalf("update saw %d other admins, %v", others, err)
	}
	if err := s.DeleteUser(ctx, "b", "", func(u domain.User, n int) error { others = n; return nil }); err != nil || others != 0 {
		t.Fatalf("delete saw %d other active admins, %v", others, err)
	}
	if list, _ := s.ListUsers(ctx); len(list) != 1 || !list[0].Disabled {
		t.Fatalf("users = %+v", list)
	}
	if _, err := s.FindBootstrapUser(ctx); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("no bootstrap user: %v", err)
	}
}
