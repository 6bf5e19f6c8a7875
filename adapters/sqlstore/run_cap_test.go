package sqlstore

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// ownedSessions stores n sessions of one new user and returns them.
func ownedSessions(t *testing.T, db *DB, name string, n int) []domain.Session {
	t.Helper()
	ctx := context.Background()
	u := user(name, domain.RoleMember)
	if err := db.CreateUser(ctx, u); err != nil {
		t.Fatal(err)
	}
	out := make([]domain.Session, n)
	for i := range out {
		out[i] = domain.Session{ID: fmt.Sprintf("%s-s%02d", name, i), OwnerID: u.ID, Name: "n", CreatedAt: when, UpdatedAt: when}
		if err := db.CreateSession(ctx, out[i]); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// secondHandle opens db's database again beside it: another replica (or
// process) writing the same store.
func secondHandle(t *testing.T, db *DB) *DB {
	t.Helper()
	open, ok := reopeners.Load(db)
	if !ok {
		t.Fatal("secondHandle takes a store openTemp opened")
	}
	other, err := open.(func() (*DB, error))()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	return other
}

// Starts racing from two handles on one database — as replicas sharing a
// Postgres do — each count the owner's live runs in the transaction that
// creates its run row: exactly the cap's worth get in, never more.
func TestLiveRunCountHoldsACapAcrossHandles(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t)
	replicas := []*DB{db, secondHandle(t, db)}
	const limit, starts = 4, 16
	sessions := ownedSessions(t, db, "racer", starts)
	var wg sync.WaitGroup
	results := make([]error, starts)
	for i, s := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			run := domain.Run{ID: fmt.Sprintf("run-%02d", i), SessionID: s.ID, OwnerID: s.OwnerID, AgentConfigID: "agent",
				Status: domain.RunRunning, CreatedAt: when, UpdatedAt: when}
			results[i] = replicas[i%2].WriteSession(ctx, s.ID, func(tx ports.SessionTx) error {
				if err := tx.CreateRun(ctx, run); err != nil {
					return err
				}
				live, err := tx.CountLiveRuns(ctx, s.OwnerID)
				if err == nil && live > limit {
					err = domain.TooManyRuns(limit)
				}
				return err
			})
		}()
	}
	wg.Wait()
	in := 0
	for i, err := range results {
		switch {
		case err == nil:
			in++
		case errs.CodeOf(err) != errs.RateLimited:
			t.Fatalf("start %d: %v", i, err)
		}
	}
	if live, err := db.CountLiveRuns(ctx, sessions[0].OwnerID); in != limit || live != limit || err != nil {
		t.Fatalf("%d starts got in, %d runs live (%v); the cap is %d", in, live, err, limit)
	}
}

// Counting a user's live runs — twice in every start — reads the live
// runs alone, through the partial index that holds just them: its cost
// must not grow with the history of finished runs.
func TestLiveRunCountSearchesOnlyLiveRuns(t *testing.T) {
	db := openSQLite(t)
	rows, err := db.read.QueryContext(context.Background(), "EXPLAIN QUERY PLAN "+liveRuns, "owner")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(plan) == 0 || !strings.Contains(plan[0], "SEARCH r USING INDEX runs_status") {
		t.Fatalf("the live-run count does not search runs by runs_status: %q", plan)
	}
}
