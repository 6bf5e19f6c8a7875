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

// MCPServers is the contract of ports.MCPServerStore: names unique across
// every owner, case aside (ASCII; conflict), ids unique, listings newest
// first (creation time, then id), an update that runs its change in one
// transaction and stores the name, scope, enabled flag, config, grant and
// update time only (a failed change or a taken name stores nothing), a
// grant written only over the grant expected, an insert admitted by the
// owner's count, reads that share no memory with the row, and times kept
// as UTC milliseconds. s must hold no MCP servers; newOwner stores a user
// who may own rows and returns their id.
func MCPServers(t *testing.T, s ports.MCPServerStore, newOwner func(t *testing.T, name string) string) {
	ctx := context.Background()
	ann, bob := newOwner(t, "mcp-ann"), newOwner(t, "mcp-bob")
	at := time.Date(2026, 12, 1, 12, 0, 0, 678_901_234, time.FixedZone("CET", 3600))
	row := func(id, name, owner string, at time.Time) domain.MCPServer {
		return domain.MCPServer{ID: id, Name: name, Enabled: true, Ownership: domain.Ownership{Scope: domain.ScopePrivate, OwnerID: owner},
			Config: domain.MCPConfig{Endpoint: "https://mcp.example/" + id, Headers: map[string]string{"X-Key": "v"}, AuthMode: domain.MCPAuthHeader,
				OAuthScopes: []string{"read"}},
			CreatedAt: at, UpdatedAt: at}
	}
	insert := func(r domain.MCPServer, admit func(int) error) error {
		t.Helper()
		return s.InsertMCPServer(ctx, r, admit)
	}
	find := func(id string) domain.MCPServer {
		t.Helper()
		r, err := s.FindMCPServer(ctx, id)
		if err != nil {
			t.Fatalf("find %s: %v", id, err)
		}
		return r
	}
	listed := func() []string {
		t.Helper()
		list, err := s.ListMCPServers(ctx)
		if err != nil || list == nil {
			t.Fatalf("list = %#v, %v; want a non-nil list", list, err)
		}
		out := []string{}
		for _, r := range list {
			out = append(out, r.ID)
		}
		return out
	}
	if got := listed(); len(got) != 0 {
		t.Fatalf("an empty store lists %v", got)
	}

	// Inserts: admitted by the owner's count, whatever the scope.
	full := errs.E(errs.Conflict, "full")
	var seen int
	capAt := func(limit int) func(int) error {
		return func(owned int) error {
			seen = owned
			if owned >= limit {
				return full
			}
			return nil
		}
	}
	a := row("a", "GitHub", ann, at)
	if err := insert(a, capAt(2)); err != nil || seen != 0 {
		t.Fatalf("the first insert: %v (the owner had %d)", err, seen)
	}
	want := a
	want.CreatedAt, want.UpdatedAt = storedAt(at), storedAt(at)
	if got := find("a"); !reflect.DeepEqual(got, want) {
		t.Fatalf("read back\n%+v\nwant\n%+v", got, want)
	}
	g := row("g", "global", ann, at.Add(time.Second))
	g.Scope = domain.ScopeGlobal
	if err := insert(g, capAt(2)); err != nil || seen != 1 {
		t.Fatalf("a global row: %v (the owner had %d)", err, seen)
	}
	if err := insert(row("c", "n-c", ann, at), capAt(2)); !errors.Is(err, full) || seen != 2 {
		t.Fatalf("past the cap: %v (the owner had %d); want the refusal", err, seen)
	}
	if _, err := s.FindMCPServer(ctx, "c"); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("a refused row was stored: %v", err)
	}
	for _, c := range []struct {
		what string
		r    domain.MCPServer
	}{
		{"the name in another case, another owner's", row("b", "github", bob, at)},
		{"a taken id", row("a", "other", bob, at)},
	} {
		if err := insert(c.r, nil); errs.CodeOf(err) != errs.Conflict {
			t.Fatalf("%s: %v, want conflict", c.what, err)
		}
	}
	// Newest first; a tie on the creation time goes by id, descending.
	for _, r := range []domain.MCPServer{row("b", "gitlab", bob, at.Add(2*time.Second)), row("d", "jira", bob, at.Add(2*time.Second))} {
		if err := insert(r, capAt(5)); err != nil {
			t.Fatal(err)
		}
	}
	if got := listed(); !reflect.DeepEqual(got, []string{"d", "b", "g", "a"}) {
		t.Fatalf("the rows newest first = %v", got)
	}

	// A read is the caller's copy.
	copied := find("a")
	copied.Config.Headers["X-Key"], copied.Config.OAuthScopes[0] = "changed", "changed"
	if got := find("a"); !reflect.DeepEqual(got, want) {
		t.Fatalf("a caller's change to a read reached the store:\n%+v", got)
	}

	// Updates: a failed change stores nothing, even what it changed in
	// place; a taken name stores nothing; owner and creation stay.
	boom := errors.New("boom")
	if _, err := s.UpdateMCPServer(ctx, "a", func(r *domain.MCPServer) error {
		r.Name, r.SealedGrant = "two", "grant"
		r.Config.Headers["X-Key"] = "changed"
		return boom
	}); !errors.Is(err, boom) {
		t.Fatalf("a failed change = %v, want its error", err)
	}
	if got := find("a"); !reflect.DeepEqual(got, want) {
		t.Fatalf("a failed change was stored:\n%+v", got)
	}
	if _, err := s.UpdateMCPServer(ctx, "b", func(r *domain.MCPServer) error {
		r.Name, r.Enabled = "GITHUB", false
		return nil
	}); errs.CodeOf(err) != errs.Conflict {
		t.Fatalf("a rename onto a taken name = %v, want conflict", err)
	}
	if got := find("b"); got.Name != "gitlab" || !got.Enabled {
		t.Fatalf("a refused rename was stored: %+v", got)
	}
	if _, err := s.UpdateMCPServer(ctx, "a", func(r *domain.MCPServer) error { r.Name = "GITHUB"; return nil }); err != nil {
		t.Fatalf("a row's own name in another case = %v, want accepted", err)
	}
	later := at.Add(time.Hour)
	got, err := s.UpdateMCPServer(ctx, "a", func(r *domain.MCPServer) error {
		r.Name, r.SealedGrant, r.UpdatedAt, r.Enabled = "two", "grant", later, false
		r.Config.Endpoint = "https://mcp.example/moved"
		r.OwnerID, r.Scope, r.CreatedAt = bob, domain.ScopeGlobal, later
		return nil
	})
	if err != nil || got.Name != "two" || got.OwnerID != bob || !got.UpdatedAt.Equal(later) {
		t.Fatalf("the update = %+v, %v; want the row as the change left it", got, err)
	}
	stored := find("a")
	if stored.Name != "two" || stored.SealedGrant != "grant" || stored.Enabled || stored.Scope != domain.ScopeGlobal ||
		stored.Config.Endpoint != "https://mcp.example/moved" || !stored.UpdatedAt.Equal(storedAt(later)) {
		t.Fatalf("stored %+v; want the change's name, scope, enabled flag, config, grant and update time", stored)
	}
	if stored.OwnerID != ann || !stored.CreatedAt.Equal(storedAt(at)) {
		t.Fatalf("stored %+v; want the owner and creation time unchanged", stored)
	}

	// The grant: written only over the one expected.
	for i, st := range []struct {
		expect, sealed string
		wrote          bool
		stored         string
	}{
		{"", "g1", false, "grant"}, // a sign-in that read no grant loses
		{"grant", "g1", true, "g1"},
		{"grant", "g2", false, "g1"}, // a refresh of a replaced grant
		{"g1", "", true, ""},         // a clear
		{"g1", "g3", false, ""},      // an old refresh after a clear
		{"", "g4", true, "g4"},
	} {
		wrote, err := s.SaveMCPGrant(ctx, "a", st.expect, st.sealed)
		if err != nil || wrote != st.wrote {
			t.Fatalf("step %d: save %q over %q = %v, %v; want %v", i, st.sealed, st.expect, wrote, err, st.wrote)
		}
		if r := find("a"); r.SealedGrant != st.stored || !r.UpdatedAt.Equal(storedAt(later)) {
			t.Fatalf("step %d: the grant %q (updated %v), want %q and no new update time", i, r.SealedGrant, r.UpdatedAt, st.stored)
		}
	}
	if wrote, err := s.SaveMCPGrant(ctx, "nope", "", "g"); wrote || err != nil {
		t.Fatalf("a grant for a missing row = %v, %v; want false, nil", wrote, err)
	}

	// Missing rows, and a delete that frees the name.
	if _, err := s.UpdateMCPServer(ctx, "nope", func(*domain.MCPServer) error { return nil }); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("updating a missing row: %v, want not_found", err)
	}
	if _, err := s.FindMCPServer(ctx, "nope"); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("finding a missing row: %v, want not_found", err)
	}
	if err := s.DeleteMCPServer(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteMCPServer(ctx, "b"); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("deleting twice: %v, want not_found", err)
	}
	if err := insert(row("e", "GitLab", ann, at), nil); err != nil {
		t.Fatalf("a deleted row's name taken again: %v", err)
	}
}
