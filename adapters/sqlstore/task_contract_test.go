package sqlstore

import (
	"testing"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/ports/storetest"
)

// The store keeps the task contract its in-memory fake is held to.
func TestTaskStoreKeepsTheTaskContract(t *testing.T) {
	storetest.Tasks(t, func(t *testing.T) storetest.TaskStores {
		db := openTemp(t)
		return storetest.TaskStores{Tasks: db, Sessions: db, Approvals: db, Runs: db,
			NewSession: func(t *testing.T, id string) domain.Session { return newSession(t, db, id) }}
	})
}
