package sqlstore

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/agents-server/agents-server/core/domain"
)

// The rows and races the store's own tests share; the run and approval
// promises are the contracts in ports/storetest (run_contract_test.go).

// racers is how many goroutines contend for one row in the race tests.
const racers = 16

// race runs fn(i) for i in [0, n) at once (released together, so they
// meet at the store) and waits for all of them.
func race(n int, fn func(i int)) {
	var ready, done sync.WaitGroup
	start := make(chan struct{})
	ready.Add(n)
	done.Add(n)
	for i := range n {
		go func() {
			defer done.Done()
			ready.Done()
			<-start
			fn(i)
		}()
	}
	ready.Wait()
	close(start)
	done.Wait()
}

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
