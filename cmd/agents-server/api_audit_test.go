package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agents-server/agents-server/adapters/httpapi"
)

// auditLog reads the whole audit log (newest first) as the admin, with
// filters as a query string ("" for none).
func (h *harness) auditLog(query string) []httpapi.AuditRecordView {
	h.t.Helper()
	var page httpapi.AuditPageView
	h.call("GET", "/api/v1/audit?limit=500"+query, h.admin, nil).want(h.t, 200).decode(h.t, &page)
	return page.Records
}

// findAudit is the newest record of action on the object id (or named
// name, for an object without an id), failing the test without one.
func findAudit(t *testing.T, recs []httpapi.AuditRecordView, action, id, name string) httpapi.AuditRecordView {
	t.Helper()
	for _, r := range recs {
		if r.Action == action && (id == "" || r.ObjectID == id) && (name == "" || r.ObjectName == name) {
			return r
		}
	}
	t.Fatalf("no %s record for %q/%q in %+v", action, id, name, recs)
	return httpapi.AuditRecordView{}
}

// noSecretIn fails when a record of the log holds a secret's value.
func noSecretIn(t *testing.T, h *harness, secrets ...string) {
	t.Helper()
	body := h.call("GET", "/api/v1/audit?limit=500", h.admin, nil).want(t, 200).Body
	for _, s := range secrets {
		if bytes.Contains(body, []byte(s)) {
			t.Fatalf("the audit log holds the secret %q: %s", s, body)
		}
	}
}

// Each family of security-relevant actions leaves a record with who did
// it, from where, the object, the outcome and the names of the fields it
// changed — never a secret's value; a write that fails leaves none; only
// admins read the log.
func TestTheAuditLogRecordsEachActionFamily(t *testing.T) {
	t.Parallel()
	h := startServer(t, testConfig(t))

	// Users and sign-ins: a refused sign-in is recorded with its reason.
	amy := h.createUser("amy", "password-of-amy", "member")
	h.call("POST", "/api/v1/auth/login", "", map[string]string{"username": "amy", "password": "not-her-password"}).wantErr(t, 401, "unauthorized")
	amyTok := h.login("amy", "password-of-amy")
	h.call("PATCH", "/api/v1/auth/users/"+amy, h.admin, map[string]any{"role": "admin"}).want(t, 204)
	h.call("PATCH", "/api/v1/auth/users/"+amy, h.admin, map[string]any{"role": "member", "password": "a-new-password-for-amy"}).want(t, 204)

	// Tokens.
	var tok httpapi.CreatedToken
	h.call("POST", "/api/v1/auth/tokens", amyTok, map[string]any{"name": "ci"}).want(t, 201).decode(t, &tok)
	h.call("DELETE", "/api/v1/auth/tokens/"+tok.ID, amyTok, nil).want(t, 204)

	// Configuration: a provider with a key, its update, publish; an agent.
	p := h.createProvider(amyTok, map[string]any{"name": "Amy's OpenAI", "api_key": "sk-amy-secret-1"})
	h.call("PUT", "/api/v1/providers/"+p.ID, amyTok, map[string]any{"name": "Amy's OpenAI", "api_key": "sk-amy-secret-2"}).want(t, 200)
	// A failed write (a taken name) leaves no record.
	h.call("POST", "/api/v1/providers", amyTok, map[string]any{"name": "Amy's OpenAI", "api_key": "sk-amy-secret-3"}).wantErr(t, 409, "conflict")
	h.call("POST", "/api/v1/providers/"+p.ID+"/scope", h.admin, map[string]string{"scope": "global"}).want(t, 200)
	a := h.createAgent(amyTok, map[string]any{"name": "helper", "model": "m", "provider_id": p.ID})

	// Settings, a secret one among them.
	h.call("PUT", "/api/v1/settings/proxy_url", h.admin, map[string]string{"value": "http://user:pw-in-proxy@127.0.0.1:3128"}).want(t, 200)

	// A user deleted.
	bob := h.createUser("bob", "password-of-bob", "member")
	h.call("DELETE", "/api/v1/auth/users/"+bob, h.admin, nil).want(t, 204)

	// Only admins read it.
	h.call("GET", "/api/v1/audit", amyTok, nil).wantErr(t, 403, "forbidden")

	recs := h.auditLog("")
	check := func(r httpapi.AuditRecordView, actor, outcome string, fields ...string) {
		t.Helper()
		if r.ActorName != actor || r.Outcome != outcome || r.Address != "127.0.0.1" || r.ActorKind != "user" ||
			(fields != nil && !slices.Equal(r.Fields, fields)) {
			t.Fatalf("record %+v: want actor %s, outcome %s, fields %v, from 127.0.0.1", r, actor, outcome, fields)
		}
	}
	check(findAudit(t, recs, "user.create", amy, "amy"), "admin", "success", "password", "role", "username")
	refused := findAudit(t, h.auditLog("&action=signin&actor_kind=user&since=2000-01-01T00:00:00Z"), "signin", "", "amy")
	for _, r := range recs {
		if r.Action == "signin" && r.Outcome == "failure" {
			refused = r
		}
	}
	if refused.Outcome != "failure" || refused.Method != "password" || !strings.Contains(refused.Reason, "invalid username or password") {
		t.Fatalf("the refused sign-in: %+v", refused)
	}
	var signedIn httpapi.AuditRecordView
	for _, r := range recs {
		if r.Action == "signin" && r.Outcome == "success" && r.ObjectID == amy {
			signedIn = r
		}
	}
	check(signedIn, "amy", "success")
	if signedIn.ActorID != amy || signedIn.Method != "password" {
		t.Fatalf("the sign-in: %+v", signedIn)
	}
	var updates [][]string
	for _, r := range recs {
		if r.Action == "user.update" && r.ObjectID == amy {
			updates = append(updates, r.Fields)
		}
	}
	if len(updates) != 2 || !slices.Equal(updates[0], []string{"password", "role"}) || !slices.Equal(updates[1], []string{"role"}) {
		t.Fatalf("the user updates changed %v", updates)
	}
	check(findAudit(t, recs, "token.create", tok.ID, "ci"), "amy", "success")
	check(findAudit(t, recs, "token.revoke", tok.ID, ""), "amy", "success")
	created := findAudit(t, recs, "provider.create", p.ID, "Amy's OpenAI")
	check(created, "amy", "success")
	if !slices.Contains(created.Fields, "api_key") || !slices.Contains(created.Fields, "name") {
		t.Fatalf("the provider's create names %v", created.Fields)
	}
	check(findAudit(t, recs, "provider.update", p.ID, "Amy's OpenAI"), "amy", "success", "api_key")
	check(findAudit(t, recs, "provider.publish", p.ID, "Amy's OpenAI"), "admin", "success", "scope")
	check(findAudit(t, recs, "agent.create", a.ID, "helper"), "amy", "success")
	check(findAudit(t, recs, "setting.update", "proxy_url", ""), "admin", "success", "value")
	check(findAudit(t, recs, "user.delete", bob, "bob"), "admin", "success")
	n := 0
	for _, r := range recs {
		if r.Action == "provider.create" {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d provider.create records: the refused create left one", n)
	}
	noSecretIn(t, h, "sk-amy-secret-1", "sk-amy-secret-2", "sk-amy-secret-3", "pw-in-proxy", "password-of-amy", "a-new-password-for-amy",
		"not-her-password", tok.Token)

	// Filters select what they name.
	for _, r := range h.auditLog("&actor=" + amy) {
		if r.ActorID != amy {
			t.Fatalf("the actor filter let through %+v", r)
		}
	}
	for _, r := range h.auditLog("&kind=provider&action=provider.update") {
		if r.ObjectKind != "provider" || r.Action != "provider.update" {
			t.Fatalf("the kind and action filters let through %+v", r)
		}
	}
	h.call("GET", "/api/v1/audit?since=yesterday", h.admin, nil).wantErr(t, 400, "validation")
	h.call("GET", "/api/v1/audit?cursor=x", h.admin, nil).wantErr(t, 400, "validation")
}

// Paging by the cursor meets every record once, newest first, and the
// export gives the same records as JSON Lines.
func TestTheAuditLogPagesAndExports(t *testing.T) {
	t.Parallel()
	h := startServer(t, testConfig(t))
	for _, name := range []string{"u1", "u2", "u3", "u4", "u5"} {
		h.createUser(name, "password-of-"+name, "member")
	}
	all := h.auditLog("")
	var paged []int64
	cursor := ""
	for range 10 {
		var page httpapi.AuditPageView
		h.call("GET", "/api/v1/audit?limit=2"+cursor, h.admin, nil).want(t, 200).decode(t, &page)
		for _, r := range page.Records {
			paged = append(paged, r.Seq)
		}
		if page.NextCursor == "" {
			break
		}
		cursor = "&cursor=" + page.NextCursor
	}
	var want []int64
	for _, r := range all {
		want = append(want, r.Seq)
	}
	if len(want) < 5 || !slices.Equal(paged, want) {
		t.Fatalf("paged %v, want %v", paged, want)
	}
	exp := h.call("GET", "/api/v1/audit/export?kind=user", h.admin, nil).want(t, 200)
	if ct := exp.Header.Get("Content-Type"); ct != "application/x-ndjson" {
		t.Fatalf("export content type %q", ct)
	}
	var lines []httpapi.AuditRecordView
	sc := bufio.NewScanner(bytes.NewReader(exp.Body))
	for sc.Scan() {
		var r httpapi.AuditRecordView
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("export line %q: %v", sc.Text(), err)
		}
		lines = append(lines, r)
	}
	users := h.auditLog("&kind=user")
	if len(lines) != len(users) || len(lines) < 5 {
		t.Fatalf("exported %d records, the listing has %d", len(lines), len(users))
	}
	for i := range lines {
		if lines[i].Seq != users[i].Seq || lines[i].ObjectKind != "user" {
			t.Fatalf("export line %d = %+v, listing %+v", i, lines[i], users[i])
		}
	}
	member := h.login("u1", "password-of-u1")
	h.call("GET", "/api/v1/audit/export", member, nil).wantErr(t, 403, "forbidden")
}

// A trigger's writes are recorded as its owner's, a refused webhook
// delivery as the webhook's with the reason, and neither holds the
// signing secret.
func TestTheAuditLogRecordsTriggersAndRefusedDeliveries(t *testing.T) {
	t.Parallel()
	s := newTriggerSetup(t, testConfig(t))
	h := s.h
	hook := s.create(map[string]any{"name": "ci"})
	s.deliver(hook.ID, "ags_wh_guess", time.Now().Unix(), `{"job":"lint"}`).wantErr(t, 401, "unauthorized")
	h.call("POST", "/api/v1/triggers/"+hook.ID+"/rotate", s.token, nil).want(t, 200)
	h.call("DELETE", "/api/v1/triggers/"+hook.ID, s.token, nil).want(t, 204)
	recs := h.auditLog("&kind=trigger")
	if r := findAudit(t, recs, "trigger.create", hook.ID, "ci"); r.ActorName != "tr" || r.Outcome != "success" {
		t.Fatalf("the create: %+v", r)
	}
	refused := findAudit(t, recs, "webhook.deliver", hook.ID, "ci")
	if refused.ActorKind != "webhook" || refused.Outcome != "failure" || !strings.Contains(refused.Reason, "signature") ||
		refused.Address != "127.0.0.1" {
		t.Fatalf("the refused delivery: %+v", refused)
	}
	if r := findAudit(t, recs, "trigger.rotate_secret", hook.ID, "ci"); !slices.Equal(r.Fields, []string{"secret"}) {
		t.Fatalf("the rotation: %+v", r)
	}
	findAudit(t, recs, "trigger.delete", hook.ID, "ci")
	noSecretIn(t, h, hook.Secret)
}

// Approval decisions (over REST and the WebSocket) are recorded as the
// deciding person's, without their reason's text; sandboxes and projects
// as their writers', without the secrets in their configuration.
func TestTheAuditLogRecordsDecisionsSandboxesAndProjects(t *testing.T) {
	t.Parallel()
	paused := pauseOnTwoCalls(t, "dee")
	h, tok, ws, run, pending := paused.h, paused.token, paused.ws, paused.run, paused.pending
	h.call("POST", "/api/v1/approvals/"+pending[0].ID+"/reject", tok, map[string]any{"reason": "a private reason"}).want(t, 200)
	ws.send("tool.approve", map[string]any{"tool_call_id": pending[1].ToolCallID})
	ws.until(run)

	sb := h.createSandbox(map[string]any{"name": "local", "type": "docker",
		"config": map[string]any{"image": "agents-sandbox:test", "ssh_password": "hunter2-secret"}})
	p := h.createProject(tok, map[string]any{"name": "site", "sandbox_id": sb.ID,
		"env": []map[string]string{{"name": "API_TOKEN", "value": "s3cret-env"}}})
	h.call("DELETE", "/api/v1/projects/"+p.ID, tok, nil).want(t, 200)
	h.call("DELETE", "/api/v1/sandboxes/"+sb.ID, h.admin, nil).want(t, 204)

	recs := h.auditLog("")
	for _, c := range []struct{ action, id, actor string }{
		{"approval.reject", pending[0].ID, "dee"}, {"approval.approve", pending[1].ID, "dee"},
		{"sandbox.create", sb.ID, "admin"}, {"project.create", p.ID, "dee"}, {"project.delete", p.ID, "dee"},
		{"sandbox.delete", sb.ID, "admin"},
	} {
		r := findAudit(t, recs, c.action, c.id, "")
		if r.ActorName != c.actor || r.Address != "127.0.0.1" || r.Outcome != "success" {
			t.Errorf("%s: %+v, want %s's", c.action, r, c.actor)
		}
	}
	if r := findAudit(t, recs, "project.create", p.ID, "site"); !slices.Contains(r.Fields, "env") {
		t.Errorf("the project's create names %v", r.Fields)
	}
	noSecretIn(t, h, "a private reason", "hunter2-secret", "s3cret-env")
}

// Skills, workflows, guardrails and MCP servers record their creates,
// updates, publishes and deletes with the fields they changed, as their
// writers'; an update that changes nothing records nothing.
func TestTheAuditLogRecordsSkillsWorkflowsGuardrailsAndMCPServers(t *testing.T) {
	t.Parallel()
	h := startServer(t, testConfig(t))
	_, url := startScripted(t)
	tok := h.member("wes")
	agent := h.agentOn(tok, protocols(url)["openai-responses"], map[string]any{"name": "worker", "model": "m"})

	var k httpapi.SkillView
	h.call("POST", "/api/v1/skills", tok, map[string]any{"content": skillDoc("release", "How we cut a release")}).want(t, 201).decode(t, &k)
	h.call("PUT", "/api/v1/skills/"+k.ID, tok, map[string]any{"content": skillDoc("release", "Revised")}).want(t, 200)
	h.call("PUT", "/api/v1/skills/"+k.ID, tok, map[string]any{"content": skillDoc("release", "Revised")}).want(t, 200) // no change
	h.call("POST", "/api/v1/skills/"+k.ID+"/scope", h.admin, map[string]string{"scope": "global"}).want(t, 200)

	var wf struct{ ID string }
	h.call("POST", "/api/v1/workflows", tok, map[string]any{"name": "ship", "description": "d",
		"steps": []map[string]any{{"name": "one", "agent": agent, "prompt": "do it"}}}).want(t, 201).decode(t, &wf)
	h.call("DELETE", "/api/v1/workflows/"+wf.ID, tok, nil).want(t, 204)

	var g struct{ ID string }
	h.call("POST", "/api/v1/guardrails", h.admin, map[string]any{"name": "no-x", "stages": []string{"output"}, "mode": "regex", "pattern": "x"}).
		want(t, 201).decode(t, &g)

	var m httpapi.MCPServerView
	h.call("POST", "/api/v1/mcp-servers", tok, map[string]any{"name": "tools", "config": map[string]any{"endpoint": "http://127.0.0.1:1/mcp",
		"headers": map[string]string{"Authorization": "Bearer mcp-header-secret"}}}).want(t, 201).decode(t, &m)
	h.call("DELETE", "/api/v1/mcp-servers/"+m.ID, tok, nil).want(t, 204)

	recs := h.auditLog("")
	for _, c := range []struct{ action, id, actor string }{
		{"skill.create", k.ID, "wes"}, {"skill.update", k.ID, "wes"}, {"skill.publish", k.ID, "admin"},
		{"workflow.create", wf.ID, "wes"}, {"workflow.delete", wf.ID, "wes"},
		{"guardrail.create", g.ID, "admin"}, {"mcp_server.create", m.ID, "wes"}, {"mcp_server.delete", m.ID, "wes"},
	} {
		if r := findAudit(t, recs, c.action, c.id, ""); r.ActorName != c.actor || r.Outcome != "success" {
			t.Errorf("%s: %+v, want %s's", c.action, r, c.actor)
		}
	}
	var skillUpdates int
	for _, r := range recs {
		if r.Action == "skill.update" && r.ObjectID == k.ID {
			skillUpdates++
			if !slices.Contains(r.Fields, "content") || !slices.Contains(r.Fields, "description") {
				t.Errorf("the skill's update names %v", r.Fields)
			}
		}
	}
	if skillUpdates != 1 {
		t.Fatalf("%d skill.update records: the update that changed nothing was recorded", skillUpdates)
	}
	if r := findAudit(t, recs, "skill.publish", k.ID, "release"); !slices.Equal(r.Fields, []string{"scope"}) {
		t.Errorf("the publish names %v", r.Fields)
	}
	noSecretIn(t, h, "mcp-header-secret")
}
