// Package chatgptdouble is a local stand-in for the two services a ChatGPT
// sign-in talks to, for tests and the browser suite: OpenAI's auth server
// (the authorization-code flow with PKCE for the Codex client, refresh with
// rotation, revocation) and the Codex backend (a streaming-only Responses
// endpoint that refuses, as the real one does, any top-level field the
// Codex CLI does not send (max_output_tokens, temperature,
// previous_response_id, …), a request without instructions, store:true,
// item ids, reasoning it did not produce and non-streaming requests).
// Both are served by one HTTP server: the issuer at its root, the backend
// under /backend-api/codex.
package chatgptdouble

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"
)

// ClientID is the client the double's auth server knows: the Codex CLI's.
const ClientID = "app_EMoamEEZ73f0CkXaXp7hrann"

// RedirectURI is the only redirect the auth server accepts.
const RedirectURI = "http://localhost:1455/auth/callback"

// Account is the ChatGPT account that signs in.
type Account struct {
	ID    string
	Email string
	Plan  string
}

// Options configure a Double.
type Options struct {
	Account   Account          // zero: acct_double, ann@example.com, plus
	AccessTTL time.Duration    // how long an access token lives (0: an hour)
	Now       func() time.Time // nil: time.Now
}

// Double is the auth server and the Codex backend.
type Double struct {
	srv  *httptest.Server
	opts Options

	mu        sync.Mutex
	codes     map[string]pendingCode
	access    map[string]time.Time // access token → expiry
	refresh   map[string]bool      // refresh token → still valid (false: rotated away or revoked)
	revoked   map[string]bool      // refresh tokens revoked at /oauth/revoke
	grants    map[string]string    // refresh token → the access token issued with it
	revokes   int                  // revocation requests answered
	reasoning map[string]bool      // encrypted contents this backend produced
	refreshes int
	attempts  int // refresh grants asked for, honoured or not
	requests  []Request
	seq       int
}

type pendingCode struct {
	challenge string
	expires   time.Time
}

// Request is one call the backend answered or refused.
type Request struct {
	Body   map[string]any
	Status int
	Error  string // what it said when it refused
	// PromptCacheKey is the request's prompt_cache_key, "" when it sent
	// none.
	PromptCacheKey string
}

// New starts a double on a free loopback port; Close stops it.
func New(o Options) *Double {
	d := build(o)
	d.srv.Start()
	return d
}

// NewAt is New serving at addr (host:port), for the stand-alone binary
// the browser suite starts.
func NewAt(addr string, o Options) (*Double, error) {
	d := build(o)
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	d.srv.Listener.Close()
	d.srv.Listener = l
	d.srv.Start()
	return d, nil
}

func build(o Options) *Double {
	if o.Account == (Account{}) {
		o.Account = Account{ID: "acct_double", Email: "ann@example.com", Plan: "plus"}
	}
	if o.AccessTTL == 0 {
		o.AccessTTL = time.Hour
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	d := &Double{opts: o, codes: map[string]pendingCode{}, access: map[string]time.Time{}, refresh: map[string]bool{},
		revoked: map[string]bool{}, grants: map[string]string{}, reasoning: map[string]bool{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /oauth/authorize", d.authorize)
	mux.HandleFunc("POST /oauth/token", d.token)
	mux.HandleFunc("POST /oauth/revoke", d.revoke)
	mux.HandleFunc("POST /backend-api/codex/responses", d.responses)
	mux.HandleFunc("GET /backend-api/codex/models", d.models)
	d.srv = httptest.NewUnstartedServer(mux)
	return d
}

// Close stops the server.
func (d *Double) Close() { d.srv.Close() }

// Issuer is the auth server's base URL.
func (d *Double) Issuer() string { return d.srv.URL }

// BackendURL is the Codex backend's base URL.
func (d *Double) BackendURL() string { return d.srv.URL + "/backend-api/codex" }

// Refreshes counts the refresh grants the auth server honoured.
func (d *Double) Refreshes() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.refreshes
}

// RefreshAttempts counts the refresh grants asked for, honoured or not.
func (d *Double) RefreshAttempts() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.attempts
}

// Revocations counts the revocation requests the auth server answered
// (RFC 7009: any token, known or not, is answered 200).
func (d *Double) Revocations() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.revokes
}

// Tokens lists every access and refresh token the auth server issued.
func (d *Double) Tokens() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []string
	for t := range d.access {
		out = append(out, t)
	}
	for t := range d.refresh {
		out = append(out, t)
	}
	return out
}

// Requests returns every call the backend saw, oldest first.
func (d *Double) Requests() []Request {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]Request(nil), d.requests...)
}

// RevokeAll invalidates every refresh and access token: the person signed
// out everywhere, or the account was suspended.
func (d *Double) RevokeAll() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for t := range d.refresh {
		d.refresh[t] = false
	}
	clear(d.access)
}

// InvalidateAccess revokes the access tokens before their expiry but
// keeps the refresh tokens: a refresh still works.
func (d *Double) InvalidateAccess() {
	d.mu.Lock()
	defer d.mu.Unlock()
	clear(d.access)
}

// authorize is the consent page, consented at once: it redirects to the
// fixed redirect with a code bound to the PKCE challenge, after checking
// what the real server checks.
func (d *Double) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	switch {
	case q.Get("client_id") != ClientID:
		http.Error(w, "unknown client_id", http.StatusBadRequest)
		return
	case q.Get("redirect_uri") != RedirectURI:
		http.Error(w, "redirect_uri is not registered for this client", http.StatusBadRequest)
		return
	case q.Get("response_type") != "code" || q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || q.Get("state") == "":
		http.Error(w, "response_type=code, state and an S256 code_challenge are required", http.StatusBadRequest)
		return
	}
	code := "code_" + random()
	d.mu.Lock()
	d.codes[code] = pendingCode{challenge: q.Get("code_challenge"), expires: d.opts.Now().Add(5 * time.Minute)}
	d.mu.Unlock()
	http.Redirect(w, r, RedirectURI+"?code="+code+"&scope=openid+profile+email+offline_access&state="+q.Get("state"), http.StatusFound)
}

// token serves the authorization-code and refresh grants, form-encoded or
// JSON (the Codex CLI refreshes with JSON).
func (d *Double) token(w http.ResponseWriter, r *http.Request) {
	vals := formValues(r)
	if vals["client_id"] != ClientID {
		oauthError(w, http.StatusUnauthorized, "invalid_client", "unknown client_id")
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	switch vals["grant_type"] {
	case "authorization_code":
		c, ok := d.codes[vals["code"]]
		delete(d.codes, vals["code"])
		sum := sha256.Sum256([]byte(vals["code_verifier"]))
		switch {
		case !ok || d.opts.Now().After(c.expires):
			oauthError(w, http.StatusBadRequest, "invalid_grant", "the authorization code is unknown, used or expired")
		case vals["redirect_uri"] != RedirectURI:
			oauthError(w, http.StatusBadRequest, "invalid_grant", "redirect_uri does not match the authorization request")
		case base64.RawURLEncoding.EncodeToString(sum[:]) != c.challenge:
			oauthError(w, http.StatusBadRequest, "invalid_grant", "code_verifier does not match the code_challenge")
		default:
			d.issue(w)
		}
	case "refresh_token":
		d.attempts++
		valid, known := d.refresh[vals["refresh_token"]]
		switch {
		case !known || d.revoked[vals["refresh_token"]]:
			refreshError(w, "refresh_token_invalidated", "Your refresh token is invalid.")
		case !valid:
			refreshError(w, "refresh_token_reused", "Your refresh token has already been used to generate a new access token.")
		default:
			d.refresh[vals["refresh_token"]] = false // rotation
			d.refreshes++
			d.issue(w)
		}
	default:
		oauthError(w, http.StatusBadRequest, "unsupported_grant_type", "grant_type must be authorization_code or refresh_token")
	}
}

// issue writes a fresh token set (d.mu held).
func (d *Double) issue(w http.ResponseWriter) {
	now := d.opts.Now()
	exp := now.Add(d.opts.AccessTTL)
	acct := d.opts.Account
	accessTok := jwt(map[string]any{"exp": exp.Unix(), "iat": now.Unix(), "jti": random(),
		"https://api.openai.com/auth": map[string]any{"chatgpt_account_id": acct.ID}})
	idTok := jwt(map[string]any{"email": acct.Email, "exp": exp.Unix(),
		"https://api.openai.com/auth": map[string]any{"chatgpt_account_id": acct.ID, "chatgpt_plan_type": acct.Plan}})
	refreshTok := "rt_" + random()
	d.access[accessTok] = exp
	d.refresh[refreshTok] = true
	d.grants[refreshTok] = accessTok
	writeJSON(w, http.StatusOK, map[string]any{"access_token": accessTok, "refresh_token": refreshTok, "id_token": idTok,
		"token_type": "Bearer", "expires_in": int(d.opts.AccessTTL.Seconds())})
}

// revoke is RFC 7009's revocation endpoint as the Codex CLI's logout
// calls it: the refresh token (token_type_hint=refresh_token) and the
// client, form-encoded or JSON. A refresh token it issued stops
// refreshing, and the access token issued with it stops working; any
// token, known or not, is answered 200.
func (d *Double) revoke(w http.ResponseWriter, r *http.Request) {
	vals := formValues(r)
	switch {
	case vals["client_id"] != ClientID:
		oauthError(w, http.StatusUnauthorized, "invalid_client", "unknown client_id")
		return
	case vals["token"] == "":
		oauthError(w, http.StatusBadRequest, "invalid_request", "token is required")
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.revokes++
	tok := vals["token"]
	if _, known := d.refresh[tok]; known {
		d.refresh[tok] = false
		d.revoked[tok] = true
		delete(d.access, d.grants[tok])
	}
	delete(d.access, tok) // an access token revoked by itself
	w.WriteHeader(http.StatusOK)
}

// formValues reads an auth server request's parameters, form-encoded or
// JSON (the Codex CLI refreshes with JSON).
func formValues(r *http.Request) map[string]string {
	vals := map[string]string{}
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		_ = json.NewDecoder(r.Body).Decode(&vals)
		return vals
	}
	_ = r.ParseForm()
	for k := range r.PostForm {
		vals[k] = r.PostForm.Get(k)
	}
	return vals
}

func oauthError(w http.ResponseWriter, status int, code, desc string) {
	writeJSON(w, status, map[string]any{"error": code, "error_description": desc})
}

// refreshError is how OpenAI's auth server refuses a refresh: a 401 with
// the cause as a nested error code.
func refreshError(w http.ResponseWriter, code, msg string) {
	writeJSON(w, http.StatusUnauthorized, map[string]any{"error": map[string]any{"code": code, "message": msg, "type": "invalid_request_error"}})
}

// authorized checks the bearer token and the account header; it answers
// the refusal itself.
func (d *Double) authorized(w http.ResponseWriter, r *http.Request) bool {
	tok := r.Header.Get("Authorization")
	if len(tok) > 7 && tok[:7] == "Bearer " {
		tok = tok[7:]
	}
	d.mu.Lock()
	exp, ok := d.access[tok]
	d.mu.Unlock()
	switch {
	case !ok:
		writeJSON(w, http.StatusUnauthorized, map[string]any{"detail": "Could not parse your authentication token. Please try signing in again."})
	case !d.opts.Now().Before(exp):
		writeJSON(w, http.StatusUnauthorized, map[string]any{"detail": "Your authentication token has expired. Please try signing in again."})
	case r.Header.Get("chatgpt-account-id") != d.opts.Account.ID:
		writeJSON(w, http.StatusForbidden, map[string]any{"detail": "The chatgpt-account-id header does not match your account."})
	default:
		return true
	}
	return false
}

func (d *Double) models(w http.ResponseWriter, r *http.Request) {
	if !d.authorized(w, r) {
		return
	}
	if r.URL.Query().Get("client_version") == "" {
		writeJSON(w, http.StatusBadRequest, map[string]any{"detail": "client_version is required"})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"models": []any{
		map[string]any{"slug": "gpt-5-codex", "display_name": "GPT-5 Codex"},
		map[string]any{"slug": "gpt-5", "display_name": "GPT-5"},
	}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// jwt is an unsigned-looking JWT carrying claims (the double's tokens are
// opaque to their holder; only the claims are read).
func jwt(claims map[string]any) string {
	enc := func(v any) string {
		b, _ := json.Marshal(v)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	return enc(map[string]string{"alg": "none", "typ": "JWT"}) + "." + enc(claims) + "." + random()
}

func random() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func (d *Double) next() int {
	d.seq++
	return d.seq
}

// Consent plays the person in the browser: it opens authorizeURL, signs
// in, and returns the URL the browser then lands on (the fixed redirect,
// where nothing listens) — what the person copies back.
func Consent(authorizeURL string) (string, error) {
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(authorizeURL)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		b, _ := io.ReadAll(resp.Body)
		return "", fmt.Errorf("authorize answered %d: %s", resp.StatusCode, b)
	}
	return resp.Header.Get("Location"), nil
}
