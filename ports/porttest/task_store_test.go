package porttest_test

import (
	"testing"

	"github.com/agents-server/agents-server/ports/storetest"
)

// The task fake keeps the task contract the SQL store keeps, with its
// session and run fakes standing in for the other tables.
func TestTaskStoreKeepsTheTaskContract(t *testing.T) {
	storetest.Tasks(t, func(t *testing.T) storetest.TaskStores {
		f := newFakeDatabase()
		return storetest.TaskStores{Tasks: f.tasks, Sessions: f.sessions, Approvals: f.runs, Runs: f.runs, NewSession: f.newSession}
	})
}
