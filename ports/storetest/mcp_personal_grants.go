package storetest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// MCPPersonalGrants is the contract of the personal OAuth grants of
// ports.MCPServerStore: each person's grant for a server is kept apart
// from the others' and from the row's shared grant, replaced only while
// it is still the one expected, removed one person at a time or all
// together, and goes with its server. s must hold no MCP servers; ann and
// bob must be users who may own them.
func MCPPersonalGrants(t *testing.T, s ports.MCPServerStore, ann, bob string) {
	ctx := context.Background()
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	srv := domain.MCPServer{ID: "personal-srv", Name: "personal-srv", Enabled: true, Ownership: domain.Ownership{Scope: domain.ScopeGlobal, OwnerID: ann},
		Config: domain.MCPConfig{Endpoint: "https://mcp.example/personal", AuthMode: domain.MCPAuthOAuth, PerPersonAuth: true}, CreatedAt: now, UpdatedAt: now}
	if err := s.InsertMCPServer(ctx, srv, nil); err != nil {
		t.Fatal(err)
	}
	find := func(user, want string) {
		t.Helper()
		got, err := s.FindMCPPersonalGrant(ctx, srv.ID, user)
		if err != nil || got != want {
			t.Fatalf("grant of %s = %q, %v; want %q", user, got, err, want)
		}
	}
	save := func(user, expect, sealed string, want bool) {
		t.Helper()
		ok, err := s.SaveMCPPersonalGrant(ctx, srv.ID, user, expect, sealed)
		if err != nil || ok != want {
			t.Fatalf("save %s %q→%q = %v, %v; want %v", user, expect, sealed, ok, err, want)
		}
	}
	find(ann, "")
	save(ann, "", "ann-1", true)
	save(ann, "", "ann-other", false) // a second first sign-in finds one stored
	save(bob, "", "bob-1", true)
	find(ann, "ann-1")
	find(bob, "bob-1")
	holders := func(want ...string) {
		t.Helper()
		got, err := s.MCPPersonalGrantHolders(ctx, srv.ID)
		slices.Sort(want)
		if err != nil || !slices.Equal(got, want) {
			t.Fatalf("holders = %v, %v; want %v", got, err, want)
		}
	}
	holders(ann, bob)
	save(ann, "stale", "ann-2", false)
	save(ann, "ann-1", "ann-2", true)
	find(ann, "ann-2")
	find(bob, "bob-1")
	if row, err := s.FindMCPServer(ctx, srv.ID); err != nil || row.SealedGrant != "" {
		t.Fatalf("the row's shared grant: %q, %v", row.SealedGrant, err)
	}
	save(ann, "ann-1", "", false) // a stale sign-out removes nothing
	save(ann, "ann-2", "", true)
	find(ann, "")
	holders(bob)
	save(ann, "", "", true)
	save(bob, "", "", false)

	if _, err := s.SaveMCPPersonalGrant(ctx, "no-such-server", ann, "", "x"); errs.CodeOf(err) != errs.Conflict {
		t.Fatalf("a grant for a missing server: %v, want conflict", err)
	}

	save(ann, "", "ann-3", true)
	if err := s.DeleteMCPPersonalGrants(ctx, srv.ID, bob); err != nil {
		t.Fatal(err)
	}
	find(bob, "")
	find(ann, "ann-3")
	save(bob, "", "bob-2", true)
	if err := s.DeleteMCPPersonalGrants(ctx, srv.ID, ""); err != nil {
		t.Fatal(err)
	}
	find(ann, "")
	find(bob, "")
	holders()

	save(ann, "", "ann-4", true)
	if err := s.DeleteMCPServer(ctx, srv.ID); err != nil {
		t.Fatal(err)
	}
	find(ann, "")
}
