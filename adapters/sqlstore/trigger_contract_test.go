package sqlstore

import (
	"testing"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/ports/storetest"
)

// The store keeps the trigger contract its in-memory fake is held to.
func TestTriggerStoreKeepsTheTriggerContract(t *testing.T) {
	db := openTemp(t)
	storetest.Triggers(t, storetest.TriggerStores{Triggers: db, Sessions: db,
		NewSession: func(t *testing.T, id string) domain.Session { return newSession(t, db, id) }})
}
