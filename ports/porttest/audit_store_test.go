package porttest_test

import (
	"testing"

	"github.com/agents-server/agents-server/ports/porttest"
	"github.com/agents-server/agents-server/ports/storetest"
)

// The in-memory audit log keeps the contract the SQL store keeps.
func TestAuditStoreKeepsTheContract(t *testing.T) {
	storetest.Audit(t, &porttest.AuditStore{})
}
