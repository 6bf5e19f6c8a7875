package sqlstore

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/agents-server/agents-server/core/domain"
)

// The rows the store's own tests share (their races use storetest.Race); the run and approval
// promises are the contracts in ports/storetest (run_contract_test.go).

// newSession stores an owner and an empty session of theirs.
func newSession(t *testing.T, db *DB, id string) domain.Session {
	t.Helper()
	ctx := context.Background()
	u := user("owner-"+id, domain.RoleMember)
	if err := db.CreateUser(ctx, u); err != nil {
		t.Fatal(err)
	}
	s := domain.Session{ID: id, OwnerID: u.ID, Name: "n-" + id, CreatedAt: when, UpdatedAt: when}
	if err := db.CreateSession(ctx, s); err != nil {
		t.Fatal(err)
	}
	return s
}

// runIDs passes a run listing on as its ids.
func runIDs(runs []domain.Run, err error) ([]string, error) {
	ids := make([]string, len(runs))
	for i, r := range runs {
		ids[i] = r.ID
	}
	return ids, err
}

// sameJSON compares values as they are stored: raw JSON fields read back
// as null where they were nil.
func sameJSON(t *testing.T, a, b any) bool {
	t.Helper()
	x, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	y, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return string(x) == string(y)
}
