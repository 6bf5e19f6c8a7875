package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/agents-server/agents-server/adapters/httpapi"
	"github.com/agents-server/agents-server/core/auth"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/settings"
	"github.com/agents-server/agents-server/internal/workbenchparts"
	"github.com/agents-server/agents-server/ports/porttest"
)

// The API test harness: the whole composition root on 127.0.0.1:0 with a
// temp data dir, driven over real HTTP, every response on a documented
// route validated against the OpenAPI document the server serves.

// fastPasswords keeps argon2id cheap in tests; production cost is covered by
// the auth package's own tests.
var fastPasswords = auth.PasswordParams{MemoryKiB: 64, Time: 1, Threads: 1}

// roomyLimits keep rate budgets out of the way of tests that are not about them.
var roomyLimits = httpapi.RateLimits{
	Read:     httpapi.Budget{PerSecond: 1000, Burst: 10000},
	Write:    httpapi.Budget{PerSecond: 1000, Burst: 10000},
	AuthFail: httpapi.Budget{PerSecond: 1000, Burst: 10000},
	Hook:     httpapi.Budget{PerSecond: 1000, Burst: 10000},
}

type harness struct {
	t       *testing.T
	app     *app
	cfg     config
	base    string
	admin   string      // the bootstrap admin's token
	doc     *openapi3.T // the served document
	router  routers.Router
	served  chan error
	stopped bool
	logs    *porttest.Buffer // everything the server logged
}

// testConfig is a config for a server on a free port in a fresh data dir.
func testConfig(t testing.TB) config {
	dir := t.TempDir()
	return config{
		Addr: "127.0.0.1:0", DataDir: dir, DatabaseURL: databaseFor(t, dir), LogLevel: "debug", LogFormat: "text",
		HTTP:           httpapi.Config{BodyLimit: httpapi.DefaultBodyLimit, RateLimits: roomyLimits},
		PasswordParams: fastPasswords, DrainTimeout: 5 * time.Second,
	}
}

// startServer runs the composition root with cfg (see testConfig) and stops
// it when the test ends.
func startServer(t *testing.T, cfg config) *harness {
	t.Helper()
	logs := &porttest.Buffer{}
	log := slog.New(slog.NewTextHandler(io.MultiWriter(t.Output(), logs), &slog.HandlerOptions{Level: slog.LevelDebug}))
	a, err := newApp(context.Background(), cfg, log)
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	h := &harness{t: t, app: a, cfg: cfg, base: a.URL(), admin: a.wb.AdminToken(), served: make(chan error, 1), logs: logs}
	go func() { h.served <- a.serve() }()
	t.Cleanup(h.stop)
	h.doc, h.router = h.loadRouter()
	h.setOutboundAllowPrivate(true)
	return h
}

// setOutboundAllowPrivate turns the outbound_allow_private setting on or
// off. The test peers (the scripted model, MCP servers, skill sources)
// listen on loopback, which members' configurations may not reach by
// default, so every harness starts with it on; the outbound policy's own
// tests turn it off.
//
// It writes through the settings service, not the API, so it spends no
// request budget and warms no credential cache a test may be about.
func (h *harness) setOutboundAllowPrivate(on bool) {
	h.t.Helper()
	ctx := context.Background()
	admin, err := workbenchparts.Of(h.app.wb).DB.FindBootstrapUser(ctx)
	if err == nil {
		_, err = workbenchparts.Of(h.app.wb).Settings.Put(ctx, domain.Principal{User: admin}, settings.KeyOutboundAllowPrivate, strconv.FormatBool(on))
	}
	if err != nil {
		h.t.Fatalf("outbound_allow_private: %v", err)
	}
}

// stop drains and closes the server (idempotent).
func (h *harness) stop() {
	if h.stopped {
		return
	}
	h.stopped = true
	if err := h.app.shutdown(); err != nil {
		h.t.Errorf("shutdown: %v", err)
	}
	if err := <-h.served; err != nil {
		h.t.Errorf("serve: %v", err)
	}
}

// loadRouter fetches the served OpenAPI document, unauthenticated, and
// builds the router the validation uses.
func (h *harness) loadRouter() (*openapi3.T, routers.Router) {
	h.t.Helper()
	resp, err := http.Get(h.base + "/api/v1/openapi.yaml")
	if err != nil {
		h.t.Fatalf("fetch openapi: %v", err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		h.t.Fatalf("GET /api/v1/openapi.yaml: %d %s", resp.StatusCode, data)
	}
	doc, err := openapi3.NewLoader().LoadFromData(data)
	if err != nil {
		h.t.Fatalf("load openapi: %v", err)
	}
	doc.Servers = openapi3.Servers{{URL: h.base}}
	r, err := legacy.NewRouter(doc)
	if err != nil {
		h.t.Fatalf("openapi router: %v", err)
	}
	return doc, r
}

// reply is a response read whole.
type reply struct {
	Status int
	Header http.Header
	Body   []byte
}

// decode unmarshals the body into v.
func (r reply) decode(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decode %s: %v", r.Body, err)
	}
}

// code returns the error envelope's code, failing when the body is not one.
func (r reply) code(t *testing.T) string {
	t.Helper()
	var env httpapi.ErrorEnvelope
	if err := json.Unmarshal(r.Body, &env); err != nil || env.Error.Code == "" || env.Error.Message == "" {
		t.Fatalf("status %d body is not an error envelope: %s", r.Status, r.Body)
	}
	return env.Error.Code
}

// envelope returns the decoded error envelope.
func (r reply) envelope(t *testing.T) httpapi.ErrorDetail {
	t.Helper()
	r.code(t)
	var env httpapi.ErrorEnvelope
	r.decode(t, &env)
	return env.Error
}

// call sends a request. body is JSON-encoded unless it is a string or
// []byte (sent as is). headers are name, value pairs.
func (h *harness) call(method, path, token string, body any, headers ...string) reply {
	h.t.Helper()
	var rd io.Reader
	var raw []byte
	switch b := body.(type) {
	case nil:
	case string:
		raw = []byte(b)
	case []byte:
		raw = b
	default:
		var err error
		if raw, err = json.Marshal(b); err != nil {
			h.t.Fatalf("encode body: %v", err)
		}
	}
	if raw != nil {
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, h.base+path, rd)
	if err != nil {
		h.t.Fatalf("request: %v", err)
	}
	if raw != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return h.send(req, raw)
}

// oneExchange follows no redirect: a response is validated against the
// operation the request was sent to, so a 302 (the single sign-on routes)
// is checked as the 302 it is, not as the page it points at.
var oneExchange = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// send performs req and validates the response against the document.
func (h *harness) send(req *http.Request, sentBody []byte) reply {
	h.t.Helper()
	resp, err := oneExchange.Do(req)
	if err != nil {
		h.t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		h.t.Fatalf("read %s %s: %v", req.Method, req.URL.Path, err)
	}
	r := reply{Status: resp.StatusCode, Header: resp.Header, Body: data}
	h.validate(req, sentBody, r)
	return r
}

// validate checks one exchange of a documented operation against the
// document, in both directions: the status must be listed for the operation
// (no `default` stands in for a missing one), a request the server accepted
// (2xx) must be one the document allows — a document stricter than the
// server fails here — and the body must match the status's schema. A request
// the server refused may be document-invalid: tests send bad bodies on
// purpose. Responses of undocumented paths (404/405 answers) must still be
// envelopes.
func (h *harness) validate(req *http.Request, sentBody []byte, r reply) {
	h.t.Helper()
	in, ok := h.checkExchange(req, sentBody, r.Status)
	if !ok {
		if r.Status < 400 && !strings.HasPrefix(req.URL.Path, "/api/") && req.URL.Path != "/health" {
			return // the UI
		}
		if r.Status < 400 {
			h.t.Fatalf("%s %s answered %d but is not in the OpenAPI document", req.Method, req.URL.Path, r.Status)
		}
		r.code(h.t)
		return
	}
	out := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in,
		Status:                 r.Status, Header: r.Header, Body: io.NopCloser(bytes.NewReader(r.Body)),
		Options: &openapi3filter.Options{IncludeResponseStatus: true},
	}
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
		h.t.Fatalf("%s %s → %d does not match the OpenAPI document: %v\nbody: %s", req.Method, req.URL.Path, r.Status, err, r.Body)
	}
}

// checkExchange finds the operation of req and checks what can be checked
// without the response body: the status is listed for the operation, and a
// request the server accepted is valid. ok is false for a path the document
// does not have. Streams (SSE) are checked with this alone.
func (h *harness) checkExchange(req *http.Request, sentBody []byte, status int) (*openapi3filter.RequestValidationInput, bool) {
	h.t.Helper()
	vreq := req.Clone(context.Background())
	vreq.Body = io.NopCloser(bytes.NewReader(sentBody))
	route, params, err := h.router.FindRoute(vreq)
	if err != nil {
		return nil, false
	}
	op := route.Operation
	if op.Responses.Value(strconv.Itoa(status)) == nil {
		h.t.Fatalf("%s %s answered %d, which the document does not list for %s (it lists %v)",
			req.Method, req.URL.Path, status, op.OperationID, slices.Sorted(maps.Keys(op.Responses.Map())))
	}
	in := &openapi3filter.RequestValidationInput{
		Request: vreq, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, MultiError: true},
	}
	if status >= 200 && status < 300 {
		if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
			h.t.Fatalf("%s %s was accepted (%d) but the document refuses the request: %v\nbody: %s",
				req.Method, req.URL.Path, status, err, sentBody)
		}
		// ValidateRequest consumed the body; the response check reads it again.
		vreq.Body = io.NopCloser(bytes.NewReader(sentBody))
	}
	return in, true
}

// Binary downloads validate as opaque files: status and content type
// documented, body not decoded. An event stream read whole (a finished
// run's replay) and a page validate as the text they are.
func init() {
	openapi3filter.RegisterBodyDecoder("application/x-tar", openapi3filter.FileBodyDecoder)
	asText := func(body io.Reader, _ http.Header, _ *openapi3.SchemaRef, _ openapi3filter.EncodingFn) (any, error) {
		text, err := io.ReadAll(body)
		return string(text), err
	}
	openapi3filter.RegisterBodyDecoder("text/event-stream", asText)
	openapi3filter.RegisterBodyDecoder("text/html", asText)
}

// want fails the test unless the reply has the status.
func (r reply) want(t *testing.T, status int) reply {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d: %s", r.Status, status, r.Body)
	}
	return r
}

// wantErr fails unless the reply is an envelope with status and code.
func (r reply) wantErr(t *testing.T, status int, code string) httpapi.ErrorDetail {
	t.Helper()
	r.want(t, status)
	d := r.envelope(t)
	if d.Code != code {
		t.Fatalf("code %q, want %q: %s", d.Code, code, r.Body)
	}
	return d
}

// createUser adds a user as the admin and returns their id.
func (h *harness) createUser(name, password, role string) string {
	h.t.Helper()
	var u httpapi.UserView
	h.call("POST", "/api/v1/auth/users", h.admin, map[string]string{"username": name, "password": password, "role": role}).
		want(h.t, 201).decode(h.t, &u)
	return u.ID
}

// login signs in and returns the session token.
func (h *harness) login(name, password string) string {
	h.t.Helper()
	var lr httpapi.LoginResponse
	h.call("POST", "/api/v1/auth/login", "", map[string]string{"username": name, "password": password}).
		want(h.t, 200).decode(h.t, &lr)
	return lr.Token
}

// member creates a member and returns their session token.
func (h *harness) member(name string) string {
	h.t.Helper()
	h.createUser(name, "password-of-"+name, "member")
	return h.login(name, "password-of-"+name)
}
