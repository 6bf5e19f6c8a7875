package auth

import (
	"testing"

	"github.com/agents-server/agents-server/core/domain"
)

// A return path stays inside the workbench: another origin, a fragment or
// a header break reads as the root.
func TestSafeReturnKeepsThePathInside(t *testing.T) {
	for in, want := range map[string]string{
		"/s/abc": "/s/abc", "/settings?tab=x": "/settings?tab=x", "": "/", "https://evil.test/": "/",
		"//evil.test/": "/", "/\\evil.test": "/", "/a#token=x": "/", "/a\r\nSet-Cookie: x": "/", "relative": "/",
	} {
		if got := safeReturn(in); got != want {
			t.Errorf("safeReturn(%q) = %q, want %q", in, got, want)
		}
	}
}

// A new account's name comes from the preferred username, else the
// email, else the subject, kept to what a username may hold.
func TestOIDCUsernameFromTheClaims(t *testing.T) {
	for _, tc := range []struct {
		c    domain.OIDCClaims
		want string
	}{
		{domain.OIDCClaims{PreferredUsername: "Ann", Email: "ann@example.com", Subject: "1"}, "Ann"},
		{domain.OIDCClaims{PreferredUsername: "Ann Lee", Subject: "1"}, "Ann-Lee"},
		{domain.OIDCClaims{Email: "ann@example.com", Subject: "1"}, "ann@example.com"},
		{domain.OIDCClaims{PreferredUsername: "!!!", Subject: "abc"}, "user-abc"},
		{domain.OIDCClaims{Subject: "x/y"}, "user-x-y"},
	} {
		if got := oidcUsername(tc.c); got != tc.want {
			t.Errorf("oidcUsername(%+v) = %q, want %q", tc.c, got, tc.want)
		}
	}
}
