package porttest_test

import (
	"testing"

	"github.com/agents-server/agents-server/ports/porttest"
	"github.com/agents-server/agents-server/ports/storetest"
)

// The in-memory usage store keeps the contract the SQL store keeps.
func TestUsageStoreKeepsTheContract(t *testing.T) {
	t.Parallel()
	storetest.Usage(t, &porttest.UsageStore{})
}
