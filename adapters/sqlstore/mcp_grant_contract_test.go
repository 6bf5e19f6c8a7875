package sqlstore

import (
	"context"
	"testing"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/ports/storetest"
)

// The store keeps the personal MCP grants' contract its in-memory fake is
// held to, and a person's grants go with the person.
func TestMCPPersonalGrantsKeepTheContract(t *testing.T) {
	db := openTemp(t)
	ctx := context.Background()
	ann, bob, cy := user("ann", domain.RoleAdmin), user("bob", domain.RoleMember), user("cy", domain.RoleMember)
	for _, u := range []domain.User{ann, bob, cy} {
		if err := db.CreateUser(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	storetest.MCPPersonalGrants(t, db, ann.ID, bob.ID)

	srv := domain.MCPServer{ID: "gone-with-user", Name: "gone-with-user", Enabled: true,
		Ownership: domain.Ownership{Scope: domain.ScopeGlobal, OwnerID: ann.ID},
		Config:    domain.MCPConfig{Endpoint: "https://mcp.example/x", AuthMode: domain.MCPAuthOAuth, PerPersonAuth: true}}
	if err := db.InsertMCPServer(ctx, srv, nil); err != nil {
		t.Fatal(err)
	}
	if ok, err := db.SaveMCPPersonalGrant(ctx, srv.ID, cy.ID, "", "cy-grant"); !ok || err != nil {
		t.Fatalf("save: %v %v", ok, err)
	}
	if err := db.DeleteUser(ctx, cy.ID, ann.ID, func(domain.User, int) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if g, err := db.FindMCPPersonalGrant(ctx, srv.ID, cy.ID); g != "" || err != nil {
		t.Fatalf("a deleted person's grant: %q, %v", g, err)
	}
}
