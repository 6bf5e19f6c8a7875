package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"

	"github.com/agents-server/agents-server/adapters/sqlstore/pgtest"
)

// revokeClient calls replicas from one loopback address of its own: each
// try spends its own address's budgets (a refused token spends the
// failed-authentication one, ten deep), as many people would.
type revokeClient struct {
	t    *testing.T
	http *http.Client
}

func newRevokeClient(t *testing.T, try int) *revokeClient {
	ip := net.IPv4(127, 0, 3, byte(try+1))
	dial := &net.Dialer{LocalAddr: &net.TCPAddr{IP: ip}}
	tr := &http.Transport{DialContext: dial.DialContext}
	t.Cleanup(tr.CloseIdleConnections)
	return &revokeClient{t: t, http: &http.Client{Transport: tr}}
}

// call sends a JSON request to p with token and returns the status and
// the decoded answer.
func (c *revokeClient) call(p *process, method, path, token string, body any) (int, map[string]any) {
	c.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, p.url+path, rd)
	req.Header.Set("Authorization", "Bearer "+token)
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	json.Unmarshal(raw, &out)
	return resp.StatusCode, out
}

// must is call with the status the step needs.
func (c *revokeClient) must(p *process, method, path, token string, body any, want int) map[string]any {
	c.t.Helper()
	code, out := c.call(p, method, path, token, body)
	if code != want {
		c.t.Fatalf("%s %s on %s: %d %v, want %d", method, path, p.url, code, out, want)
	}
	return out
}

// TestARevokeAnsweredOnOneReplicaHoldsOnEveryReplica is the revocation
// guarantee on real binaries: once a replica has answered a change that
// ends a credential — a token revoked, a sign-out, a user disabled,
// demoted or deleted — no replica accepts the credential (or its old
// role) on the very next request, though each has it cached. Every try
// uses the credential on A and C first (so both hold it verified), makes
// the change on B, and calls A and C at once after B's answer.
func TestARevokeAnsweredOnOneReplicaHoldsOnEveryReplica(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t, "replica revocation suite on Postgres")
	a, b, c := startReplica(t, url), startReplica(t, url), startReplica(t, url)
	admin := a.token // the launch token: the bootstrap admin's, valid on every replica
	const tries = 30

	// signIn makes a user of role on A and signs them in there.
	signIn := func(cl *revokeClient, try int, role string) (id, token string) {
		name := fmt.Sprintf("user-%d", try)
		id = cl.must(a, "POST", "/api/v1/auth/users", admin, map[string]any{"username": name, "password": "a long password", "role": role}, 201)["id"].(string)
		token = cl.must(a, "POST", "/api/v1/auth/login", "", map[string]any{"username": name, "password": "a long password"}, 200)["token"].(string)
		return id, token
	}
	// cached uses token twice on A and C, answering want: the first use
	// reads the store, the second is answered from the cache.
	cached := func(cl *revokeClient, token, path string, want int) {
		for _, p := range []*process{a, c, a, c} {
			cl.must(p, "GET", path, token, nil, want)
		}
	}
	// refused checks A and C, right after B's answer.
	refused := func(cl *revokeClient, try int, what, token, path string, want int) {
		for _, p := range []*process{a, c} {
			if code, out := cl.call(p, "GET", path, token, nil); code != want {
				t.Errorf("try %d (%s): %s answered %s %d %v after B's answer, want %d", try, what, p.url, path, code, out, want)
			}
		}
	}

	for try := range tries {
		cl := newRevokeClient(t, try)
		switch try % 5 {
		case 0: // a personal token revoked
			tok := cl.must(a, "POST", "/api/v1/auth/tokens", admin, map[string]any{"name": fmt.Sprint("try ", try)}, 201)
			text := tok["token"].(string)
			cached(cl, text, "/api/v1/auth/me", 200)
			cl.must(b, "DELETE", "/api/v1/auth/tokens/"+tok["id"].(string), admin, nil, 204)
			refused(cl, try, "token revoked", text, "/api/v1/auth/me", 401)
		case 1: // a sign-out
			_, token := signIn(cl, try, "member")
			cached(cl, token, "/api/v1/auth/me", 200)
			cl.must(b, "POST", "/api/v1/auth/logout", token, nil, 204)
			refused(cl, try, "signed out", token, "/api/v1/auth/me", 401)
		case 2: // a user disabled
			id, token := signIn(cl, try, "member")
			cached(cl, token, "/api/v1/auth/me", 200)
			cl.must(b, "PATCH", "/api/v1/auth/users/"+id, admin, map[string]any{"disabled": true}, 204)
			refused(cl, try, "user disabled", token, "/api/v1/auth/me", 401)
		case 3: // an admin demoted: the token stands, the role does not
			id, token := signIn(cl, try, "admin")
			cached(cl, token, "/api/v1/auth/users", 200)
			cl.must(b, "PATCH", "/api/v1/auth/users/"+id, admin, map[string]any{"role": "member"}, 204)
			refused(cl, try, "admin demoted", token, "/api/v1/auth/users", 403)
		case 4: // a user deleted
			id, token := signIn(cl, try, "member")
			cached(cl, token, "/api/v1/auth/me", 200)
			cl.must(b, "DELETE", "/api/v1/auth/users/"+id, admin, nil, 204)
			refused(cl, try, "user deleted", token, "/api/v1/auth/me", 401)
		}
		if t.Failed() {
			t.FailNow()
		}
	}
}
