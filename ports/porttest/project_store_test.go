package porttest_test

import (
	"context"
	"testing"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/ports/porttest"
	"github.com/agents-server/agents-server/ports/storetest"
)

// The project fake keeps the project contract the SQL store keeps, its
// session fake holding the sessions it binds.
func TestProjectStoreKeepsTheProjectContract(t *testing.T) {
	storetest.Projects(t, func(t *testing.T) storetest.ProjectStores {
		sessions := &porttest.SessionStore{}
		s := &porttest.ProjectStore{Sessions: sessions}
		return storetest.ProjectStores{Projects: s, HostKeys: s, Refs: s,
			NewOwner: func(_ *testing.T, name string) string { return name },
			NewSession: func(t *testing.T, id, owner string) {
				if err := sessions.CreateSession(context.Background(), domain.Session{ID: id, OwnerID: owner}); err != nil {
					t.Fatal(err)
				}
			}}
	})
}
