package main

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agents-server/agents-server/adapters/chatgpt/chatgptdouble"
	"github.com/agents-server/agents-server/adapters/httpapi"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/models"
	"github.com/agents-server/agents-server/ports"
	"github.com/agents-server/agents-server/ports/porttest"
)

// The ChatGPT suites run against chatgptdouble: OpenAI's auth server and
// the Codex backend, served locally and refusing what the real ones do.

// chat runs input on a session and waits for the run's end.
func (h *harness) chat(token, sessionID, input string) httpapi.RunStateView {
	h.t.Helper()
	var v httpapi.RunStateView
	h.call("POST", "/api/v1/sessions/"+sessionID+"/runs", token, map[string]any{"input": input}, "Prefer", "wait=30").
		want(h.t, 200).decode(h.t, &v)
	return v
}

// signInChatGPT starts a sign-in, consents at the double, and pastes the
// URL the browser landed on back.
func (h *harness) signInChatGPT(token, providerID string) httpapi.ProviderView {
	h.t.Helper()
	var login httpapi.ChatGPTLoginView
	h.call("POST", "/api/v1/providers/"+providerID+"/chatgpt/login", token, nil).want(h.t, 200).decode(h.t, &login)
	cb, err := chatgptdouble.Consent(login.AuthorizeURL)
	if err != nil {
		h.t.Fatal(err)
	}
	var p httpapi.ProviderView
	h.call("POST", "/api/v1/providers/"+providerID+"/chatgpt/complete", token, map[string]any{"callback_url": cb}).want(h.t, 200).decode(h.t, &p)
	return p
}

func (h *harness) provider(token, id string) httpapi.ProviderView {
	h.t.Helper()
	var p httpapi.ProviderView
	h.call("GET", "/api/v1/providers/"+id, token, nil).want(h.t, 200).decode(h.t, &p)
	return p
}

// One sign-in shared by every agent on the provider, end to end: a run
// before it fails at once naming it; login → complete; a chat and its
// title (a blocking caller, served by a stream: the backend refuses any
// other); the access token expiring under two concurrent runs, refreshed
// once and written back; a restart, still signed in; a token refused
// before its expiry, refreshed; a revoked refresh token signing the
// provider out; logout.
func TestChatGPTSignInRunsRefreshesAndSurvivesRestart(t *testing.T) {
	t.Parallel()
	clk := porttest.NewClock(time.Now())
	d := chatgptdouble.New(chatgptdouble.Options{AccessTTL: time.Hour, Now: clk.Now})
	t.Cleanup(d.Close)
	cfg := testConfig(t)
	cfg.Clock, cfg.ChatGPTAuthURL, cfg.ChatGPTBackendURL = clk, d.Issuer(), d.BackendURL()
	h := startServer(t, cfg)
	ann, bob := h.member("ann"), h.member("bob")

	prov := h.createProvider(ann, map[string]any{"name": "my chatgpt", "auth_mode": "chatgpt_login"})
	if prov.ChatGPTLoggedIn {
		t.Fatalf("new provider = %+v", prov)
	}
	agent := h.createAgent(ann, map[string]any{"name": "coder", "model": "gpt-5-codex", "provider_id": prov.ID})
	second := h.createAgent(ann, map[string]any{"name": "reviewer", "model": "gpt-5", "provider_id": prov.ID})
	session := func(agentID string) string {
		return h.createSession(ann, map[string]any{"agent_config_id": agentID}).ID
	}

	// Not signed in: the run fails at once, naming the sign-in; nothing is sent.
	v := h.chat(ann, session(agent.ID), "hi")
	if v.Status != "error" || v.Error == nil || v.Error.Code != domain.CodeConfigError ||
		!strings.Contains(v.Error.Message, "not signed in") || !strings.Contains(v.Error.Message, "Sign in with ChatGPT") {
		t.Fatalf("run before signing in = %+v %+v", v, v.Error)
	}
	if n := len(d.Requests()); n != 0 {
		t.Fatalf("%d calls reached the backend without a sign-in", n)
	}

	// Who may sign in, and what a bad paste gets.
	h.call("POST", "/api/v1/providers/"+prov.ID+"/chatgpt/login", bob, nil).wantErr(t, 404, "not_found")
	keyed := h.createProvider(ann, map[string]any{"name": "keyed", "api_key": "sk-x"})
	h.call("POST", "/api/v1/providers/"+keyed.ID+"/chatgpt/login", ann, nil).wantErr(t, 400, "validation")
	var login httpapi.ChatGPTLoginView
	h.call("POST", "/api/v1/providers/"+prov.ID+"/chatgpt/login", ann, nil).want(t, 200).decode(t, &login)
	if login.RedirectURI != ports.ChatGPTRedirectURI || !strings.HasPrefix(login.AuthorizeURL, d.Issuer()+"/oauth/authorize?") ||
		!login.ExpiresAt.After(clk.Now()) {
		t.Fatalf("login = %+v", login)
	}
	cb, err := chatgptdouble.Consent(login.AuthorizeURL)
	if err != nil {
		t.Fatal(err)
	}
	complete := func(token, callback string) reply {
		return h.call("POST", "/api/v1/providers/"+prov.ID+"/chatgpt/complete", token, map[string]any{"callback_url": callback})
	}
	for _, bad := range []string{"", "not a url", ports.ChatGPTRedirectURI + "?code=c&state=forged"} {
		if e := complete(ann, bad).wantErr(t, 400, "validation"); e.Fields["callback_url"] == "" {
			t.Fatalf("%q: %+v", bad, e)
		}
	}
	var p httpapi.ProviderView
	complete(ann, cb).want(t, 200).decode(t, &p)
	if !p.ChatGPTLoggedIn || p.APIKey != "" {
		t.Fatalf("after complete = %+v", p)
	}
	complete(ann, cb).wantErr(t, 400, "validation") // a callback redeems once
	var st httpapi.ChatGPTStatusView
	h.call("GET", "/api/v1/providers/"+prov.ID+"/chatgpt/status", ann, nil).want(t, 200).decode(t, &st)
	if !st.LoggedIn || st.Email != "ann@example.com" || st.Plan != "plus" || st.AccountID != "acct_double" || st.ExpiresAt == nil {
		t.Fatalf("status = %+v", st)
	}
	var list []httpapi.ProviderView
	h.call("GET", "/api/v1/providers", ann, nil).want(t, 200).decode(t, &list)
	for _, l := range list {
		if l.ID == prov.ID && !l.ChatGPTLoggedIn {
			t.Fatalf("list = %+v", list)
		}
	}

	// A chat, and the session's title from the same provider.
	sid := session(agent.ID)
	if v := h.chat(ann, sid, "hello codex"); v.Status != "completed" || v.FinalOutput == nil || *v.FinalOutput != "Codex heard: hello codex" {
		t.Fatalf("chat = %+v %+v", v, v.Error)
	}
	titled := false
	for i, r := range d.Requests() {
		if r.Status != 200 || r.Body["stream"] != true || r.Body["store"] != false {
			t.Fatalf("backend request %d = %+v", i, r)
		}
		titled = titled || strings.Contains(jsonText(r.Body["input"]), models.TitlePrefix+"hello codex")
	}
	var s httpapi.SessionView
	h.call("GET", "/api/v1/sessions/"+sid, ann, nil).want(t, 200).decode(t, &s)
	if !titled || s.Name != "hello codex" {
		t.Fatalf("the title call did not go through the backend (title %q, calls %+v)", s.Name, d.Requests())
	}
	if d.Refreshes() != 0 {
		t.Fatalf("%d refreshes of a fresh token", d.Refreshes())
	}

	// The access token expires: two runs at once, on two agents, share one refresh.
	clk.Advance(2 * time.Hour)
	sessions := []string{session(agent.ID), session(second.ID)}
	var wg sync.WaitGroup
	outs := make([]httpapi.RunStateView, 2)
	for i, sid := range sessions {
		wg.Go(func() { outs[i] = h.chat(ann, sid, "after expiry") })
	}
	wg.Wait()
	for _, o := range outs {
		if o.Status != "completed" {
			t.Fatalf("run after expiry = %+v %+v", o, o.Error)
		}
	}
	if n, tried := d.Refreshes(), d.RefreshAttempts(); n != 1 || tried != 1 {
		t.Fatalf("%d refreshes (%d asked for) for two concurrent runs, want 1", n, tried)
	}

	// A restart: still signed in, with the refreshed token (no new refresh).
	h.stop()
	h = startServer(t, cfg)
	if p := h.provider(ann, prov.ID); !p.ChatGPTLoggedIn {
		t.Fatalf("after restart = %+v", p)
	}
	if v := h.chat(ann, session(agent.ID), "after restart"); v.Status != "completed" {
		t.Fatalf("run after restart = %+v %+v", v, v.Error)
	}
	if n := d.Refreshes(); n != 1 {
		t.Fatalf("%d refreshes after restart, want 1", n)
	}

	// The backend refuses the token before its expiry: refreshed, and the
	// call made once more.
	d.InvalidateAccess()
	if v := h.chat(ann, session(agent.ID), "after invalidation"); v.Status != "completed" {
		t.Fatalf("run after the token was invalidated = %+v %+v", v, v.Error)
	}
	if n := d.Refreshes(); n != 2 {
		t.Fatalf("%d refreshes after the token was invalidated, want 2", n)
	}

	// The refresh token is revoked: the next refresh signs the provider out.
	d.RevokeAll()
	clk.Advance(2 * time.Hour)
	// A named session: no title call races the run to the refused refresh
	// (the loser would read "not signed in" rather than "sign in again").
	named := h.createSession(ann, map[string]any{"agent_config_id": agent.ID, "name": "after revoke"}).ID
	v = h.chat(ann, named, "after revoke")
	if v.Status != "error" || v.Error == nil || v.Error.Code != domain.CodeConfigError || !strings.Contains(v.Error.Message, "sign in again") {
		t.Fatalf("run after revoke = %+v %+v", v, v.Error)
	}
	if p := h.provider(ann, prov.ID); p.ChatGPTLoggedIn {
		t.Fatalf("still signed in after a revoked refresh: %+v", p)
	}

	// Sign in again, then out.
	if p := h.signInChatGPT(ann, prov.ID); !p.ChatGPTLoggedIn {
		t.Fatalf("signed in again = %+v", p)
	}
	h.call("POST", "/api/v1/providers/"+prov.ID+"/chatgpt/logout", bob, nil).wantErr(t, 404, "not_found")
	h.call("POST", "/api/v1/providers/"+prov.ID+"/chatgpt/logout", ann, nil).want(t, 200).decode(t, &p)
	if p.ChatGPTLoggedIn {
		t.Fatalf("after logout = %+v", p)
	}
	if v := h.chat(ann, session(agent.ID), "after logout"); v.Status != "error" || !strings.Contains(v.Error.Message, "not signed in") {
		t.Fatalf("run after logout = %+v %+v", v, v.Error)
	}
}

// A sign-in is sealed at rest and waits 10 minutes for its callback; a
// provider that stops signing in with ChatGPT forgets its sign-in in the
// same write; the provider's models come from the backend.
func TestChatGPTSignInIsSealedExpiresAndGoesWithTheAuthMode(t *testing.T) {
	t.Parallel()
	clk := porttest.NewClock(time.Now())
	d := chatgptdouble.New(chatgptdouble.Options{Now: clk.Now})
	t.Cleanup(d.Close)
	cfg := testConfig(t)
	cfg.Clock, cfg.SecretKey, cfg.ChatGPTAuthURL, cfg.ChatGPTBackendURL = clk, newKey(t), d.Issuer(), d.BackendURL()
	h := startServer(t, cfg)
	tok := h.member("cg")
	prov := h.createProvider(tok, map[string]any{"name": "chatgpt", "auth_mode": "chatgpt_login"})
	h.call("GET", "/api/v1/providers/"+prov.ID+"/models", tok, nil).wantErr(t, 400, "validation")

	var login httpapi.ChatGPTLoginView
	h.call("POST", "/api/v1/providers/"+prov.ID+"/chatgpt/login", tok, nil).want(t, 200).decode(t, &login)
	cb, err := chatgptdouble.Consent(login.AuthorizeURL)
	if err != nil {
		t.Fatal(err)
	}
	clk.Advance(11 * time.Minute)
	e := h.call("POST", "/api/v1/providers/"+prov.ID+"/chatgpt/complete", tok, map[string]any{"callback_url": cb}).wantErr(t, 400, "validation")
	if !strings.Contains(e.Fields["callback_url"], "expired") {
		t.Fatalf("a late paste = %+v", e)
	}

	h.signInChatGPT(tok, prov.ID)
	var models httpapi.ProviderModelsView
	h.call("GET", "/api/v1/providers/"+prov.ID+"/models", tok, nil).want(t, 200).decode(t, &models)
	if len(models.Models) == 0 || models.Models[0].ID != "gpt-5-codex" {
		t.Fatalf("models = %+v", models)
	}
	h.stop()
	for _, secret := range d.Tokens() {
		if hits := filesContain(t, cfg.DataDir, secret); len(hits) > 0 {
			t.Fatalf("a ChatGPT token in plaintext in %v", hits)
		}
	}
	h = startServer(t, cfg)

	var p httpapi.ProviderView
	h.call("PUT", "/api/v1/providers/"+prov.ID, tok, map[string]any{"name": "chatgpt", "api_key": "sk-now"}).want(t, 200).decode(t, &p)
	h.call("PUT", "/api/v1/providers/"+prov.ID, tok, map[string]any{"name": "chatgpt", "auth_mode": "chatgpt_login"}).want(t, 200).decode(t, &p)
	if p.ChatGPTLoggedIn {
		t.Fatalf("the sign-in survived a switch to api_key and back: %+v", p)
	}

	// A shared provider's sign-in serves everyone; whose account it is, is
	// for those who manage it.
	shared := h.createProvider(h.admin, map[string]any{"name": "team chatgpt", "auth_mode": "chatgpt_login", "scope": "global"})
	h.signInChatGPT(h.admin, shared.ID)
	h.call("POST", "/api/v1/providers/"+shared.ID+"/chatgpt/logout", tok, nil).wantErr(t, 403, "forbidden")
	var st httpapi.ChatGPTStatusView
	h.call("GET", "/api/v1/providers/"+shared.ID+"/chatgpt/status", tok, nil).want(t, 200).decode(t, &st)
	if !st.LoggedIn || st.Email != "" || st.AccountID != "" || st.Plan != "plus" {
		t.Fatalf("a member reads the shared sign-in as %+v", st)
	}
	h.call("GET", "/api/v1/providers/"+shared.ID+"/chatgpt/status", h.admin, nil).want(t, 200).decode(t, &st)
	if st.Email != "ann@example.com" {
		t.Fatalf("the admin reads the shared sign-in as %+v", st)
	}
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// A pasted callback redeems only the sign-in its owner started on its
// provider: another person's paste (on their own provider, or on the same
// shared one) is refused and leaves the owner's sign-in waiting, and the
// owner's own paste still signs in.
func TestChatGPTSignInIsRedeemedOnlyByItsOwner(t *testing.T) {
	t.Parallel()
	d := chatgptdouble.New(chatgptdouble.Options{})
	t.Cleanup(d.Close)
	cfg := testConfig(t)
	cfg.ChatGPTAuthURL, cfg.ChatGPTBackendURL = d.Issuer(), d.BackendURL()
	h := startServer(t, cfg)
	ann, bob := h.member("ann"), h.member("bob")
	h.createUser("root2", "password-of-root2", "admin")
	root2 := h.login("root2", "password-of-root2")

	annProv := h.createProvider(ann, map[string]any{"name": "ann chatgpt", "auth_mode": "chatgpt_login"})
	bobProv := h.createProvider(bob, map[string]any{"name": "bob chatgpt", "auth_mode": "chatgpt_login"})
	shared := h.createProvider(h.admin, map[string]any{"name": "team chatgpt", "auth_mode": "chatgpt_login", "scope": "global"})
	started := func(token, providerID string) string {
		var login httpapi.ChatGPTLoginView
		h.call("POST", "/api/v1/providers/"+providerID+"/chatgpt/login", token, nil).want(t, 200).decode(t, &login)
		cb, err := chatgptdouble.Consent(login.AuthorizeURL)
		if err != nil {
			t.Fatal(err)
		}
		return cb
	}
	complete := func(token, providerID, cb string) reply {
		return h.call("POST", "/api/v1/providers/"+providerID+"/chatgpt/complete", token, map[string]any{"callback_url": cb})
	}

	for _, c := range []struct {
		what                 string
		owner, other         string
		ownerProv, otherProv string
	}{
		{"another member on their own provider", ann, bob, annProv.ID, bobProv.ID},
		{"another admin on the same shared provider", h.admin, root2, shared.ID, shared.ID},
	} {
		cb := started(c.owner, c.ownerProv)
		for range 2 { // a second try finds it still there too
			e := complete(c.other, c.otherProv, cb).wantErr(t, 400, "validation")
			if !strings.Contains(e.Fields["callback_url"], "another provider or person") {
				t.Fatalf("%s: the foreign paste = %+v", c.what, e)
			}
		}
		if p := h.provider(c.other, c.otherProv); p.ChatGPTLoggedIn && c.otherProv != c.ownerProv {
			t.Fatalf("%s: the foreign paste signed in %+v", c.what, p)
		}
		var p httpapi.ProviderView
		complete(c.owner, c.ownerProv, cb).want(t, 200).decode(t, &p)
		if !p.ChatGPTLoggedIn {
			t.Fatalf("%s: the owner's paste after a foreign one = %+v", c.what, p)
		}
		complete(c.owner, c.ownerProv, cb).wantErr(t, 400, "validation") // redeemed once
	}
	if p := h.provider(bob, bobProv.ID); p.ChatGPTLoggedIn {
		t.Fatalf("bob's provider signed in with ann's account: %+v", p)
	}
}

// The Codex backend takes only the fields the Codex CLI sends and refuses
// a call without instructions, and so does the double. On a ChatGPT
// provider a session still gets its title (the title call's
// max_output_tokens is left out); an agent setting max_output_tokens and
// temperature completes with both left out, named on each generation span
// and in one run.diagnostic for the run; an agent without instructions
// completes; every call of a session carries the session as its
// prompt_cache_key, so two sessions never share one.
func TestChatGPTProviderSendsOnlyWhatTheBackendTakes(t *testing.T) {
	t.Parallel()
	d := chatgptdouble.New(chatgptdouble.Options{})
	t.Cleanup(d.Close)
	cfg := testConfig(t)
	cfg.ChatGPTAuthURL, cfg.ChatGPTBackendURL = d.Issuer(), d.BackendURL()
	h := startServer(t, cfg)
	tok := h.member("codex")
	prov := h.createProvider(tok, map[string]any{"name": "my chatgpt", "auth_mode": "chatgpt_login"})
	h.signInChatGPT(tok, prov.ID)
	tuned := h.createAgent(tok, map[string]any{"name": "tuned", "model": "gpt-5-codex", "provider_id": prov.ID, "instructions": "Be brief.",
		"model_settings": map[string]any{"max_output_tokens": 200, "temperature": 0.3}})
	bare := h.createAgent(tok, map[string]any{"name": "bare", "model": "gpt-5", "provider_id": prov.ID})
	dropNotices := func(events []sseEvent) []domain.DiagnosticPayload {
		var out []domain.DiagnosticPayload
		for _, ev := range events {
			if ev.Type == domain.EventDiagnostic {
				if p := payload[domain.DiagnosticPayload](t, ev.Event); p.Type == "settings_dropped" {
					out = append(out, p)
				}
			}
		}
		return out
	}

	// Two model calls in one run (the double calls the first tool
	// offered, then answers): each span names what was left out, the run
	// says it once.
	first := h.createSession(tok, map[string]any{"agent_config_id": tuned.ID})
	_, events := h.runEvents(tok, first.ID, map[string]any{"input": "please use the tool"})
	if last := lastEvent(events); last.Type != domain.EventOutput {
		t.Fatalf("a run of the tuned agent ended with %s %s (the double saw %+v)", last.Type, last.Event.Payload, d.Requests())
	}
	notes := dropNotices(events)
	if len(notes) != 1 || notes[0].Details["settings"] != "max_output_tokens, temperature" || notes[0].Details["provider"] != "my chatgpt" ||
		!strings.Contains(notes[0].Message, "max_output_tokens") {
		t.Fatalf("settings_dropped notices %+v", notes)
	}
	generations := 0
	for _, sp := range h.traces(tok, first.ID, "") {
		if sp.Kind != domain.SpanGeneration {
			continue
		}
		generations++
		if got := jsonText(sp.Meta["dropped_settings"]); got != `["max_output_tokens","temperature"]` {
			t.Fatalf("generation span %s names %s as dropped", sp.Name, got)
		}
	}
	if generations < 2 {
		t.Fatalf("%d generation spans, want a run of two calls", generations)
	}
	var s httpapi.SessionView
	h.call("GET", "/api/v1/sessions/"+first.ID, tok, nil).want(t, 200).decode(t, &s)
	if s.Name != "please use the tool" {
		t.Fatalf("the session's title is %q (the double saw %+v)", s.Name, d.Requests())
	}
	if v := h.chat(tok, first.ID, "second run"); v.Status != "completed" {
		t.Fatalf("a second run = %+v %+v", v, v.Error)
	}

	// An agent without instructions, on another session.
	second := h.createSession(tok, map[string]any{"agent_config_id": bare.ID})
	_, events = h.runEvents(tok, second.ID, map[string]any{"input": "hello bare"})
	if p := payload[domain.OutputPayload](t, lastEvent(events).Event); p.FinalOutput != "Codex heard: hello bare" {
		t.Fatalf("the agent without instructions answered %+v", p)
	}
	if notes := dropNotices(events); len(notes) != 0 {
		t.Fatalf("nothing of the bare agent's was dropped, yet %+v", notes)
	}

	// Every call went through, keyed by its session.
	perSession := map[string]int{}
	for i, r := range d.Requests() {
		want := first.ID
		if strings.Contains(jsonText(r.Body["input"]), "hello bare") {
			want = second.ID
		}
		if r.Status != 200 || r.PromptCacheKey != want {
			t.Fatalf("backend request %d = %d %q with prompt_cache_key %q, want %q", i, r.Status, r.Error, r.PromptCacheKey, want)
		}
		perSession[want]++
	}
	// first: two calls, its title, one more run; second: one call and its title
	if perSession[first.ID] != 4 || perSession[second.ID] != 2 {
		t.Fatalf("calls per session %v", perSession)
	}
}

// A sign-in the server forgets is revoked at the auth server, as the Codex
// CLI's logout does: on logout, on a new sign-in that replaces it, on a
// switch to an API key and on the provider's deletion, its refresh token
// no longer refreshes there. The revocation is best effort: with the auth
// server gone, logout still signs the provider out.
func TestChatGPTForgottenSignInsAreRevoked(t *testing.T) {
	t.Parallel()
	d := chatgptdouble.New(chatgptdouble.Options{})
	t.Cleanup(d.Close) // closed early below too: Close is idempotent
	cfg := testConfig(t)
	cfg.ChatGPTAuthURL, cfg.ChatGPTBackendURL = d.Issuer(), d.BackendURL()
	h := startServer(t, cfg)
	tok := h.member("forget")
	issued := map[string]bool{}
	// signIn signs the provider in and returns the refresh token it got.
	signIn := func(providerID string) string {
		t.Helper()
		h.signInChatGPT(tok, providerID)
		var fresh []string
		for _, tk := range d.Tokens() {
			if strings.HasPrefix(tk, "rt_") && !issued[tk] {
				issued[tk] = true
				fresh = append(fresh, tk)
			}
		}
		if len(fresh) != 1 {
			t.Fatalf("%d new refresh tokens after a sign-in", len(fresh))
		}
		return fresh[0]
	}
	refreshes := func(rt string) bool {
		t.Helper()
		resp, err := http.PostForm(d.Issuer()+"/oauth/token", url.Values{"grant_type": {"refresh_token"},
			"client_id": {chatgptdouble.ClientID}, "refresh_token": {rt}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	}
	revoked := func(what, rt string, count int) {
		t.Helper()
		if n := d.Revocations(); n != count {
			t.Fatalf("%s: %d revocations, want %d", what, n, count)
		}
		if refreshes(rt) {
			t.Fatalf("%s: the forgotten refresh token still refreshes", what)
		}
	}

	prov := h.createProvider(tok, map[string]any{"name": "chatgpt", "auth_mode": "chatgpt_login"})
	first := signIn(prov.ID)
	var p httpapi.ProviderView
	h.call("POST", "/api/v1/providers/"+prov.ID+"/chatgpt/logout", tok, nil).want(t, 200).decode(t, &p)
	if p.ChatGPTLoggedIn {
		t.Fatalf("after logout = %+v", p)
	}
	revoked("logout", first, 1)

	second := signIn(prov.ID)
	if d.Revocations() != 1 {
		t.Fatal("a sign-in with nothing to replace revoked something")
	}
	third := signIn(prov.ID)
	revoked("a sign-in replaced", second, 2)

	h.call("PUT", "/api/v1/providers/"+prov.ID, tok, map[string]any{"name": "chatgpt", "api_key": "sk-now"}).want(t, 200)
	revoked("a switch to an API key", third, 3)

	doomed := h.createProvider(tok, map[string]any{"name": "doomed", "auth_mode": "chatgpt_login"})
	last := signIn(doomed.ID)
	h.call("DELETE", "/api/v1/providers/"+doomed.ID, tok, nil).want(t, 204)
	revoked("deletion", last, 4)

	// The auth server out of reach: the logout still signs out.
	h.call("PUT", "/api/v1/providers/"+prov.ID, tok, map[string]any{"name": "chatgpt", "auth_mode": "chatgpt_login"}).want(t, 200)
	signIn(prov.ID)
	d.Close()
	h.call("POST", "/api/v1/providers/"+prov.ID+"/chatgpt/logout", tok, nil).want(t, 200).decode(t, &p)
	if p.ChatGPTLoggedIn || h.provider(tok, prov.ID).ChatGPTLoggedIn {
		t.Fatalf("a logout with the auth server gone = %+v", p)
	}
}
