package sqlstore

import (
	"testing"

	"github.com/agents-server/agents-server/ports/storetest"
)

// The store keeps the settings contract its in-memory fake is held to.
func TestSettingStoreKeepsTheSettingContract(t *testing.T) {
	db := openTemp(t)
	storetest.Settings(t, db, db)
}
