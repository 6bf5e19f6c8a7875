package sqlstore

import (
	"context"
	"testing"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/ports/storetest"
)

// The store keeps the configuration contract its in-memory fake is held
// to.
func TestConfigStoreKeepsTheConfigContract(t *testing.T) {
	storetest.Config(t, func(t *testing.T) storetest.ConfigStores {
		db := openTemp(t)
		return storetest.ConfigStores{Config: db, NewOwner: func(t *testing.T, name string) string {
			u := user(name, domain.RoleMember)
			if err := db.CreateUser(context.Background(), u); err != nil {
				t.Fatal(err)
			}
			return u.ID
		}}
	})
}
