package skills_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/skills"
	"github.com/agents-server/agents-server/ports"
	"github.com/agents-server/agents-server/ports/porttest"
)

func doc(name, desc string) string {
	return "---\nname: " + name + "\ndescription: " + desc + "\n---\n# " + name + "\n"
}

var (
	ann   = domain.Principal{User: domain.User{ID: "ann", Role: domain.RoleMember}}
	bob   = domain.Principal{User: domain.User{ID: "bob", Role: domain.RoleMember}}
	admin = domain.Principal{User: domain.User{ID: "root", Role: domain.RoleAdmin}}
)

func setup(t *testing.T) (*skills.Service, *porttest.ConfigStore) {
	store := &porttest.ConfigStore{}
	return skills.NewService(store, &porttest.IDs{}, porttest.NewClock(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))), store
}

func TestSkillsAreReadFromTheirDocumentAndScoped(t *testing.T) {
	svc, _ := setup(t)
	ctx := context.Background()
	k, err := svc.Create(ctx, ann, "", doc("release", "How we cut a release"))
	if err != nil || k.Name != "release" || k.Description != "How we cut a release" || k.Scope != domain.ScopePrivate || k.ModelName() != "release" {
		t.Fatalf("created %+v, %v", k, err)
	}
	if _, err := svc.Create(ctx, ann, "", "# no frontmatter"); !strings.Contains(errs.FieldsOf(err)["content"], "no frontmatter") {
		t.Fatalf("a document without frontmatter: %v", err)
	}
	if _, err := svc.Create(ctx, ann, domain.ScopeGlobal, doc("x", "y")); errs.CodeOf(err) != errs.Forbidden {
		t.Fatalf("a member's global skill: %v", err)
	}
	if _, err := svc.Create(ctx, ann, "", doc("Release", "again")); errs.CodeOf(err) != errs.Conflict {
		t.Fatalf("the same name twice in one scope: %v", err)
	}
	if _, err := svc.Create(ctx, bob, "", doc("release", "bob's own")); err != nil {
		t.Fatalf("another owner's private skill of the same name: %v", err)
	}
	if _, err := svc.Get(ctx, bob, k.ID); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("bob reads ann's private skill: %v", err)
	}
	// An edit re-reads the frontmatter.
	k, err = svc.Update(ctx, ann, k.ID, doc("release-v2", "Cutting a release, revised"))
	if err != nil || k.Name != "release-v2" || k.Detached {
		t.Fatalf("updated %+v, %v", k, err)
	}
	if _, err := svc.Update(ctx, bob, k.ID, doc("mine", "now")); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("bob edits ann's skill: %v", err)
	}
	if k, err = svc.SetScope(ctx, admin, k.ID, domain.ScopeGlobal); err != nil || k.Scope != domain.ScopeGlobal {
		t.Fatalf("published %+v, %v", k, err)
	}
}

func TestAnEditedImportDetachesAndMovesWithItsGroupOnly(t *testing.T) {
	svc, store := setup(t)
	ctx := context.Background()
	imported := domain.Skill{ID: "imp", Ownership: domain.Ownership{Scope: domain.ScopePrivate, OwnerID: "ann"}, Name: "review",
		Description: "d", Content: doc("review", "d"), SourceRepo: "https://github.com/acme/tools", RepoLabel: "acme/tools"}
	store.InConfigTx(ctx, func(tx ports.ConfigTx) error { return tx.InsertSkill(ctx, imported) })
	if k, err := svc.Update(ctx, ann, "imp", imported.Content); err != nil || k.Detached {
		t.Fatalf("an unchanged save detached it: %+v %v", k, err)
	}
	k, err := svc.Update(ctx, ann, "imp", doc("review", "our own take"))
	if err != nil || !k.Detached || k.ModelName() != "acme/tools:review" {
		t.Fatalf("edited import %+v, %v", k, err)
	}
	if _, err := svc.SetScope(ctx, admin, "imp", domain.ScopeGlobal); errs.CodeOf(err) != errs.Validation {
		t.Fatalf("an imported skill moved alone: %v", err)
	}
}

func TestAnAgentsSelectionNarrowsItsSkills(t *testing.T) {
	svc, store := setup(t)
	ctx := context.Background()
	a, _ := svc.Create(ctx, ann, "", doc("alpha", "a"))
	b, _ := svc.Create(ctx, ann, "", doc("beta", "b"))
	g, _ := svc.Create(ctx, admin, domain.ScopeGlobal, doc("gamma", "g"))
	theirs, _ := svc.Create(ctx, bob, "", doc("delta", "d"))
	agent := func(sel []string) domain.Agent {
		return domain.Agent{ID: "ag", Ownership: domain.Ownership{Scope: domain.ScopePrivate, OwnerID: "ann"},
			AgentSpec: domain.AgentSpec{Name: "helper", Skills: sel}}
	}
	modelNames := func(sel []string) string {
		list, err := svc.ForAgent(ctx, agent(sel))
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, k := range list {
			out = append(out, k.ModelName())
		}
		return strings.Join(out, ",")
	}
	if got := modelNames(nil); got != "alpha,beta,gamma" {
		t.Fatalf("null selection: %s", got)
	}
	if got := modelNames([]string{}); got != "" {
		t.Fatalf("empty selection: %s", got)
	}
	if got := modelNames([]string{b.ID, g.ID, theirs.ID}); got != "beta,gamma" {
		t.Fatalf("a list (with someone else's private skill): %s", got)
	}
	for id, want := range map[string]bool{a.ID: true, g.ID: true, theirs.ID: false, "nope": false} {
		if ok, err := svc.Exists(ctx, agent(nil).Ownership, id); ok != want || err != nil {
			t.Errorf("Exists(%s) = %v %v, want %v", id, ok, err, want)
		}
	}
	// A selected skill cannot be deleted from under its agent, nor a
	// global one made private under a global agent.
	global := domain.Agent{ID: "gag", Ownership: domain.Ownership{Scope: domain.ScopeGlobal, OwnerID: "root"},
		AgentSpec: domain.AgentSpec{Name: "shared", Skills: []string{g.ID}}}
	store.InConfigTx(ctx, func(tx ports.ConfigTx) error { return tx.InsertAgent(ctx, global) })
	if err := svc.Delete(ctx, admin, g.ID); errs.CodeOf(err) != errs.Conflict || !strings.Contains(errs.MessageOf(err), `"shared"`) {
		t.Fatalf("deleting a selected skill: %v", err)
	}
	if _, err := svc.SetScope(ctx, admin, g.ID, domain.ScopePrivate); errs.CodeOf(err) != errs.Conflict {
		t.Fatalf("unpublishing under a global agent: %v", err)
	}
	if err := svc.Delete(ctx, ann, a.ID); err != nil {
		t.Fatalf("deleting an unselected skill: %v", err)
	}
}
