package sqlstore

import (
	"context"
	"testing"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/ports/storetest"
)

// The store keeps the MCP server contract its in-memory fake is held to.
func TestMCPServerStoreKeepsTheMCPServerContract(t *testing.T) {
	db := openTemp(t)
	storetest.MCPServers(t, db, func(t *testing.T, name string) string {
		u := user(name, domain.RoleMember)
		if err := db.CreateUser(context.Background(), u); err != nil {
			t.Fatal(err)
		}
		return u.ID
	})
}
