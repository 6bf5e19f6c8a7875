package porttest_test

import (
	"testing"

	"github.com/agents-server/agents-server/ports/porttest"
	"github.com/agents-server/agents-server/ports/storetest"
)

// The user fake keeps the user and token contracts the SQL store keeps.
func TestUserStoreKeepsTheUserContract(t *testing.T) {
	s := &porttest.UserStore{}
	storetest.Users(t, storetest.UserStores{Users: s, Tokens: s})
}

// The user fake keeps the token contract the SQL store keeps.
func TestUserStoreKeepsTheTokenContract(t *testing.T) {
	s := &porttest.UserStore{}
	storetest.Tokens(t, storetest.UserStores{Users: s, Tokens: s})
}

// The user fake keeps the single sign-on contract the SQL store keeps.
func TestUserStoreKeepsTheOIDCContract(t *testing.T) {
	s := &porttest.UserStore{}
	storetest.OIDC(t, storetest.OIDCStores{Users: s, OIDC: s})
}
