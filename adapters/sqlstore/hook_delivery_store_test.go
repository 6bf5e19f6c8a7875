package sqlstore

import (
	"testing"

	"github.com/agents-server/agents-server/ports/storetest"
)

// TestHookDeliveriesKeepTheContract runs the replay guard's contract on the
// engine the run chose (AGENTS_TEST_STORE=postgres for Postgres).
func TestHookDeliveriesKeepTheContract(t *testing.T) {
	storetest.HookDeliveries(t, openTemp(t))
}
