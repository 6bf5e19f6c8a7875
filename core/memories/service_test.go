package memories_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/memories"
	"github.com/agents-server/agents-server/ports"
	"github.com/agents-server/agents-server/ports/porttest"
)

var (
	ann   = domain.Principal{User: domain.User{ID: "ann", Role: domain.RoleMember}}
	bob   = domain.Principal{User: domain.User{ID: "bob", Role: domain.RoleMember}}
	admin = domain.Principal{User: domain.User{ID: "root", Role: domain.RoleAdmin}}
	start = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
)

// world holds ann's private agent, root's shared agent and a global
// memory, the shapes every rule is about.
type world struct {
	svc    *memories.Service
	store  *porttest.ConfigStore
	clock  *porttest.Clock
	global domain.Memory
}

const (
	annsAgent   = "agent-ann"
	sharedAgent = "agent-shared"
)

func setup(t *testing.T) *world {
	t.Helper()
	ctx := context.Background()
	w := &world{store: &porttest.ConfigStore{}, clock: porttest.NewClock(start)}
	w.svc = memories.New(w.store, &porttest.IDs{}, w.clock)
	for _, a := range []domain.Agent{
		{ID: annsAgent, Ownership: domain.Ownership{Scope: domain.ScopePrivate, OwnerID: "ann"}, AgentSpec: domain.AgentSpec{Name: "ann's", Model: "m"}},
		{ID: sharedAgent, Ownership: domain.Ownership{Scope: domain.ScopeGlobal, OwnerID: "root"}, AgentSpec: domain.AgentSpec{Name: "shared", Model: "m"}},
	} {
		if err := w.store.InConfigTx(ctx, func(tx ports.ConfigTx) error { return tx.InsertAgent(ctx, a) }); err != nil {
			t.Fatal(err)
		}
	}
	var err error
	if w.global, err = w.svc.Create(ctx, admin, domain.Memory{Key: "house style", Content: "British spelling"}); err != nil {
		t.Fatal(err)
	}
	return w
}

func keys(ms []domain.Memory) []string {
	out := []string{}
	for _, m := range ms {
		out = append(out, m.Key)
	}
	return out
}

// TestAMemoryIsSeenWithItsAgent holds the listing and reading rules: the
// global memories and those of agents the caller sees; another's private
// agent's memories are absent, never forbidden.
func TestAMemoryIsSeenWithItsAgent(t *testing.T) {
	w := setup(t)
	ctx := context.Background()
	mine, err := w.svc.Create(ctx, ann, domain.Memory{AgentID: annsAgent, Key: "ann's note", Content: "x"})
	if err != nil || mine.ID == "" || !mine.CreatedAt.Equal(start) {
		t.Fatalf("ann writes her agent's memory: %+v, %v", mine, err)
	}
	if _, err := w.svc.Create(ctx, admin, domain.Memory{AgentID: sharedAgent, Key: "shared note"}); err != nil {
		t.Fatalf("an admin writes the shared agent's memory: %v", err)
	}

	for _, tc := range []struct {
		who     domain.Principal
		agentID string
		want    []string
	}{
		{ann, "", []string{"house style", "ann's note", "shared note"}},
		{bob, "", []string{"house style", "shared note"}},
		{admin, "", []string{"house style", "ann's note", "shared note"}},
		{ann, annsAgent, []string{"ann's note"}},
		{bob, sharedAgent, []string{"shared note"}},
	} {
		got, err := w.svc.List(ctx, tc.who, tc.agentID)
		if err != nil || !slices.Equal(keys(got), tc.want) {
			t.Errorf("%s lists %q: %q, %v; want %q", tc.who.User.ID, tc.agentID, keys(got), err, tc.want)
		}
	}
	if _, err := w.svc.List(ctx, bob, annsAgent); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("bob lists ann's private agent's memories: %v", err)
	}
	if _, err := w.svc.List(ctx, bob, "missing"); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("the memories of a missing agent: %v", err)
	}
	if got, err := w.svc.Get(ctx, ann, mine.ID); err != nil || got.Key != "ann's note" {
		t.Fatalf("ann reads her memory: %+v, %v", got, err)
	}
	if _, err := w.svc.Get(ctx, bob, mine.ID); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("bob reads ann's agent's memory: %v", err)
	}
	if got, err := w.svc.Get(ctx, bob, w.global.ID); err != nil || got.Content != "British spelling" {
		t.Fatalf("bob reads a global memory: %+v, %v", got, err)
	}
	if _, err := w.svc.Get(ctx, ann, "missing"); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("a missing memory: %v", err)
	}
}

// TestAMemoryIsWrittenWithItsScopesPermissions holds who may write which
// memory: admins the global ones, an agent's writers its own; an agent
// named in the body that the caller cannot see is a field error.
func TestAMemoryIsWrittenWithItsScopesPermissions(t *testing.T) {
	w := setup(t)
	ctx := context.Background()
	for _, tc := range []struct {
		what  string
		who   domain.Principal
		m     domain.Memory
		code  errs.Code
		field string
	}{
		{"a member writes a global memory", ann, domain.Memory{Key: "k"}, errs.Forbidden, ""},
		{"bob writes on ann's private agent", bob, domain.Memory{AgentID: annsAgent, Key: "k"}, errs.Validation, "agent_config_id"},
		{"a memory of a missing agent", ann, domain.Memory{AgentID: "missing", Key: "k"}, errs.Validation, "agent_config_id"},
		{"a member writes on the shared agent", ann, domain.Memory{AgentID: sharedAgent, Key: "k"}, errs.Forbidden, ""},
		{"an admin writes on ann's private agent", admin, domain.Memory{AgentID: annsAgent, Key: "k"}, errs.Forbidden, ""},
		{"no key", ann, domain.Memory{AgentID: annsAgent, Key: " "}, errs.Validation, "key"},
		{"a key of two lines", ann, domain.Memory{AgentID: annsAgent, Key: "a\nb"}, errs.Validation, "key"},
		{"a key over the bound", ann, domain.Memory{AgentID: annsAgent, Key: strings.Repeat("k", domain.MaxMemoryKeyLen+1)}, errs.Validation, "key"},
		{"content over the bound", ann, domain.Memory{AgentID: annsAgent, Key: "k", Content: strings.Repeat("x", domain.MaxMemoryContent+1)}, errs.Validation, "content"},
		{"a key taken in the scope", admin, domain.Memory{Key: "HOUSE STYLE"}, errs.Conflict, ""},
	} {
		_, err := w.svc.Create(ctx, tc.who, tc.m)
		if errs.CodeOf(err) != tc.code || (tc.field != "" && errs.FieldsOf(err)[tc.field] == "") {
			t.Errorf("%s: %v, want %s on %q", tc.what, err, tc.code, tc.field)
		}
	}
	if all, _ := w.svc.List(ctx, admin, ""); len(all) != 1 {
		t.Fatalf("refused writes were stored: %q", keys(all))
	}
	// The same key in another scope is another memory.
	if _, err := w.svc.Create(ctx, ann, domain.Memory{AgentID: annsAgent, Key: "house style"}); err != nil {
		t.Fatalf("a global memory's key on an agent: %v", err)
	}
}

// TestAScopeHoldsAtMostItsMaximum holds that a scope full of memories
// refuses one more, while another scope still takes it.
func TestAScopeHoldsAtMostItsMaximum(t *testing.T) {
	w := setup(t)
	ctx := context.Background()
	for i := range domain.MaxMemoriesPerScope {
		if _, err := w.svc.Create(ctx, ann, domain.Memory{AgentID: annsAgent, Key: fmt.Sprint("note ", i)}); err != nil {
			t.Fatalf("memory %d: %v", i, err)
		}
	}
	_, err := w.svc.Create(ctx, ann, domain.Memory{AgentID: annsAgent, Key: "one more"})
	if errs.CodeOf(err) != errs.Conflict || !strings.Contains(err.Error(), fmt.Sprint(domain.MaxMemoriesPerScope)) {
		t.Fatalf("one past the maximum: %v", err)
	}
	if _, err := w.svc.Create(ctx, admin, domain.Memory{Key: "one more"}); err != nil {
		t.Fatalf("another scope: %v", err)
	}
}

// TestAMemoryIsEditedAndDeletedInItsScope holds that an edit changes key
// and content only, never the scope, and that a memory the caller cannot
// see is absent to edit or delete.
func TestAMemoryIsEditedAndDeletedInItsScope(t *testing.T) {
	w := setup(t)
	ctx := context.Background()
	mine, _ := w.svc.Create(ctx, ann, domain.Memory{AgentID: annsAgent, Key: "note", Content: "v1"})
	w.clock.Advance(time.Minute)

	got, err := w.svc.Update(ctx, ann, mine.ID, domain.Memory{AgentID: annsAgent, Key: "renamed", Content: "v2"})
	if err != nil || got.Key != "renamed" || got.Content != "v2" || got.AgentID != annsAgent || !got.CreatedAt.Equal(start) || !got.UpdatedAt.Equal(w.clock.Now()) {
		t.Fatalf("updated %+v, %v", got, err)
	}
	if _, err := w.svc.Update(ctx, ann, mine.ID, domain.Memory{Key: "renamed"}); errs.FieldsOf(err)["agent_config_id"] == "" {
		t.Fatalf("moving a memory to the global scope: %v", err)
	}
	if _, err := w.svc.Update(ctx, ann, mine.ID, domain.Memory{AgentID: annsAgent}); errs.FieldsOf(err)["key"] == "" {
		t.Fatalf("an edit without a key: %v", err)
	}
	for _, tc := range []struct {
		what string
		err  error
		want errs.Code
	}{
		{"bob edits ann's agent's memory", func() error {
			_, err := w.svc.Update(ctx, bob, mine.ID, domain.Memory{AgentID: annsAgent, Key: "x"})
			return err
		}(), errs.NotFound},
		{"bob deletes ann's agent's memory", w.svc.Delete(ctx, bob, mine.ID), errs.NotFound},
		{"ann edits a global memory", func() error { _, err := w.svc.Update(ctx, ann, w.global.ID, domain.Memory{Key: "x"}); return err }(), errs.Forbidden},
		{"ann deletes a global memory", w.svc.Delete(ctx, ann, w.global.ID), errs.Forbidden},
		{"an edit of a missing memory", func() error { _, err := w.svc.Update(ctx, ann, "missing", domain.Memory{Key: "x"}); return err }(), errs.NotFound},
		{"a delete of a missing memory", w.svc.Delete(ctx, ann, "missing"), errs.NotFound},
	} {
		if errs.CodeOf(tc.err) != tc.want {
			t.Errorf("%s: %v, want %s", tc.what, tc.err, tc.want)
		}
	}
	// The agent behind it stays unnamed: the memory is what is absent.
	if err := w.svc.Delete(ctx, bob, mine.ID); errs.MessageOf(err) != "memory not found" {
		t.Fatalf("bob deletes ann's agent's memory: %q, want the memory not found", errs.MessageOf(err))
	}
	if got, _ := w.svc.Get(ctx, ann, mine.ID); got.Key != "renamed" {
		t.Fatalf("a refused write changed the memory: %+v", got)
	}
	if err := w.svc.Delete(ctx, ann, mine.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := w.svc.Get(ctx, ann, mine.ID); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("a deleted memory: %v", err)
	}
	if _, err := w.svc.Update(ctx, admin, w.global.ID, domain.Memory{Key: "house style", Content: "American spelling"}); err != nil {
		t.Fatalf("an admin edits a global memory: %v", err)
	}
}
