package sqlstore

import (
	"testing"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/ports/storetest"
)

// openStores is a new empty store as the run, approval, session and trace
// contracts use it.
func openStores(t *testing.T) storetest.Stores {
	db := openTemp(t)
	return storetest.Stores{Runs: db, Approvals: db, Sessions: db, Tasks: db, Traces: db, Search: db, Beat: db.Beat,
		NewSession: func(t *testing.T, id string) domain.Session { return newSession(t, db, id) }}
}

// The store keeps the run contract its in-memory fake is held to.
func TestRunStoreKeepsTheRunContract(t *testing.T) { storetest.Runs(t, openStores) }

// The store keeps the approval contract its in-memory fake is held to.
func TestApprovalStoreKeepsTheApprovalContract(t *testing.T) { storetest.Approvals(t, openStores) }
