package porttest_test

import (
	"testing"

	"github.com/agents-server/agents-server/ports/porttest"
	"github.com/agents-server/agents-server/ports/storetest"
)

// The settings fake keeps the settings contract the SQL store keeps.
func TestSettingStoreKeepsTheSettingContract(t *testing.T) {
	s := &porttest.SettingStore{}
	storetest.Settings(t, s, s)
}
