package porttest_test

import (
	"testing"

	"github.com/agents-server/agents-server/ports/storetest"
)

// The session fake keeps the session contract the SQL store keeps, with
// its run and task fakes standing in for the other tables.
func TestSessionStoreKeepsTheSessionContract(t *testing.T) { storetest.Sessions(t, openStores) }

// The session fake's search keeps the contract the SQL store's index keeps.
func TestMessageSearchKeepsTheSearchContract(t *testing.T) { storetest.MessageSearch(t, openStores) }
