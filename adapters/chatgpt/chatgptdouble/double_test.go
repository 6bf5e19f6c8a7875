package chatgptdouble_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/agents-server/agents-server/adapters/chatgpt/chatgptdouble"
)

// The double refuses what the Codex backend refuses, with its words, so a
// bridge that sent any of it would fail its tests.
func TestBackendRefusesWhatCodexRefuses(t *testing.T) {
	t.Parallel()
	d := chatgptdouble.New(chatgptdouble.Options{})
	t.Cleanup(d.Close)
	access, _ := signIn(t, d)
	post := func(body map[string]any) (int, string) {
		raw, _ := json.Marshal(body)
		req, _ := http.NewRequest("POST", d.BackendURL()+"/responses", bytes.NewReader(raw))
		req.Header.Set("Authorization", "Bearer "+access)
		req.Header.Set("chatgpt-account-id", "acct_double")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	user := map[string]any{"type": "message", "role": "user", "content": "hi"}
	base := func(edit map[string]any) map[string]any {
		b := map[string]any{"model": "gpt-5-codex", "instructions": "Be brief.", "stream": true, "store": false, "input": []any{user},
			"prompt_cache_key": "conv-1", "parallel_tool_calls": false, "tool_choice": "auto", "include": []any{},
			"reasoning": map[string]any{"effort": "low"}, "text": map[string]any{"verbosity": "low"}}
		for k, v := range edit {
			if v == nil {
				delete(b, k)
			} else {
				b[k] = v
			}
		}
		return b
	}
	status, body := post(base(nil))
	if status != 200 || !strings.Contains(body, "response.completed") || !strings.Contains(body, "Codex heard: hi") {
		t.Fatalf("a request it takes = %d %s", status, body)
	}
	if key := d.Requests()[0].PromptCacheKey; key != "conv-1" {
		t.Fatalf("prompt_cache_key recorded as %q", key)
	}
	var own string
	for _, line := range strings.Split(body, "\n") {
		if i := strings.Index(line, `"encrypted_content":"`); i >= 0 && own == "" {
			own = strings.SplitN(line[i+len(`"encrypted_content":"`):], `"`, 2)[0]
		}
	}
	reasoning := func(enc string, content []any) map[string]any {
		return map[string]any{"type": "reasoning", "summary": []any{}, "encrypted_content": enc, "content": content}
	}
	for _, c := range []struct {
		name string
		body map[string]any
		says string
	}{
		{"not streaming", base(map[string]any{"stream": false}), "Stream must be set to true"},
		{"stream left out", base(map[string]any{"stream": nil}), "Stream must be set to true"},
		{"store true", base(map[string]any{"store": true}), "Store must be set to false"},
		{"store left out", base(map[string]any{"store": nil}), "Store must be set to false"},
		{"previous_response_id", base(map[string]any{"previous_response_id": "resp_1"}), "Unsupported parameter: previous_response_id"},
		{"max_output_tokens", base(map[string]any{"max_output_tokens": 40}), "Unsupported parameter: max_output_tokens"},
		{"temperature", base(map[string]any{"temperature": 0.2}), "Unsupported parameter: temperature"},
		{"top_p", base(map[string]any{"top_p": 0.9}), "Unsupported parameter: top_p"},
		{"a stored prompt", base(map[string]any{"prompt": map[string]any{"id": "pmpt_1"}}), "Unsupported parameter: prompt"},
		{"metadata", base(map[string]any{"metadata": map[string]any{"k": "v"}}), "Unsupported parameter: metadata"},
		{"instructions left out", base(map[string]any{"instructions": nil}), "Instructions are required"},
		{"empty instructions", base(map[string]any{"instructions": ""}), "Instructions are required"},
		{"an item id", base(map[string]any{"input": []any{map[string]any{"type": "message", "role": "user", "content": "hi", "id": "msg_1"}}}),
			"Items are not persisted when `store` is set to false"},
		{"foreign reasoning", base(map[string]any{"input": []any{user, reasoning("from-elsewhere", nil)}}), "could not be verified"},
		{"reasoning content", base(map[string]any{"input": []any{user, reasoning(own, []any{map[string]any{"type": "reasoning_text", "text": "x"}})}}),
			"Expected an array with maximum length 0"},
		{"an unknown field", base(map[string]any{"input": []any{map[string]any{"type": "message", "role": "user", "content": "hi", "status": "completed"}}}),
			"Unknown parameter: 'input[0].status'"},
		{"a model it does not serve", base(map[string]any{"model": "gpt-4o"}), "not supported when using Codex"},
	} {
		status, body := post(c.body)
		if status != 400 || !strings.Contains(body, c.says) {
			t.Errorf("%s: %d %s, want 400 saying %q", c.name, status, body, c.says)
		}
	}
	if status, body := post(base(map[string]any{"input": []any{user, reasoning(own, []any{}), user}})); status != 200 {
		t.Fatalf("its own reasoning handed back = %d %s", status, body)
	}
}

// signIn returns a fresh access and refresh token.
func signIn(t *testing.T, d *chatgptdouble.Double) (string, string) {
	t.Helper()
	verifier := strings.Repeat("a", 43)
	// S256 of 43 "a"s, base64url without padding
	const challenge = "ZtNPunH49FD35FWYhT5Tv8I7vRKQJ8uxMaL0_9eHjNA"
	q := url.Values{"client_id": {chatgptdouble.ClientID}, "redirect_uri": {chatgptdouble.RedirectURI}, "response_type": {"code"},
		"code_challenge_method": {"S256"}, "code_challenge": {challenge}, "state": {"s"}}
	cb, err := chatgptdouble.Consent(d.Issuer() + "/oauth/authorize?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(cb)
	resp, err := http.PostForm(d.Issuer()+"/oauth/token", url.Values{"grant_type": {"authorization_code"}, "client_id": {chatgptdouble.ClientID},
		"code": {u.Query().Get("code")}, "redirect_uri": {chatgptdouble.RedirectURI}, "code_verifier": {verifier}})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tok struct {
		AccessToken  string `json:"access_token"`
		RefreshToken string `json:"refresh_token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil || tok.AccessToken == "" {
		t.Fatalf("token: %v %+v (status %d)", err, tok, resp.StatusCode)
	}
	return tok.AccessToken, tok.RefreshToken
}

// The auth server revokes as RFC 7009 says and the Codex CLI's logout
// asks, form-encoded or JSON: a revoked refresh token no longer refreshes,
// the access token issued with it stops working, and any token is
// answered 200; only an unknown client is refused.
func TestAuthServerRevokes(t *testing.T) {
	t.Parallel()
	d := chatgptdouble.New(chatgptdouble.Options{})
	t.Cleanup(d.Close)
	send := func(path, contentType string, body []byte) int {
		resp, err := http.Post(d.Issuer()+path, contentType, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	form := func(path string, v url.Values) int {
		return send(path, "application/x-www-form-urlencoded", []byte(v.Encode()))
	}
	asJSON := func(path string, v map[string]string) int {
		raw, _ := json.Marshal(v)
		return send(path, "application/json", raw)
	}
	refreshes := func(rt string) int {
		return form("/oauth/token", url.Values{"grant_type": {"refresh_token"}, "client_id": {chatgptdouble.ClientID}, "refresh_token": {rt}})
	}
	backend := func(access string) int {
		req, _ := http.NewRequest("GET", d.BackendURL()+"/models?client_version=1", nil)
		req.Header.Set("Authorization", "Bearer "+access)
		req.Header.Set("chatgpt-account-id", "acct_double")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}

	access, refresh := signIn(t, d)
	kept, keptRefresh := signIn(t, d)
	if got := form("/oauth/revoke", url.Values{"token": {refresh}, "client_id": {"someone-else"}}); got != 401 {
		t.Fatalf("an unknown client's revocation = %d", got)
	}
	if got := form("/oauth/revoke", url.Values{"client_id": {chatgptdouble.ClientID}}); got != 400 {
		t.Fatalf("a revocation without a token = %d", got)
	}
	if got := form("/oauth/revoke", url.Values{"token": {refresh}, "token_type_hint": {"refresh_token"}, "client_id": {chatgptdouble.ClientID}}); got != 200 {
		t.Fatalf("revocation = %d", got)
	}
	if got := refreshes(refresh); got != 401 {
		t.Fatalf("a revoked refresh token refreshed: %d", got)
	}
	if got := backend(access); got != 401 {
		t.Fatalf("the access token of a revoked grant = %d", got)
	}
	if got := asJSON("/oauth/revoke", map[string]string{"token": "rt_never_issued", "client_id": chatgptdouble.ClientID}); got != 200 {
		t.Fatalf("an unknown token's revocation = %d, want 200", got)
	}
	if backend(kept) != 200 || refreshes(keptRefresh) != 200 {
		t.Fatal("revoking one sign-in ended another")
	}
	if n := d.Revocations(); n != 2 {
		t.Fatalf("%d revocations counted, want 2", n)
	}
}
