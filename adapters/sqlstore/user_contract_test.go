package sqlstore

import (
	"testing"

	"github.com/agents-server/agents-server/ports/storetest"
)

// The store keeps the user contract its in-memory fakes are held to.
func TestUserStoreKeepsTheUserContract(t *testing.T) {
	db := openTemp(t)
	storetest.Users(t, storetest.UserStores{Users: db, Tokens: db})
}

// The store keeps the token contract the auth tests' fake is held to.
func TestTokenStoreKeepsTheTokenContract(t *testing.T) {
	db := openTemp(t)
	storetest.Tokens(t, storetest.UserStores{Users: db, Tokens: db})
}

// The store keeps the single sign-on contract its in-memory fake is held
// to.
func TestOIDCStoreKeepsTheOIDCContract(t *testing.T) {
	db := openTemp(t)
	storetest.OIDC(t, storetest.OIDCStores{Users: db, OIDC: db})
}
