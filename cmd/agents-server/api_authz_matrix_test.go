package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/agents-server/agents-server/adapters/httpapi"
	"github.com/agents-server/agents-server/adapters/llm/scripted"
	"github.com/agents-server/agents-server/internal/workbenchparts"
)

// updateAuthz rewrites the committed matrix from what the server answers:
// go test ./cmd/agents-server -run TestAuthorizationMatrix -update-authz
// (then read the diff: every changed cell is a decision).
var updateAuthz = flag.Bool("update-authz", false, "rewrite testdata/authz_matrix.txt")

// authzFile is the matrix: one line per route of the route table, the
// status each caller gets on rows the member ann owns.
const authzFile = "testdata/authz_matrix.txt"

// callers, in the order each route is called: ann (the owner) last, on a
// row of her own made fresh for any call that may change it.
var callers = []string{"anon", "bob", "admin", "ann"}

// annSecret marks what ann wrote in her conversations: no response to
// anyone else may carry it.
const annSecret = "ann-secret-7c1e"

// routeQueries are the query strings a route needs to answer at all: a
// search for what ann wrote, which no one else may find.
var routeQueries = map[string]string{"/api/v1/search/messages": "?q=" + annSecret}

// authzWorld is ann's rows, made on demand, and everyone's tokens.
type authzWorld struct {
	h        *harness
	tokens   map[string]string
	modelURL string
	provider string            // ann's provider on the scripted model
	agent    string            // ann's agent on it
	sandbox  string            // the admin's sandbox (nothing listens behind it)
	n        int               // numbers unique names
	made     map[string]string // rows made for reading, by kind
}

// TestAuthorizationMatrix calls every route of the route table as
// anonymous, another member, an admin and the owner, against rows the
// member ann owns, and compares the statuses with the committed matrix. A
// route the matrix lacks (or a line no route has) fails. Whatever the
// matrix says, some rules hold for every route: anonymous gets 401 on
// every bearer route, no one but ann gets a 2xx on her private rows of
// conversation, memory, token or project content, and no response to
// anyone else carries what she wrote. The WebSocket bus and the terminal
// are called the same way.
func TestAuthorizationMatrix(t *testing.T) {
	t.Parallel()
	model, url := startScripted(t)
	model.SetScript("authz", scripted.Script{Exchanges: []scripted.Exchange{
		{When: "gated", Steps: []scripted.Step{{ToolCalls: []scripted.ToolCall{{Name: "todo_write",
			Arguments: `{"todos":[{"content":"x","status":"pending"}]}`}}}, {Text: "done"}}},
		// A workflow step (a task's run) works long enough to be stopped.
		{When: "do it", Steps: []scripted.Step{{Text: strings.Repeat("working ", 20), ChunkSize: 8, DelayMS: 500}}},
		{Steps: []scripted.Step{{Text: "noted: " + annSecret}}}}})
	h := startServer(t, testConfig(t))
	// Every route gets fresh rows of ann's, workflow steps among them that
	// run for seconds: more live runs than max_runs_per_user lets one
	// member keep, which is not what this matrix is about.
	h.call("PUT", "/api/v1/settings/max_runs_per_user", h.admin, map[string]string{"value": "1000"}).want(t, 200)
	// Every MCP server route gets a fresh server of ann's: more than
	// max_mcp_servers_per_user lets one account own.
	h.call("PUT", "/api/v1/settings/max_mcp_servers_per_user", h.admin, map[string]string{"value": "100"}).want(t, 200)
	w := &authzWorld{h: h, modelURL: url, made: map[string]string{}, tokens: map[string]string{"anon": "", "admin": h.admin, "ann": h.member("ann"), "bob": h.member("bob")}}
	w.provider = w.create("ann", "/api/v1/providers", map[string]any{"name": "mine", "base_url": url + "/v1", "api_key": "sk-ann"})
	w.agent = w.create("ann", "/api/v1/agents", map[string]any{"name": "helper", "model": "authz", "provider_id": w.provider,
		"approval": map[string]any{"approve_tools": []string{"todo_write"}}})
	w.sandbox = w.create("admin", "/api/v1/sandboxes", map[string]any{"name": "box", "type": "docker",
		"config": map[string]any{"image": "agents-sandbox:test", "host": "tcp://127.0.0.1:1"}})
	w.create("ann", "/api/v1/memories", map[string]any{"key": "diary", "content": "Prefers short answers.", "agent_config_id": w.agent})

	var lines []string
	for _, r := range workbenchparts.Of(h.app.wb).API.Routes() {
		path := openAPIPath(r.Path)
		cells := []string{}
		for _, who := range callers {
			status := w.call(t, r, who)
			cells = append(cells, fmt.Sprintf("%s=%d", who, status))
		}
		lines = append(lines, fmt.Sprintf("%-7s %-52s %s", r.Method, path, strings.Join(cells, " ")))
	}
	w.sockets(t)
	// Listings across owners (an admin's ?all=true) name conversations,
	// never carry what is in them.
	for _, who := range []string{"bob", "admin"} {
		for _, path := range []string{"/api/v1/sessions?all=true", "/api/v1/projects?all=true", "/api/v1/tasks?limit=200",
			"/api/v1/approvals"} {
			if rep := h.call("GET", path, w.tokens[who], nil); bytes.Contains(rep.Body, []byte(annSecret)) {
				t.Errorf("GET %s as %s carries what ann wrote: %.200s", path, who, rep.Body)
			}
		}
	}

	slices.Sort(lines)
	got := strings.Join(lines, "\n") + "\n"
	if *updateAuthz {
		if err := os.WriteFile(authzFile, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(authzFile)
	if err != nil {
		t.Fatalf("%v (write it with -update-authz)", err)
	}
	wantLines := strings.Split(strings.TrimSuffix(string(want), "\n"), "\n")
	byRoute := func(ls []string) map[string]string {
		m := map[string]string{}
		for _, l := range ls {
			f := strings.Fields(l)
			m[f[0]+" "+f[1]] = strings.Join(f[2:], " ")
		}
		return m
	}
	have, expect := byRoute(lines), byRoute(wantLines)
	for route, cells := range have {
		switch e, ok := expect[route]; {
		case !ok:
			t.Errorf("%s has no line in %s: decide who may call it (got %s)", route, authzFile, cells)
		case e != cells:
			t.Errorf("%s: got %s, the matrix says %s", route, cells, e)
		}
	}
	for route := range expect {
		if _, ok := have[route]; !ok {
			t.Errorf("%s is in %s but not in the route table", route, authzFile)
		}
	}
	t.Logf("authorization matrix: %d routes × %d callers", len(lines), len(callers))
}

var echoParam = regexp.MustCompile(`:([a-z_]+)`)

// openAPIPath writes an echo path as the document does.
func openAPIPath(p string) string { return echoParam.ReplaceAllString(p, "{$1}") }

// private are the path prefixes whose rows are ann's alone: nobody else
// gets a 2xx on them — but an admin administers conversations without
// reading them, and may delete one (the manage-not-author line).
var private = []string{"/api/v1/sessions/{id}", "/api/v1/runs/", "/api/v1/auth/tokens/",
	"/api/v1/attachments/", "/api/v1/approvals/", "/api/v1/tasks/"}

// call makes one call of route r as who, on fresh rows of ann's where it
// may change them, and checks the rules every route keeps.
func (w *authzWorld) call(t *testing.T, r httpapi.Route, who string) int {
	t.Helper()
	fresh := r.Method != "GET"
	path := r.Path
	for _, m := range echoParam.FindAllStringSubmatch(r.Path, -1) {
		path = strings.Replace(path, m[0], w.param(t, r.Path, m[1], fresh), 1)
	}
	var body any
	if r.HasBody() || r.OptionalBody {
		body = map[string]any{}
		if b, ok := w.body(r.Method + " " + openAPIPath(r.Path)); ok {
			body = b
		}
	}
	path += routeQueries[openAPIPath(r.Path)]
	token := w.tokens[who]
	if path == "/api/v1/auth/logout" && token != "" {
		token = w.spareToken(who) // signing out ends the token it was sent with
	}
	rep := w.h.call(r.Method, path, token, body)
	doc := openAPIPath(r.Path)
	if who == "anon" && r.Access == httpapi.Bearer && rep.Status != 401 {
		t.Errorf("%s %s as anonymous: %d, want 401", r.Method, doc, rep.Status)
	}
	if who != "ann" && rep.Status < 300 && !(who == "admin" && r.Method == "DELETE" && doc == "/api/v1/sessions/{id}") {
		for _, p := range private {
			if strings.HasPrefix(doc, p) {
				t.Errorf("%s %s as %s: %d on ann's private row", r.Method, doc, who, rep.Status)
			}
		}
	}
	if who != "ann" && bytes.Contains(rep.Body, []byte(annSecret)) {
		t.Errorf("%s %s as %s carries what ann wrote: %.200s", r.Method, doc, who, rep.Body)
	}
	return rep.Status
}

// param is the value of a path parameter of route: ann's row of the kind
// the path names (fresh: made for this call alone).
func (w *authzWorld) param(t *testing.T, route, name string, fresh bool) string {
	t.Helper()
	switch name {
	case "name":
		return "agents-x"
	case "key":
		return "session_title_model"
	case "span_id":
		return w.span(t)
	}
	kind := strings.Split(strings.TrimPrefix(route, "/api/v1/"), "/")[0]
	switch {
	case route == "/hooks/:id":
		kind = "triggers"
	case strings.HasPrefix(route, "/api/v1/auth/users/"):
		// Users are managed by admins: a fresh member each time.
		return w.h.createUser(w.unique("user"), "password-user", "member")
	}
	return w.row(t, kind, fresh)
}

// row makes ann's row of a kind (or the admin's, for host configuration).
func (w *authzWorld) row(t *testing.T, kind string, fresh bool) string {
	t.Helper()
	if id, ok := w.made[kind]; ok && !fresh {
		return id
	}
	var id string
	switch kind {
	case "agents":
		id = w.create("ann", "/api/v1/agents", map[string]any{"name": w.unique("agent"), "model": "authz", "provider_id": w.provider})
	case "providers":
		id = w.create("ann", "/api/v1/providers", map[string]any{"name": w.unique("prov"), "base_url": w.modelURL + "/v1", "api_key": "sk-ann"})
	case "guardrails":
		id = w.create("admin", "/api/v1/guardrails", map[string]any{"name": w.unique("guard"), "stages": []string{"output"},
			"mode": "regex", "pattern": "x"})
	case "mcp-servers":
		id = w.create("ann", "/api/v1/mcp-servers", map[string]any{"name": w.unique("mcp"), "config": map[string]any{"endpoint": "http://127.0.0.1:1/mcp"}})
	case "memories":
		id = w.create("ann", "/api/v1/memories", map[string]any{"key": w.unique("mem"), "content": "Prefers short answers.", "agent_config_id": w.agent})
	case "skills":
		id = w.create("ann", "/api/v1/skills", map[string]any{"content": skillDoc(w.unique("skill"), "What it does")})
	case "sandboxes":
		id = w.create("admin", "/api/v1/sandboxes", map[string]any{"name": w.unique("box"), "type": "docker",
			"config": map[string]any{"image": "agents-sandbox:test", "host": "tcp://127.0.0.1:1"}})
	case "projects":
		id = w.create("ann", "/api/v1/projects", map[string]any{"name": w.unique("proj"), "sandbox_id": w.sandbox})
	case "sessions":
		id = w.session(t, "hello "+annSecret)
	case "runs":
		id = w.h.chat(w.tokens["ann"], w.session(t, ""), "hello "+annSecret).RunID
	case "approvals":
		sid := w.session(t, "")
		w.h.call("POST", "/api/v1/sessions/"+sid+"/runs", w.tokens["ann"], map[string]any{"input": "gated " + annSecret}, "Prefer", "wait=30").want(t, 200)
		var aps []httpapi.ApprovalView
		w.h.call("GET", "/api/v1/sessions/"+sid+"/approvals", w.tokens["ann"], nil).want(t, 200).decode(t, &aps)
		if len(aps) != 1 {
			t.Fatalf("approvals = %+v", aps)
		}
		id = aps[0].ID
	case "tasks":
		wf := w.row(t, "workflows", false)
		var task httpapi.TaskView
		w.h.call("POST", "/api/v1/workflows/"+wf+"/runs", w.tokens["ann"], map[string]any{"session_id": w.session(t, ""), "input": "go"}).
			want(t, 201).decode(t, &task)
		id = task.TaskID
	case "workflows":
		id = w.create("ann", "/api/v1/workflows", map[string]any{"name": w.unique("wf"), "description": "d",
			"steps": []map[string]any{{"name": "one", "agent": w.agent, "prompt": "do it"}}})
	case "triggers":
		id = w.create("ann", "/api/v1/triggers", map[string]any{"kind": "webhook", "target": "agent", "agent_config_id": w.agent,
			"session_id": w.session(t, ""), "brief": "Report."})
	case "attachments":
		id = w.h.uploadPNG(w.tokens["ann"], 1, 1).ID
	case "auth":
		id = w.create("ann", "/api/v1/auth/tokens", map[string]any{"name": w.unique("tok")})
	case "budgets":
		// Budgets are the admins': one on a fresh agent of ann's each time.
		agent := w.create("ann", "/api/v1/agents", map[string]any{"name": w.unique("agent"), "model": "authz", "provider_id": w.provider})
		id = w.create("admin", "/api/v1/budgets", map[string]any{"scope": "agent", "subject_id": agent, "period": "day", "unit": "tokens", "limit": 100})
	case "prices":
		var p httpapi.PriceView
		w.h.call("PUT", "/api/v1/prices", w.tokens["admin"], map[string]any{"provider_type": "openai", "model": w.unique("model"),
			"input_per_mtok": 1, "output_per_mtok": 2}).want(t, 200).decode(t, &p)
		id = p.ID
	default:
		t.Fatalf("no rows of kind %q: teach the matrix to make one", kind)
	}
	if !fresh {
		w.made[kind] = id
	}
	return id
}

// body is a valid body for a route whose refusals an empty one would hide
// behind its validation (a 400 tells nothing of who may call it).
func (w *authzWorld) body(route string) (map[string]any, bool) {
	scope := map[string]any{"scope": "global"}
	b, ok := map[string]map[string]any{
		"PATCH /api/v1/auth/users/{id}":       {"role": "member"},
		"POST /api/v1/agents/{id}/scope":      scope,
		"POST /api/v1/providers/{id}/scope":   scope,
		"POST /api/v1/mcp-servers/{id}/scope": scope,
		"POST /api/v1/workflows/{id}/scope":   scope,
		"POST /api/v1/skills/{id}/scope":      scope,
		"POST /api/v1/runs/{id}/inject":       {"queue": "steer", "input": "more"},
		"POST /api/v1/sessions/{id}/branch":   {"entry_id": "root"},
		"PUT /api/v1/memories/{id}":           {"key": w.unique("mem"), "content": "Prefers tables."},
		"PUT /api/v1/skills/{id}":             {"content": skillDoc(w.unique("skill"), "What it does")},
		"PUT /api/v1/agents/{id}":             {"name": w.unique("agent"), "model": "authz", "provider_id": w.provider},
		"PUT /api/v1/providers/{id}":          {"name": w.unique("prov"), "base_url": w.modelURL + "/v1", "api_key": "sk-ann"},
		"PATCH /api/v1/sessions/{id}":         {"name": w.unique("renamed")},
		"POST /api/v1/sessions/{id}/runs":     {"input": "again " + annSecret},
		"POST /api/v1/workflows/{id}/runs":    {"session_id": w.row(w.h.t, "sessions", false), "input": "go"},
		"POST /api/v1/budgets":                {"scope": "default", "period": "day", "unit": "tokens", "limit": 1_000_000_000_000},
		"PATCH /api/v1/budgets/{id}":          {"limit": 50},
		"PUT /api/v1/prices":                  {"provider_type": "openai", "model": "authz", "input_per_mtok": 1, "output_per_mtok": 2},
	}[route]
	return b, ok
}

// spareToken is a new API token of who's, for a call that ends it.
func (w *authzWorld) spareToken(who string) string {
	w.h.t.Helper()
	var tok struct {
		Token string `json:"token"`
	}
	w.h.call("POST", "/api/v1/auth/tokens", w.tokens[who], map[string]any{"name": w.unique("spare")}).want(w.h.t, 201).decode(w.h.t, &tok)
	return tok.Token
}

// unique is a name no other row of the test has.
func (w *authzWorld) unique(prefix string) string {
	w.n++
	return fmt.Sprintf("%s-%d", prefix, w.n)
}

// create posts a row as who and returns its id.
func (w *authzWorld) create(who, path string, body map[string]any) string {
	w.h.t.Helper()
	var row struct {
		ID string `json:"id"`
	}
	w.h.call("POST", path, w.tokens[who], body).want(w.h.t, 201).decode(w.h.t, &row)
	return row.ID
}

// session is a conversation of ann's on her agent; a first message, when
// given, is run to its end.
func (w *authzWorld) session(t *testing.T, first string) string {
	t.Helper()
	s := w.h.createSession(w.tokens["ann"], map[string]any{"agent_config_id": w.agent, "name": w.unique("conv")})
	if first != "" {
		w.h.chat(w.tokens["ann"], s.ID, first)
	}
	return s.ID
}

// span is a generation span of ann's session row.
func (w *authzWorld) span(t *testing.T) string {
	t.Helper()
	spans := w.h.traces(w.tokens["ann"], w.row(t, "sessions", false), "")
	if len(spans) == 0 {
		t.Fatal("ann's session has no spans")
	}
	return spans[0].SpanID
}

// sockets calls the WebSocket bus and the terminal: anonymous is refused
// at sign-in; another member cannot follow ann's run (not_found, as if it
// did not exist) nor open a shell in her project, and an admin may not
// follow her run either.
func (w *authzWorld) sockets(t *testing.T) {
	t.Helper()
	for _, path := range []string{"/ws", "/ws/terminal"} {
		if c, code, _ := w.h.tryWS(path, ""); c != nil || code != "unauthorized" {
			t.Errorf("%s as anonymous: %q", path, code)
		}
	}
	run := w.row(t, "runs", false)
	for _, who := range []string{"bob", "admin"} {
		ws := w.h.dialWS(w.tokens[who])
		ws.send("run.subscribe", map[string]any{"run_id": run, "from_seq": 0})
		ev := ws.read()
		var p struct {
			Code string `json:"code"`
		}
		json.Unmarshal(ev.Payload, &p)
		if ev.Type != "run.error" || p.Code != "run_not_found" {
			t.Errorf("run.subscribe to ann's run as %s: %s %s", who, ev.Type, ev.Payload)
		}
	}
	project := w.row(t, "projects", false)
	_, typ, p := w.h.dialTerminal(w.tokens["bob"], project)
	if typ != "terminal.error" || p["code"] != "not_found" {
		t.Errorf("a terminal in ann's project as bob: %s %v", typ, p)
	}
}
