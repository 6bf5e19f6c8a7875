package porttest_test

import (
	"context"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/ports/porttest"
	"github.com/agents-server/agents-server/ports/storetest"
)

// fakeDatabase is one in-memory database: the run, task and session fakes
// wired to each other as the SQL store's tables reach each other.
type fakeDatabase struct {
	runs     *porttest.RunStore
	tasks    *porttest.TaskStore
	sessions *porttest.SessionStore
	traces   *porttest.TraceStore
}

func newFakeDatabase() fakeDatabase {
	runs, traces := &porttest.RunStore{}, &porttest.TraceStore{}
	tasks := &porttest.TaskStore{Runs: runs}
	sessions := &porttest.SessionStore{Runs: runs, Tasks: tasks, Traces: traces}
	runs.Sessions, runs.Tasks, tasks.Sessions = sessions, tasks, sessions
	return fakeDatabase{runs: runs, tasks: tasks, sessions: sessions, traces: traces}
}

// newSession stores a visible session with that id, of an owner of its
// own.
func (f fakeDatabase) newSession(t *testing.T, id string) domain.Session {
	at := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)
	s := domain.Session{ID: id, OwnerID: "owner-" + id, Name: "n-" + id, CreatedAt: at, UpdatedAt: at}
	if err := f.sessions.CreateSession(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	return s
}

// openStores is a new empty fake database as the run, approval, session and trace
// contracts use it.
func openStores(*testing.T) storetest.Stores {
	f := newFakeDatabase()
	return storetest.Stores{Runs: f.runs, Approvals: f.runs, Sessions: f.sessions, Tasks: f.tasks, Traces: f.traces, Search: f.sessions, Beat: f.runs.Beat,
		NewSession: f.newSession}
}

// The run fake keeps the run contract the SQL store keeps.
func TestRunStoreKeepsTheRunContract(t *testing.T) { storetest.Runs(t, openStores) }

// The run fake keeps the approval contract the SQL store keeps.
func TestApprovalStoreKeepsTheApprovalContract(t *testing.T) { storetest.Approvals(t, openStores) }
