//go:build unix

package mcptest

import (
	"encoding/json"
	"net/http"
	"strconv"
	"testing"
)

// AuthServer is a local OAuth 2.0 authorization server (oauth2-mock-server
// behind testdata/oauth/as.mjs): authorization code with PKCE, refresh,
// RFC 8414 metadata and dynamic client registration. Its /authorize
// redirects back at once with a code, so a test completes a sign-in by
// following the authorize URL with an HTTP client. URL is the issuer.
type AuthServer struct {
	*Server
}

// AuthState is what the authorization server saw.
type AuthState struct {
	Registrations []struct {
		ClientID     string   `json:"client_id"`
		RedirectURIs []string `json:"redirect_uris"`
	} `json:"registrations"`
	CodeGrants       int `json:"codeGrants"`
	RefreshGrants    int `json:"refreshGrants"`
	RefusedRefreshes int `json:"refusedRefreshes"`
}

// OAuth starts the authorization server for the test (see Everything for
// what happens without node or the installed package).
func OAuth(t testing.TB) *AuthServer {
	t.Helper()
	s := launch(t, "oauth", []string{"as.mjs"}, func(port int) string { return "http://127.0.0.1:" + strconv.Itoa(port) })
	return &AuthServer{Server: s}
}

// State reads what the server saw.
func (a *AuthServer) State(t testing.TB) AuthState {
	t.Helper()
	var st AuthState
	resp, err := http.Get(a.URL + "/_test/state")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	return st
}

// RevokeRefreshTokens makes every refresh token issued so far answer
// invalid_grant.
func (a *AuthServer) RevokeRefreshTokens(t testing.TB) { a.control(t, "/_test/revoke") }

// SetExpiresIn sets the expires_in of the tokens issued from now on; under
// a minute, clients treat a token as expired at once and refresh it before
// every use.
func (a *AuthServer) SetExpiresIn(t testing.TB, seconds int) {
	a.control(t, "/_test/expires?seconds="+strconv.Itoa(seconds))
}

// SetIss says whether the authorize redirect carries an RFC 9207 iss, and
// whether the metadata advertises it.
func (a *AuthServer) SetIss(t testing.TB, send, advertise bool) {
	a.control(t, "/_test/iss?send="+bit(send)+"&advertise="+bit(advertise))
}

func bit(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

func (a *AuthServer) control(t testing.TB, path string) {
	t.Helper()
	resp, err := http.Post(a.URL+path, "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: %s", path, resp.Status)
	}
}
