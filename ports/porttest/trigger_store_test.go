package porttest_test

import (
	"context"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports/porttest"
	"github.com/agents-server/agents-server/ports/storetest"
)

// epoch is when the stored rows of these tests happen.
var epoch = time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC)

// The trigger fake keeps the trigger contract the SQL store keeps.
func TestTriggerStoreKeepsTheTriggerContract(t *testing.T) {
	storetest.Triggers(t, &porttest.TriggerStore{}, "s1")
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
