package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// The single sign-on harness: a real OpenID Provider (tools/oidcop, the
// zitadel OP implementation) started per test on loopback, and a browser
// as a Go client with a cookie jar that signs in on the provider's own
// login page.

// opUser is one account of the provider.
type opUser struct {
	Username      string    `json:"username"`
	Password      string    `json:"password"`
	Email         string    `json:"email"`
	EmailVerified bool      `json:"email_verified"`
	Groups        *[]string `json:"groups"` // nil: the ID token has no groups claim
}

// groups is a groups claim.
func groups(g ...string) *[]string { return &g }

const opClientID, opClientSecret = "agents-web", "agents-web-secret"

var (
	oidcopOnce sync.Once
	oidcopPath string
	oidcopErr  error
)

// oidcopBinary builds the provider once per test process (Go caches the
// build across processes).
func oidcopBinary(t *testing.T) string {
	t.Helper()
	oidcopOnce.Do(func() {
		dir, err := os.MkdirTemp("", "oidcop")
		if err != nil {
			oidcopErr = err
			return
		}
		oidcopPath = filepath.Join(dir, "oidcop")
		out, err := exec.Command("go", "build", "-C", filepath.Join("..", "..", "tools"), "-o", oidcopPath, "./oidcop").CombinedOutput()
		if err != nil {
			oidcopErr = errors.New(string(out))
		}
	})
	if oidcopErr != nil {
		t.Fatalf("build tools/oidcop: %v", oidcopErr)
	}
	return oidcopPath
}

// startOP runs the provider with the client registered for redirectURIs
// and returns its issuer URL; it stops when the test ends.
func startOP(t *testing.T, redirectURIs []string, users []opUser) string {
	t.Helper()
	list, _ := json.Marshal(users)
	args := []string{"--client-id", opClientID, "--client-secret", opClientSecret, "--users", string(list)}
	for _, u := range redirectURIs {
		args = append(args, "--redirect-uri", u)
	}
	cmd := exec.Command(oidcopBinary(t), args...)
	cmd.Stderr = t.Output()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	issuer, ok := strings.CutPrefix(strings.TrimSpace(line), "oidcop ready: ")
	if err != nil || !ok {
		t.Fatalf("the provider did not start: %q %v", line, err)
	}
	go func() { _, _ = io.Copy(io.Discard, out) }()
	return issuer
}

// freeAddr is a loopback address nothing listens on now: the server's
// base URL (and so the provider's registered redirect) must be known
// before it starts.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// ssoServer is a server signing in with the provider.
type ssoServer struct {
	*harness
	issuer string
}

// startSSO starts the provider with users, then a server using it;
// adjust changes the server's config before it starts.
func startSSO(t *testing.T, users []opUser, adjust func(*config)) *ssoServer {
	t.Helper()
	addr := freeAddr(t)
	base := "http://" + addr
	issuer := startOP(t, []string{base + "/api/v1/auth/oidc/callback"}, users)
	cfg := testConfig(t)
	cfg.Addr, cfg.BaseURL = addr, base
	cfg.SSO = ssoConfig{Issuer: issuer, ClientID: opClientID, Secret: opClientSecret, Name: "Test IdP", Groups: "groups"}
	if adjust != nil {
		adjust(&cfg)
	}
	return &ssoServer{harness: startServer(t, cfg), issuer: issuer}
}

// ssoBrowser is a browser: a cookie jar that stops at the workbench's landing (an
// address with a fragment: #token=… or #signin_error=…), or at a stop
// address the test names.
type ssoBrowser struct {
	t      *testing.T
	client *http.Client
	stopAt func(*url.URL) bool
}

func newSSOBrowser(t *testing.T) *ssoBrowser {
	jar, _ := cookiejar.New(nil)
	b := &ssoBrowser{t: t}
	b.client = &http.Client{Jar: jar, Timeout: 30 * time.Second, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if req.URL.Fragment != "" || (b.stopAt != nil && b.stopAt(req.URL)) {
			return http.ErrUseLastResponse
		}
		return nil
	}}
	return b
}

var loginFormID = regexp.MustCompile(`name="id" value="([^"]+)"`)

// toProvider starts a sign-in at base and follows it to the provider's
// login page; it returns the page's address and the auth request's id.
func (b *ssoBrowser) toProvider(base string) (*url.URL, string) {
	b.t.Helper()
	resp, err := b.client.Get(base + "/api/v1/auth/oidc/start")
	if err != nil {
		b.t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := loginFormID.FindSubmatch(body)
	if resp.StatusCode != 200 || m == nil {
		b.t.Fatalf("the start did not reach the provider's login page: %d %s", resp.StatusCode, body)
	}
	return resp.Request.URL, string(m[1])
}

// login posts the provider's login form and follows the redirects until
// the browser stops; it returns where it stopped.
func (b *ssoBrowser) login(page *url.URL, id, username, password string) *url.URL {
	b.t.Helper()
	form := url.Values{"id": {id}, "username": {username}, "password": {password}}
	resp, err := b.client.PostForm(page.Scheme+"://"+page.Host+"/login/username", form)
	if err != nil {
		b.t.Fatal(err)
	}
	return b.stoppedAt(resp)
}

// get follows an address until the browser stops.
func (b *ssoBrowser) get(u string) *url.URL {
	b.t.Helper()
	resp, err := b.client.Get(u)
	if err != nil {
		b.t.Fatal(err)
	}
	return b.stoppedAt(resp)
}

func (b *ssoBrowser) stoppedAt(resp *http.Response) *url.URL {
	b.t.Helper()
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		b.t.Fatalf("the browser stopped at %s with %d: %s", resp.Request.URL, resp.StatusCode, body)
	}
	loc, err := resp.Request.URL.Parse(resp.Header.Get("Location"))
	if err != nil {
		b.t.Fatal(err)
	}
	return loc
}

// landing reads the workbench's landing address: the token, or the
// refusal.
func landing(t *testing.T, u *url.URL) (token, refusal string) {
	t.Helper()
	frag, err := url.ParseQuery(u.Fragment)
	if err != nil {
		t.Fatalf("landing %s: %v", u, err)
	}
	return frag.Get("token"), frag.Get("signin_error")
}

// signIn signs username in through the provider in a fresh browser and
// returns the session token, or the refusal.
func (s *ssoServer) signIn(username, password string) (token, refusal string) {
	s.t.Helper()
	b := newSSOBrowser(s.t)
	page, id := b.toProvider(s.base)
	at := b.login(page, id, username, password)
	if !strings.HasPrefix(at.String(), s.base+"/") {
		s.t.Fatalf("the sign-in landed at %s, not on the workbench", at)
	}
	return landing(s.t, at)
}
