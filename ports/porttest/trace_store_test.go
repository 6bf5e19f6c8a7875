package porttest_test

import (
	"testing"

	"github.com/agents-server/agents-server/ports/storetest"
)

// The trace fake keeps the trace contract the SQL store keeps.
func TestTraceStoreKeepsTheTraceContract(t *testing.T) { storetest.Traces(t, openStores) }
