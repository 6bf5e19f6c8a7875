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
	access := signIn(t, d)
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
		b := map[string]any{"model": "gpt-5-codex", "stream": true, "store": false, "input": []any{user}}
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

func signIn(t *testing.T, d *chatgptdouble.Double) string {
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
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil || tok.AccessToken == "" {
		t.Fatalf("token: %v %+v (status %d)", err, tok, resp.StatusCode)
	}
	return tok.AccessToken
}
