package scoped_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/scoped"
	"github.com/agents-server/agents-server/ports"
	"github.com/agents-server/agents-server/ports/porttest"
)

var epoch = time.Date(2026, 6, 7, 8, 9, 10, 0, time.UTC)

// skillRows drives the helper over the in-memory configuration store's
// skills, as the skills service does.
func skillRows(t *testing.T, seed ...domain.Skill) (*porttest.ConfigStore, scoped.Rows[domain.Skill, ports.SkillTx]) {
	t.Helper()
	store := &porttest.ConfigStore{}
	ctx := context.Background()
	for _, k := range seed {
		if err := store.InSkillTx(ctx, func(tx ports.SkillTx) error { return tx.InsertSkill(ctx, k) }); err != nil {
			t.Fatal(err)
		}
	}
	return store, scoped.Rows[domain.Skill, ports.SkillTx]{InTx: store.InSkillTx, Find: ports.SkillTx.FindSkill,
		Insert: ports.SkillTx.InsertSkill, Update: ports.SkillTx.UpdateSkill, Delete: ports.SkillTx.DeleteSkill}
}

func skill(id, name string) domain.Skill {
	return domain.Skill{ID: id, Ownership: domain.Ownership{Scope: domain.ScopePrivate, OwnerID: "u1"}, Name: name, Content: name,
		CreatedAt: epoch, UpdatedAt: epoch}
}

func storedName(t *testing.T, store *porttest.ConfigStore, id string) string {
	t.Helper()
	k, err := store.FindSkill(context.Background(), id)
	if err != nil {
		t.Fatalf("find %s: %v", id, err)
	}
	return k.Name
}

func TestChangeWritesTheEditedRowBackOnlyWhenAsked(t *testing.T) {
	ctx := context.Background()
	store, rows := skillRows(t, skill("k1", "before"))
	out, err := rows.Change(ctx, "k1", func(_ ports.SkillTx, k domain.Skill) (domain.Skill, bool, error) {
		k.Name = "kept in memory"
		return k, false, nil
	})
	if err != nil || out.Name != "kept in memory" {
		t.Fatalf("an unwritten change returned %q, %v; want the edited row", out.Name, err)
	}
	if got := storedName(t, store, "k1"); got != "before" {
		t.Fatalf("a change edit said not to write was stored: %q", got)
	}
	out, err = rows.Change(ctx, "k1", func(_ ports.SkillTx, k domain.Skill) (domain.Skill, bool, error) {
		k.Name = "after"
		return k, true, nil
	})
	if err != nil || out.Name != "after" || storedName(t, store, "k1") != "after" {
		t.Fatalf("a written change: %q, %v; stored %q", out.Name, err, storedName(t, store, "k1"))
	}
}

func TestChangeRefusedRollsBackAndReturnsNoRow(t *testing.T) {
	ctx := context.Background()
	store, rows := skillRows(t, skill("k1", "before"))
	refused := errs.E(errs.Forbidden, "no")
	out, err := rows.Change(ctx, "k1", func(tx ports.SkillTx, k domain.Skill) (domain.Skill, bool, error) {
		// A write the edit made before refusing goes with the transaction.
		if err := tx.InsertSkill(ctx, skill("k2", "side")); err != nil {
			t.Fatal(err)
		}
		k.Name = "after"
		return k, true, refused
	})
	if !errors.Is(err, refused) || out.ID != "" {
		t.Fatalf("a refused change: %+v, %v; want the zero row and the refusal", out, err)
	}
	if storedName(t, store, "k1") != "before" {
		t.Fatal("a refused change was written")
	}
	if _, err := store.FindSkill(ctx, "k2"); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("a write inside a refused change was kept: %v", err)
	}
	called := false
	_, err = rows.Change(ctx, "nope", func(_ ports.SkillTx, k domain.Skill) (domain.Skill, bool, error) {
		called = true
		return k, true, nil
	})
	if errs.CodeOf(err) != errs.NotFound || called {
		t.Fatalf("a missing row: %v (edit called: %v), want not_found before the edit", err, called)
	}
}

func TestRemoveDeletesOnlyWhatTheCheckLetsGo(t *testing.T) {
	ctx := context.Background()
	store, rows := skillRows(t, skill("k1", "one"))
	held := errs.E(errs.Conflict, "still used")
	if err := rows.Remove(ctx, "k1", func(_ ports.SkillTx, k domain.Skill) error { return held }); !errors.Is(err, held) {
		t.Fatalf("a refused remove: %v", err)
	}
	if storedName(t, store, "k1") != "one" {
		t.Fatal("a refused remove deleted the row")
	}
	var seen domain.Skill
	if err := rows.Remove(ctx, "k1", func(_ ports.SkillTx, k domain.Skill) error { seen = k; return nil }); err != nil {
		t.Fatal(err)
	}
	if seen.Name != "one" {
		t.Fatalf("the check saw %+v, want the stored row", seen)
	}
	if _, err := store.FindSkill(ctx, "k1"); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("a removed row: %v, want not_found", err)
	}
	if err := rows.Remove(ctx, "k1", func(ports.SkillTx, domain.Skill) error { return nil }); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("removing a missing row: %v, want not_found", err)
	}
}

func TestAddStoresWhatPrepareCompletes(t *testing.T) {
	ctx := context.Background()
	store, rows := skillRows(t)
	bad := errs.Field("name", "no")
	if out, err := rows.Add(ctx, skill("k1", "draft"), func(_ ports.SkillTx, k domain.Skill) (domain.Skill, error) {
		return k, bad
	}); !errors.Is(err, bad) || out.ID != "" {
		t.Fatalf("a refused add: %+v, %v; want the zero row and the refusal", out, err)
	}
	if _, err := store.FindSkill(ctx, "k1"); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("a refused add stored the row: %v", err)
	}
	out, err := rows.Add(ctx, skill("k1", "draft"), func(_ ports.SkillTx, k domain.Skill) (domain.Skill, error) {
		k.Name = "final"
		return k, nil
	})
	if err != nil || out.Name != "final" || storedName(t, store, "k1") != "final" {
		t.Fatalf("an add: %q, %v; want the prepared row stored", out.Name, err)
	}
	if _, err := rows.Add(ctx, skill("k2", "final"), nil); errs.CodeOf(err) != errs.Conflict {
		t.Fatalf("a taken name: %v, want the store's conflict", err)
	}
}

func TestReadHidesARefusedRow(t *testing.T) {
	ctx := context.Background()
	store, _ := skillRows(t, skill("k1", "one"))
	hidden := errs.E(errs.NotFound, "skill not found")
	out, err := scoped.Read(ctx, "k1", store.FindSkill, func(domain.Skill) error { return hidden })
	if !errors.Is(err, hidden) || out.ID != "" {
		t.Fatalf("a refused read: %+v, %v; want the zero row", out, err)
	}
	if out, err := scoped.Read(ctx, "k1", store.FindSkill, func(domain.Skill) error { return nil }); err != nil || out.Name != "one" {
		t.Fatalf("an allowed read: %+v, %v", out, err)
	}
}

func TestOwnedIsPrivateUnlessAnAdminAsksForGlobal(t *testing.T) {
	member := domain.Principal{User: domain.User{ID: "u1", Role: domain.RoleMember}}
	admin := domain.Principal{User: domain.User{ID: "a1", Role: domain.RoleAdmin}}
	if o, err := scoped.Owned(member, "", "skill"); err != nil || o != (domain.Ownership{Scope: domain.ScopePrivate, OwnerID: "u1"}) {
		t.Fatalf("no scope: %+v, %v; want the caller's private row", o, err)
	}
	if _, err := scoped.Owned(member, domain.ScopeGlobal, "skill"); errs.CodeOf(err) != errs.Forbidden {
		t.Fatalf("a member's global row: %v, want forbidden", err)
	}
	if _, err := scoped.Owned(member, "team", "skill"); errs.CodeOf(err) != errs.Validation {
		t.Fatalf("an unknown scope: %v, want validation", err)
	}
	if o, err := scoped.Owned(admin, domain.ScopeGlobal, "skill"); err != nil || o != (domain.Ownership{Scope: domain.ScopeGlobal, OwnerID: "a1"}) {
		t.Fatalf("an admin's global row: %+v, %v", o, err)
	}
}

func TestVisibleListsOthersSharedRowsFirst(t *testing.T) {
	ctx := context.Background()
	mine := skill("k1", "mine")
	shared := skill("k2", "shared")
	shared.Ownership = domain.Ownership{Scope: domain.ScopeGlobal, OwnerID: "u2"}
	hidden := skill("k3", "hidden")
	hidden.OwnerID = "u2"
	store, _ := skillRows(t, mine, shared, hidden)
	member := domain.Principal{User: domain.User{ID: "u1", Role: domain.RoleMember}}
	list, err := scoped.Visible(ctx, member, store.ListSkills, func(k domain.Skill) domain.Ownership { return k.Ownership })
	if err != nil || len(list) != 2 || list[0].ID != "k2" || list[1].ID != "k1" {
		t.Fatalf("visible = %+v, %v; want k2 (shared) then k1 (own)", list, err)
	}
}
