package sqlstore

import (
	"context"
	"testing"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/ports/storetest"
)

// The store keeps the waiting MCP sign-ins' contract its in-memory fake is
// held to.
func TestMCPSignInsKeepTheContract(t *testing.T) {
	db := openTemp(t)
	ann := user("ann", domain.RoleMember)
	if err := db.CreateUser(context.Background(), ann); err != nil {
		t.Fatal(err)
	}
	storetest.MCPSignIns(t, db, ann.ID)
}
