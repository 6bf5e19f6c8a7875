package porttest_test

import (
	"testing"

	"github.com/agents-server/agents-server/ports/porttest"
	"github.com/agents-server/agents-server/ports/storetest"
)

// The configuration fake keeps the configuration contract the SQL store
// keeps.
func TestConfigStoreKeepsTheConfigContract(t *testing.T) {
	storetest.Config(t, func(*testing.T) storetest.ConfigStores {
		return storetest.ConfigStores{Config: &porttest.ConfigStore{}, NewOwner: func(_ *testing.T, name string) string { return "user-" + name }}
	})
}
