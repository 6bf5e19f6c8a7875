package sqlstore

import (
	"context"
	"testing"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/ports/storetest"
)

// The store keeps the project contract its in-memory fake is held to.
func TestProjectStoreKeepsTheProjectContract(t *testing.T) {
	storetest.Projects(t, func(t *testing.T) storetest.ProjectStores {
		db := openTemp(t)
		ctx := context.Background()
		return storetest.ProjectStores{Projects: db, HostKeys: db, Refs: db,
			NewOwner: func(t *testing.T, name string) string {
				u := user(name, domain.RoleMember)
				if err := db.CreateUser(ctx, u); err != nil {
					t.Fatal(err)
				}
				return u.ID
			},
			NewSession: func(t *testing.T, id, owner string) {
				if err := db.CreateSession(ctx, domain.Session{ID: id, OwnerID: owner, CreatedAt: when, UpdatedAt: when}); err != nil {
					t.Fatal(err)
				}
			}}
	})
}
