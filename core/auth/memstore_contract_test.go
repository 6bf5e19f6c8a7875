package auth

import (
	"testing"

	"github.com/agents-server/agents-server/ports/storetest"
)

// The auth tests' in-memory store keeps the user and token contracts the
// SQL store keeps.
func TestMemStoreKeepsTheUserAndTokenContracts(t *testing.T) {
	t.Run("users", func(t *testing.T) {
		m := newMemStore()
		storetest.Users(t, storetest.UserStores{Users: m, Tokens: m})
	})
	t.Run("tokens", func(t *testing.T) {
		m := newMemStore()
		storetest.Tokens(t, storetest.UserStores{Users: m, Tokens: m})
	})
}
