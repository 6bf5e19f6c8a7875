package sqlstore

import (
	"testing"

	"github.com/agents-server/agents-server/ports/storetest"
)

// The store keeps the trace contract its in-memory fake is held to.
func TestTraceStoreKeepsTheTraceContract(t *testing.T) { storetest.Traces(t, openStores) }
