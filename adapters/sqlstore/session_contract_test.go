package sqlstore

import (
	"testing"

	"github.com/agents-server/agents-server/ports/storetest"
)

// The store keeps the session contract its in-memory fake is held to.
func TestSessionStoreKeepsTheSessionContract(t *testing.T) { storetest.Sessions(t, openStores) }

// The store keeps the message search contract its in-memory fake is held to.
func TestMessageSearchKeepsTheSearchContract(t *testing.T) { storetest.MessageSearch(t, openStores) }
