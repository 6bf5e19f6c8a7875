package storetest

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// UserStores is one database as the user and token contracts use it.
type UserStores struct {
	Users ports.UserStore
	// Tokens is the same database's tokens; nil for a fake that keeps
	// users only (the cases about tokens are then skipped).
	Tokens ports.TokenStore
}

// userEpoch is when the user contract's rows happen: a time with a
// sub-millisecond part in another zone, as a clock hands it out.
var userEpoch = time.Date(2026, 12, 1, 12, 0, 0, 700_000, time.FixedZone("CET", 3600))

// storedAt is x as a store keeps it: UTC, whole milliseconds.
func storedAt(x time.Time) time.Time { return time.UnixMilli(x.UnixMilli()).UTC() }

// Users is the contract of ports.UserStore: usernames unique by
// domain.UsernameKey (case and compatibility spellings fold; conflict),
// ids unique, one bootstrap admin at most, listings by id, an update that
// stores only the password, role, disabled flag and update time and that
// sees the other active admins in its transaction (so two admins demoting
// each other cannot both pass), a refused change or check that writes
// nothing, tokens revoked by disabling and deleted with their user, and
// times kept as UTC milliseconds. s must hold no users.
func Users(t *testing.T, s UserStores) {
	ctx := context.Background()
	users := s.Users
	user := func(id, name string, role domain.Role, at time.Time) domain.User {
		return domain.User{ID: id, Username: name, PasswordHash: "hash-" + id, Role: role, CreatedAt: at, UpdatedAt: at}
	}
	create := func(u domain.User) error {
		t.Helper()
		return users.CreateUser(ctx, u)
	}
	find := func(id string) domain.User {
		t.Helper()
		u, err := users.FindUserByID(ctx, id)
		if err != nil {
			t.Fatalf("find %s: %v", id, err)
		}
		return u
	}
	listed := func() []string {
		t.Helper()
		list, err := users.ListUsers(ctx)
		if err != nil || list == nil {
			t.Fatalf("list = %#v, %v; want a non-nil list", list, err)
		}
		out := []string{}
		for _, u := range list {
			out = append(out, u.ID)
		}
		return out
	}

	if got := listed(); len(got) != 0 {
		t.Fatalf("an empty store lists %v", got)
	}
	if _, err := users.FindBootstrapUser(ctx); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("no bootstrap user: %v, want not_found", err)
	}
	// Ids do not follow creation times here: the listing is by id.
	root := user("u2", "Root", domain.RoleAdmin, userEpoch)
	root.Bootstrap = true
	if err := create(root); err != nil {
		t.Fatal(err)
	}
	want := root
	want.CreatedAt, want.UpdatedAt = storedAt(userEpoch), storedAt(userEpoch)
	if got := find("u2"); !reflect.DeepEqual(got, want) {
		t.Fatalf("read back\n%+v\nwant\n%+v", got, want)
	}
	for _, c := range []struct {
		what string
		u    domain.User
	}{
		{"the username in another case", user("u9", "ROOT", domain.RoleMember, userEpoch)},
		{"the username in compatibility characters", user("u9", "ｒｏｏｔ", domain.RoleMember, userEpoch)},
		{"a taken id", user("u2", "other", domain.RoleMember, userEpoch)},
		{"a second bootstrap admin", func() domain.User {
			u := user("u9", "second", domain.RoleAdmin, userEpoch)
			u.Bootstrap = true
			return u
		}()},
	} {
		if err := create(c.u); errs.CodeOf(err) != errs.Conflict {
			t.Fatalf("%s: %v, want conflict", c.what, err)
		}
	}
	if err := create(user("u1", "mo", domain.RoleMember, userEpoch.Add(time.Hour))); err != nil {
		t.Fatal(err)
	}
	if err := create(user("u3", "ann", domain.RoleAdmin, userEpoch.Add(-time.Hour))); err != nil {
		t.Fatal(err)
	}
	if got := listed(); !reflect.DeepEqual(got, []string{"u1", "u2", "u3"}) {
		t.Fatalf("the users by id = %v", got)
	}
	for _, name := range []string{"root", "ROOT", "ｒｏｏｔ"} {
		if u, err := users.FindUserByUsername(ctx, name); err != nil || u.ID != "u2" {
			t.Fatalf("by the name %q = %+v, %v", name, u, err)
		}
	}
	if _, err := users.FindUserByUsername(ctx, "nobody"); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("an unknown name: %v, want not_found", err)
	}
	if _, err := users.FindUserByID(ctx, "nope"); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("an unknown id: %v, want not_found", err)
	}
	if b, err := users.FindBootstrapUser(ctx); err != nil || b.ID != "u2" {
		t.Fatalf("the bootstrap user = %+v, %v", b, err)
	}

	// An update sees the OTHER active admins, and stores the password,
	// role, disabled flag and update time only; it returns the user as the
	// change left it.
	var seen int
	later := userEpoch.Add(2 * time.Hour)
	got, err := users.UpdateUser(ctx, "u1", func(u *domain.User, others int) error {
		seen = others
		u.Role, u.PasswordHash, u.UpdatedAt = domain.RoleAdmin, "new-hash", later
		u.Username, u.Bootstrap, u.CreatedAt = "renamed", true, later
		return nil
	})
	if err != nil || seen != 2 {
		t.Fatalf("an update saw %d other active admins, %v; want 2", seen, err)
	}
	if got.Username != "renamed" || !got.UpdatedAt.Equal(later) {
		t.Fatalf("the update returned %+v, not the user as the change left it", got)
	}
	stored := find("u1")
	if stored.Role != domain.RoleAdmin || stored.PasswordHash != "new-hash" || !stored.UpdatedAt.Equal(storedAt(later)) {
		t.Fatalf("the update did not store the role, password or time: %+v", stored)
	}
	if stored.Username != "mo" || stored.Bootstrap || !stored.CreatedAt.Equal(storedAt(userEpoch.Add(time.Hour))) {
		t.Fatalf("an update stored a rename, a bootstrap flag or a creation time: %+v", stored)
	}
	if _, err := users.FindUserByUsername(ctx, "renamed"); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("the name an update tried: %v, want not_found", err)
	}
	refusal := errs.E(errs.Conflict, "refused")
	if _, err := users.UpdateUser(ctx, "u1", func(u *domain.User, _ int) error {
		u.Role, u.Disabled = domain.RoleMember, true
		return refusal
	}); !errors.Is(err, refusal) {
		t.Fatalf("a refused change = %v, want its own error", err)
	}
	if got := find("u1"); got.Role != domain.RoleAdmin || got.Disabled {
		t.Fatalf("a refused change was stored: %+v", got)
	}
	if _, err := users.UpdateUser(ctx, "nope", func(*domain.User, int) error { return nil }); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("updating an unknown user: %v, want not_found", err)
	}

	// A disabled admin is no active admin; disabling revokes the tokens.
	token := func(id, userID string) domain.Token {
		return domain.Token{ID: id, UserID: userID, Kind: domain.TokenPersonal, Hash: "hash-" + id, CreatedAt: userEpoch, LastUsedAt: userEpoch}
	}
	if s.Tokens != nil {
		for _, tk := range []domain.Token{token("k1", "u3"), token("k2", "u1")} {
			if err := s.Tokens.CreateToken(ctx, tk); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := users.UpdateUser(ctx, "u3", func(u *domain.User, _ int) error { u.Disabled = true; return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := users.UpdateUser(ctx, "u2", func(_ *domain.User, others int) error { seen = others; return nil }); err != nil || seen != 1 {
		t.Fatalf("beside a disabled admin, an update saw %d others, %v; want 1", seen, err)
	}
	if s.Tokens != nil {
		if list, err := s.Tokens.ListTokens(ctx, "u3"); err != nil || len(list) != 0 {
			t.Fatalf("a disabled user keeps tokens %+v, %v", list, err)
		}
		if list, _ := s.Tokens.ListTokens(ctx, "u1"); len(list) != 1 {
			t.Fatalf("disabling one user revoked another's tokens: %+v", list)
		}
	}

	// Two admins demoting each other at once: one passes, the last admin
	// stays. (u2 and u1 are the active admins now.)
	demote := func(u *domain.User, others int) error {
		if others == 0 {
			return errs.E(errs.Conflict, "%s is the last active admin", u.ID)
		}
		u.Role = domain.RoleMember
		return nil
	}
	for round := range 4 {
		failures := make([]error, 2)
		ids := []string{"u1", "u2"}
		Race(2, func(i int) { _, failures[i] = users.UpdateUser(ctx, ids[i], demote) })
		passed := 0
		for _, err := range failures {
			switch {
			case err == nil:
				passed++
			case errs.CodeOf(err) != errs.Conflict:
				t.Fatalf("round %d: a demotion: %v", round, err)
			}
		}
		if passed != 1 {
			t.Fatalf("round %d: %d of 2 demotions passed", round, passed)
		}
		for _, id := range ids { // both admins again for the next round
			if _, err := users.UpdateUser(ctx, id, func(u *domain.User, _ int) error { u.Role = domain.RoleAdmin; return nil }); err != nil {
				t.Fatal(err)
			}
		}
	}

	// A delete runs its check in the transaction; a refused check deletes
	// nothing. The user goes with their tokens, and their name is free.
	if err := users.DeleteUser(ctx, "u1", "u2", func(u domain.User, others int) error {
		if u.ID != "u1" || others != 1 {
			t.Errorf("the check saw %s with %d other active admins; want u1 with 1", u.ID, others)
		}
		return refusal
	}); !errors.Is(err, refusal) {
		t.Fatalf("a refused delete = %v, want the check's error", err)
	}
	find("u1")
	if err := users.DeleteUser(ctx, "u1", "u2", func(domain.User, int) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := users.FindUserByID(ctx, "u1"); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("a deleted user: %v, want not_found", err)
	}
	if s.Tokens != nil {
		if _, _, err := s.Tokens.FindTokenByID(ctx, "k2"); errs.CodeOf(err) != errs.NotFound {
			t.Fatalf("a deleted user's token: %v, want not_found", err)
		}
	}
	if err := users.DeleteUser(ctx, "u1", "u2", func(domain.User, int) error { return nil }); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("deleting twice: %v, want not_found", err)
	}
	if err := create(user("u4", "MO", domain.RoleMember, userEpoch)); err != nil {
		t.Fatalf("a deleted user's name taken again: %v", err)
	}
	if got := listed(); !reflect.DeepEqual(got, []string{"u2", "u3", "u4"}) {
		t.Fatalf("the users after a delete = %v", got)
	}
}
