package porttest_test

import (
	"testing"

	"github.com/agents-server/agents-server/ports/porttest"
	"github.com/agents-server/agents-server/ports/storetest"
)

func TestHookDeliveryStoreKeepsTheContract(t *testing.T) {
	storetest.HookDeliveries(t, &porttest.HookDeliveryStore{})
}
