package sqlstore

import (
	"testing"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/ports/storetest"
)

// runStores is a new empty store as the run and approval contracts use it.
func runStores(t *testing.T) storetest.RunStores {
	db := openTemp(t)
	return storetest.RunStores{Runs: db, Approvals: db, Sessions: db, Tasks: db, Beat: db.Beat,
		NewSession: func(t *testing.T, id string) domain.Session { return newSession(t, db, id) }}
}

// The store keeps the run contract its in-memory fake is held to.
func TestRunStoreKeepsTheRunContract(t *testing.T) { storetest.Runs(t, runStores) }

// The store keeps the approval contract its in-memory fake is held to.
func TestApprovalStoreKeepsTheApprovalContract(t *testing.T) { storetest.Approvals(t, runStores) }
