package auth

import (
	"strings"
	"testing"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
)

// TestAHostsSignInStandsInForAToken: with no token, a request the host
// signed in authenticates as the host's user (an account made once, which
// cannot sign in with a password); one the host refused is unauthorized
// with the host's reason; a token, when given, decides; and the account,
// disabled, stops standing.
func TestAHostsSignInStandsInForAToken(t *testing.T) {
	e := newCacheEnv(t, 0)
	p, err := e.svc.HostPrincipal(e.ctx, HostIdentity{Username: "ada@example.com", Admin: true})
	if err != nil || p.TokenID != "" || p.User.Role != domain.RoleAdmin {
		t.Fatalf("the host's user: %+v %v", p, err)
	}
	again, err := e.svc.HostPrincipal(e.ctx, HostIdentity{Username: "ada@example.com"})
	if err != nil || again.User.ID != p.User.ID || again.User.Role != domain.RoleAdmin {
		t.Fatalf("the second sight made or changed an account: %+v %v", again, err)
	}
	if _, _, err := e.svc.Login(e.ctx, "ada@example.com", ""); err == nil {
		t.Fatal("the host's user signed in with an empty password")
	}

	signedIn := WithHostPrincipal(e.ctx, p)
	if got, err := e.svc.AuthenticateRequest(signedIn, ""); err != nil || got.User.ID != p.User.ID {
		t.Fatalf("no token, signed in by the host: %+v %v", got, err)
	}
	if got, err := e.svc.AuthenticateRequest(signedIn, e.session); err != nil || got.User.ID != e.member.User.ID {
		t.Fatalf("a token beside the host's sign-in: %+v %v", got, err)
	}
	refused := WithHostRefusal(e.ctx, "no session cookie")
	if _, err := e.svc.AuthenticateRequest(refused, ""); !errs.Is(err, errs.Unauthorized) || !strings.Contains(errs.MessageOf(err), "no session cookie") {
		t.Fatalf("refused by the host: %v", err)
	}
	if _, err := e.svc.AuthenticateRequest(e.ctx, ""); !errs.Is(err, errs.Unauthorized) {
		t.Fatalf("no token and no host: %v", err)
	}

	if err := e.svc.Recheck(e.ctx, "", p); err != nil {
		t.Fatalf("recheck of a standing host account: %v", err)
	}
	if err := e.svc.UpdateUser(e.ctx, e.admin, p.User.ID, domain.UserPatch{Disabled: ptr(true)}); err != nil {
		t.Fatal(err)
	}
	if err := e.svc.Recheck(e.ctx, "", p); !errs.Is(err, errs.Unauthorized) {
		t.Fatalf("recheck of a disabled host account: %v", err)
	}
	if _, err := e.svc.HostPrincipal(e.ctx, HostIdentity{Username: "ada@example.com"}); !errs.Is(err, errs.Unauthorized) {
		t.Fatalf("a disabled account through the host: %v", err)
	}
	if err := e.svc.Logout(e.ctx, p); !errs.Is(err, errs.Validation) {
		t.Fatalf("logout of a host sign-in: %v", err)
	}
}
