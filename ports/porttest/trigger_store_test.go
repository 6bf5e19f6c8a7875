package porttest_test

import (
	"testing"

	"github.com/agents-server/agents-server/ports/porttest"
	"github.com/agents-server/agents-server/ports/storetest"
)

// The trigger fake keeps the trigger contract the SQL store keeps, with
// the session fake standing in for the sessions table.
func TestTriggerStoreKeepsTheTriggerContract(t *testing.T) {
	f := newFakeDatabase()
	triggers := &porttest.TriggerStore{}
	f.sessions.Triggers = triggers
	storetest.Triggers(t, storetest.TriggerStores{Triggers: triggers, Sessions: f.sessions, NewSession: f.newSession})
}
