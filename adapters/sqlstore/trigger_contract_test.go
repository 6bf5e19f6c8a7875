package sqlstore

import (
	"testing"

	"github.com/agents-server/agents-server/ports/storetest"
)

// The store keeps the trigger contract its in-memory fake is held to.
func TestTriggerStoreKeepsTheTriggerContract(t *testing.T) {
	db := openTemp(t)
	storetest.Triggers(t, db, newSession(t, db, "triggered").ID)
}
