package porttest_test

import (
	"context"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/ports/porttest"
	"github.com/agents-server/agents-server/ports/storetest"
)

// The task fake keeps the task contract the SQL store keeps, with its
// session and run fakes standing in for the other tables.
func TestTaskStoreKeepsTheTaskContract(t *testing.T) {
	storetest.Tasks(t, func(t *testing.T) storetest.TaskStores {
		runs := &porttest.RunStore{}
		tasks := &porttest.TaskStore{Runs: runs}
		sessions := &porttest.SessionStore{Runs: runs, Tasks: tasks}
		tasks.Sessions = sessions
		return storetest.TaskStores{Tasks: tasks, Sessions: sessions, Approvals: runs,
			NewSession: func(t *testing.T, id string) domain.Session {
				at := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)
				s := domain.Session{ID: id, OwnerID: "owner-" + id, Name: "n-" + id, CreatedAt: at, UpdatedAt: at}
				if err := sessions.CreateSession(context.Background(), s); err != nil {
					t.Fatal(err)
				}
				return s
			}}
	})
}
