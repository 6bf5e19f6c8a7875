package workbench_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/agents-server/agents-server/workbench"
)

// hostSignIn is a host program's sign-in as the hook sees it: the
// "who" cookie names the user; "root" is an admin.
func hostSignIn(r *http.Request) (workbench.Identity, error) {
	c, err := r.Cookie("who")
	if err != nil || c.Value == "" {
		return workbench.Identity{}, errors.New("sign in at /login first")
	}
	return workbench.Identity{Username: c.Value, Admin: c.Value == "root"}, nil
}

// mounted serves a workbench under /agents behind hostSignIn, with the
// host's own page beside it.
func mounted(t *testing.T) (*fixture, *httptest.Server) {
	f := open(t)
	mux := http.NewServeMux()
	mux.Handle("/agents/", f.wb.Handler(workbench.MountOptions{Prefix: "/agents", SignIn: hostSignIn}))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "the host's page") })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return f, srv
}

func get(t *testing.T, url, who string, header map[string]string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if who != "" {
		req.AddCookie(&http.Cookie{Name: "who", Value: who})
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// TestTheMountServesUnderItsPrefixBehindTheHostsSignIn: the UI and the
// API answer under /agents for the host's signed-in user (an account made
// on first sight), and the hook's refusal is a 401 envelope.
func TestTheMountServesUnderItsPrefixBehindTheHostsSignIn(t *testing.T) {
	_, srv := mounted(t)
	if code, body := get(t, srv.URL+"/agents/api/v1/auth/me", "", nil); code != http.StatusUnauthorized || !strings.Contains(body, `"code":"unauthorized"`) ||
		!strings.Contains(body, "sign in at /login first") {
		t.Errorf("no host sign-in: %d %s", code, body)
	}
	// Public routes answer without the host's sign-in: the UI's files
	// (the app then finds itself signed out), health.
	if code, page := get(t, srv.URL+"/agents/", "", nil); code != http.StatusOK || !strings.Contains(page, `content="host"`) {
		t.Errorf("the UI without the host's sign-in: %d", code)
	}
	if code, _ := get(t, srv.URL+"/agents/health", "", nil); code != http.StatusOK {
		t.Errorf("health without the host's sign-in: %d", code)
	}
	code, body := get(t, srv.URL+"/agents/api/v1/auth/me", "ada", nil)
	var me struct {
		Username, Role string
	}
	if err := json.Unmarshal([]byte(body), &me); code != 200 || err != nil || me.Username != "ada" || me.Role != "member" {
		t.Errorf("me as ada: %d %s", code, body)
	}
	code, page := get(t, srv.URL+"/agents/s/some-session", "ada", nil)
	for _, want := range []string{`<base href="/agents/">`, `<meta name="agents-base" content="/agents">`, `<meta name="agents-auth" content="host">`} {
		if code != 200 || !strings.Contains(page, want) {
			t.Errorf("the UI page (%d) lacks %s:\n%.400s", code, want, page)
		}
	}
	if code, body := get(t, srv.URL+"/", "", nil); code != 200 || body != "the host's page" {
		t.Errorf("the host's own page: %d %s", code, body)
	}
	resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Get(srv.URL + "/agents")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	// (the host's ServeMux redirects before the mount would, with 307)
	if resp.StatusCode/100 != 3 || resp.Header.Get("Location") != "/agents/" {
		t.Errorf("the bare prefix: %d → %q", resp.StatusCode, resp.Header.Get("Location"))
	}
}

// TestTheHostsSignInIsNotACrossSiteCredential: a state-changing request
// from another origin is refused though the host's cookie came with it;
// a workbench bearer token still signs in without the host.
func TestTheHostsSignInIsNotACrossSiteCredential(t *testing.T) {
	f, srv := mounted(t)
	post := func(origin, who, token string) int {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/agents/api/v1/sessions", strings.NewReader(`{"name":"x"}`))
		req.Header.Set("Content-Type", "application/json")
		if origin != "" {
			req.Header.Set("Origin", origin)
			req.Header.Set("Sec-Fetch-Site", "cross-site")
		}
		if who != "" {
			req.AddCookie(&http.Cookie{Name: "who", Value: who})
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := post("https://evil.example", "ada", ""); code != http.StatusForbidden {
		t.Errorf("a cross-site POST riding the host's cookie: %d", code)
	}
	if code := post("", "ada", ""); code != http.StatusCreated {
		t.Errorf("a same-origin POST: %d", code)
	}
	if code := post("", "", f.wb.AdminToken()); code != http.StatusCreated {
		t.Errorf("a POST with a bearer token and no host sign-in: %d", code)
	}
	if code := post("", "", "wrong"); code != http.StatusUnauthorized {
		t.Errorf("a wrong bearer token: %d", code)
	}
}

// TestTheBusSignsInWithTheHostsSession: the event socket under the mount
// takes the upgrade request's host sign-in (an empty token in the auth
// message) and refuses without it.
func TestTheBusSignsInWithTheHostsSession(t *testing.T) {
	_, srv := mounted(t)
	url := "ws" + strings.TrimPrefix(srv.URL, "http") + "/agents/ws"
	dial := func(who string) string {
		h := http.Header{}
		if who != "" {
			h.Set("Cookie", "who="+who)
		}
		ws, resp, err := websocket.DefaultDialer.DialContext(context.Background(), url, h)
		if err != nil {
			if resp != nil {
				return resp.Status
			}
			t.Fatal(err)
		}
		defer ws.Close()
		if err := ws.WriteJSON(map[string]string{"type": "auth", "token": ""}); err != nil {
			t.Fatal(err)
		}
		var first struct {
			Type    string
			Payload struct{ Code, Message string }
		}
		if err := ws.ReadJSON(&first); err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(first.Type + " " + first.Payload.Code + " " + first.Payload.Message)
	}
	if got := dial("ada"); got != "auth.ok" {
		t.Errorf("with the host's sign-in: %s", got)
	}
	if got := dial(""); got != "error unauthorized not signed in: sign in at /login first" {
		t.Errorf("without it: %s", got)
	}
}

// TestAWebhookReachesTheMountWithoutTheHostsSignIn: a webhook trigger's
// URL names the mount, and a signed delivery from outside (no cookie, no
// token) is taken there.
func TestAWebhookReachesTheMountWithoutTheHostsSignIn(t *testing.T) {
	f, srv := mounted(t)
	call := func(method, path string, body any) map[string]any {
		data, _ := json.Marshal(body)
		req, _ := http.NewRequest(method, srv.URL+"/agents/api/v1"+path, strings.NewReader(string(data)))
		req.Header.Set("Authorization", "Bearer "+f.wb.AdminToken())
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		out := map[string]any{}
		_ = json.NewDecoder(resp.Body).Decode(&out)
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("%s %s: %d %v", method, path, resp.StatusCode, out)
		}
		return out
	}
	sess := call("POST", "/sessions", map[string]any{"agent_config_id": f.agentID, "name": "hooked"})
	trig := call("POST", "/triggers", map[string]any{"kind": "webhook", "target": "agent", "agent_config_id": f.agentID,
		"session_id": sess["id"], "brief": "Note what arrived."})
	hook, _ := trig["hook_url"].(string)
	if want := srv.URL + "/agents/hooks/" + trig["id"].(string); hook != want {
		t.Fatalf("hook_url %q; want %q", hook, want)
	}
	body := `{"event":"push"}`
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	mac := hmac.New(sha256.New, []byte(trig["secret"].(string)))
	mac.Write([]byte(ts + "." + body))
	req, _ := http.NewRequest(http.MethodPost, hook, strings.NewReader(body))
	req.Header.Set("X-Timestamp", ts)
	req.Header.Set("X-Signature-256", hex.EncodeToString(mac.Sum(nil)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("a signed delivery without the host's sign-in: %d %s", resp.StatusCode, msg)
	}
}

// TestTheProgramsToolsAreListedForTheAgentForm: GET /tools names the Go
// tools an agent can be given, with their derived schemas.
func TestTheProgramsToolsAreListedForTheAgentForm(t *testing.T) {
	f, srv := mounted(t)
	code, body := get(t, srv.URL+"/agents/api/v1/tools", "ada", nil)
	var listed []struct {
		Name, Origin string
		Parameters   json.RawMessage
	}
	if err := json.Unmarshal([]byte(body), &listed); code != 200 || err != nil {
		t.Fatalf("%d %s", code, body)
	}
	want := f.book.tool(t)
	for _, l := range listed {
		if l.Name == want.Name() {
			if l.Origin != "native" || string(l.Parameters) != string(want.Schema()) {
				t.Errorf("listed as %s with %s", l.Origin, l.Parameters)
			}
			return
		}
	}
	t.Errorf("save_note is not listed: %s", body)
}
