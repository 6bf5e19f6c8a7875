package main

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/agents-server/agents-server/workbench"
)

// TestTheMountExampleServesTheWorkbenchBehindItsSignIn: under /agents the
// service serves the UI and the API to its signed-in user; its hook
// refuses the API without the sign-in (401) and a forged cookie, and
// pages send the browser to the service's sign-in.
func TestTheMountExampleServesTheWorkbenchBehindItsSignIn(t *testing.T) {
	wb, err := workbench.Open(context.Background(), workbench.Options{DataDir: t.TempDir(),
		PasswordParams: workbench.PasswordParams{MemoryKiB: 64, Time: 1, Threads: 1}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { wb.Close() })
	srv := httptest.NewServer(newService(wb, map[string]account{"ada": {password: "pw", admin: true}}))
	t.Cleanup(srv.Close)
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(path, accept string) (*http.Response, string) {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		resp, err := browser.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp, string(body)
	}

	if resp, body := get("/agents/api/v1/auth/me", ""); resp.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "sign in to the service first") {
		t.Errorf("the API before signing in: %d %s", resp.StatusCode, body)
	}
	if resp, _ := get("/agents/settings/providers", "text/html"); resp.StatusCode != http.StatusSeeOther ||
		resp.Header.Get("Location") != "/login?next=/agents/settings/providers" {
		t.Errorf("a page before signing in: %d → %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	jar.SetCookies(mustURL(t, srv.URL), []*http.Cookie{{Name: cookieName, Value: "YWRh.forged"}})
	if resp, _ := get("/agents/api/v1/auth/me", ""); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a forged cookie: %d", resp.StatusCode)
	}

	resp, err := browser.PostForm(srv.URL+"/login", url.Values{"user": {"ada"}, "password": {"pw"}, "next": {"/agents/"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/agents/" {
		t.Fatalf("sign-in: %d → %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	resp, page := get("/agents/", "text/html")
	if resp.StatusCode != 200 || !strings.Contains(page, `<base href="/agents/">`) || !strings.Contains(page, `content="host"`) {
		t.Fatalf("the UI: %d %.300s", resp.StatusCode, page)
	}
	// Every asset the page names is served under the mount (a build
	// without the UI has none to check).
	for _, m := range regexp.MustCompile(`(?:src|href)="\./([^"]+)"`).FindAllStringSubmatch(page, -1) {
		if resp, _ := get("/agents/"+m[1], ""); resp.StatusCode != 200 {
			t.Errorf("the page's %s: %d", m[1], resp.StatusCode)
		}
	}
	if resp, body := get("/agents/api/v1/auth/me", ""); resp.StatusCode != 200 || !strings.Contains(body, `"username":"ada"`) ||
		!strings.Contains(body, `"role":"admin"`) {
		t.Errorf("the API signed in: %d %s", resp.StatusCode, body)
	}
	if resp, body := get("/agents/api/v1/provider-types", ""); resp.StatusCode != 200 || !strings.Contains(body, `"openai"`) {
		t.Errorf("an API listing: %d %.200s", resp.StatusCode, body)
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// TestSignInSendsTheBrowserOnlyToThisSite: the next a sign-in redirects to
// is a path of the service; anything a browser could read as another
// site — //host, /\host (a backslash reads as a slash), a scheme, a
// control character a browser drops — sends it home instead.
func TestSignInSendsTheBrowserOnlyToThisSite(t *testing.T) {
	wb, err := workbench.Open(context.Background(), workbench.Options{DataDir: t.TempDir(),
		PasswordParams: workbench.PasswordParams{MemoryKiB: 64, Time: 1, Threads: 1}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { wb.Close() })
	srv := httptest.NewServer(newService(wb, map[string]account{"ada": {password: "pw"}}))
	t.Cleanup(srv.Close)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for next, want := range map[string]string{
		"/agents/":                        "/agents/",
		"/agents/settings?tab=providers":  "/agents/settings?tab=providers",
		"/\\evil.example/x":               "/",
		"/\\/evil.example":                "/",
		"\\\\evil.example":                "/",
		"//evil.example/x":                "/",
		"/%2F%2Fevil.example":             "/",
		"/%5Cevil.example":                "/",
		"/\t/evil.example":                "/",
		"https://evil.example/":           "/",
		"javascript:alert(1)":             "/",
		"evil.example":                    "/",
		"":                                "/",
		"/agents/a b":                     "/agents/a b",
		"/\x7f/evil.example":              "/",
		"/agents/\u00e9t\u00e9?x=%2F%2Fy": "/agents/\u00e9t\u00e9?x=%2F%2Fy",
	} {
		resp, err := client.PostForm(srv.URL+"/login", url.Values{"user": {"ada"}, "password": {"pw"}, "next": {next}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		loc, err := url.Parse(resp.Header.Get("Location"))
		if resp.StatusCode != http.StatusSeeOther || err != nil || loc.Host != "" {
			t.Errorf("next %q: %d → %q", next, resp.StatusCode, resp.Header.Get("Location"))
			continue
		}
		if w := mustURL(t, want); loc.Path != w.Path || loc.RawQuery != w.RawQuery {
			t.Errorf("next %q → %q, want %q", next, loc.String(), want)
		}
	}
}
