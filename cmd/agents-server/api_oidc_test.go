package main

import (
	"slices"
	"testing"

	"github.com/agents-server/agents-server/adapters/httpapi"
)

// Single sign-on against a real OpenID Provider (tools/oidcop): the
// provider's own login page, its keys, its tokens.

var ann = opUser{Username: "ann", Password: "ann-password", Email: "ann@example.com", EmailVerified: true}

// A first sign-in makes the account (a member with no password, named as
// the provider prefers); a second one, in another browser, signs the same
// account in again.
func TestOIDCFirstSignInMakesTheAccountAndTheNextReusesIt(t *testing.T) {
	t.Parallel()
	s := startSSO(t, []opUser{ann}, nil)
	var methods httpapi.SignInMethodsView
	s.call("GET", "/api/v1/auth/methods", "", nil).want(t, 200).decode(t, &methods)
	if !methods.OIDC || methods.OIDCName != "Test IdP" || !methods.Password {
		t.Fatalf("sign-in methods %+v", methods)
	}

	token, refusal := s.signIn("ann", "ann-password")
	if token == "" {
		t.Fatalf("the first sign-in was refused: %s", refusal)
	}
	var me httpapi.UserView
	s.call("GET", "/api/v1/auth/me", token, nil).want(t, 200).decode(t, &me)
	if me.Username != "ann" || me.Role != "member" || me.HasPassword || me.Disabled {
		t.Fatalf("the new account: %+v", me)
	}
	again, refusal := s.signIn("ann", "ann-password")
	if again == "" || again == token {
		t.Fatalf("the second sign-in: %q, refused %q", again, refusal)
	}
	var second httpapi.UserView
	s.call("GET", "/api/v1/auth/me", again, nil).want(t, 200).decode(t, &second)
	if second.ID != me.ID {
		t.Fatalf("the second sign-in made account %s, not %s again", second.ID, me.ID)
	}
	var users []httpapi.UserView
	s.call("GET", "/api/v1/auth/users", s.admin, nil).want(t, 200).decode(t, &users)
	if len(users) != 2 {
		t.Fatalf("%d accounts after two sign-ins of one person (admin + ann expected): %+v", len(users), users)
	}
	// The account was made once, with its identity, by ann herself.
	made := s.auditLog("&action=user.create")
	if len(made) != 1 || made[0].ObjectID != me.ID || made[0].ActorID != me.ID ||
		!slices.Equal(made[0].Fields, []string{"oidc_identity", "role", "username"}) {
		t.Fatalf("the account's record: %+v", made)
	}
}
