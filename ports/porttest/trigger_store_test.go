package porttest_test

import (
	"testing"

	"github.com/agents-server/agents-server/ports/porttest"
	"github.com/agents-server/agents-server/ports/storetest"
)

// The trigger fake keeps the trigger contract the SQL store keeps.
func TestTriggerStoreKeepsTheTriggerContract(t *testing.T) {
	storetest.Triggers(t, &porttest.TriggerStore{}, "s1")
}
