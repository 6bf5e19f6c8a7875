package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"strconv"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agents-server/agents-server/adapters/httpapi"
	"github.com/agents-server/agents-server/adapters/llm/scripted"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/triggers"
)

// Input hygiene at the API: what every entrance refuses before it reaches
// the store, on SQLite and on Postgres alike.

// nul is text holding a NUL character: Postgres refuses it in a text
// column (SQLSTATE 22021, a 500 before), SQLite kept it (a 201).
const nul = "a\x00b"

// TestNULIsRefusedAtEveryEntrance: a NUL character in a JSON body's field
// (top-level, nested in a list, a map's key or value), a path or query
// parameter, a skill's frontmatter, a signed webhook body, an upload's file
// name, a bus command and an /mcp tool argument is refused — 400 validation
// naming the field, or the transport's own refusal — and nothing changes.
func TestNULIsRefusedAtEveryEntrance(t *testing.T) {
	t.Parallel()
	s := newTriggerSetup(t, testConfig(t))
	h, tok := s.h, s.token
	hook := s.create(nil)
	before := h.stateOf(tok, s.session)

	// JSON bodies: the decoder names the field as the client wrote it.
	for _, c := range []struct {
		method, path, token string
		body                any
		field               string
	}{
		{"POST", "/api/v1/workflows", tok, map[string]any{"name": "wf", "description": "d",
			"steps": []any{map[string]any{"name": "one", "agent": s.agent, "prompt": "fine"},
				map[string]any{"name": "two", "agent": s.agent, "prompt": nul}}}, "steps[1].prompt"},
		{"POST", "/api/v1/triggers", tok, map[string]any{"kind": "webhook", "target": "agent", "agent_config_id": s.agent,
			"session_id": s.session, "brief": nul}, "brief"},
		{"POST", "/api/v1/sessions", tok, map[string]any{"name": nul}, "name"},
		{"POST", "/api/v1/sessions/" + s.session + "/runs", tok, map[string]any{"input": nul}, "input"},
		{"POST", "/api/v1/agents", tok, map[string]any{"name": nul, "model": "m"}, "name"},
		{"POST", "/api/v1/providers", tok, map[string]any{"name": "p", "api_key": nul}, "api_key"},
		{"POST", "/api/v1/memories", tok, map[string]any{"key": "k", "agent_config_id": s.agent, "content": nul}, "content"},
		{"POST", "/api/v1/guardrails", h.admin, map[string]any{"name": "g", "stages": []string{"input"}, "mode": "regex",
			"pattern": nul}, "pattern"},
		{"POST", "/api/v1/auth/tokens", tok, map[string]any{"name": nul}, "name"},
		{"PUT", "/api/v1/settings/system_prompt", h.admin, map[string]any{"value": nul}, "value"},
		{"POST", "/api/v1/skills", tok, map[string]any{"content": "---\nname: s\ndescription: d\n---\n" + nul}, "content"},
		{"POST", "/api/v1/mcp-servers", tok, map[string]any{"name": "m", "config": map[string]any{
			"endpoint": "https://mcp.example/mcp", "headers": map[string]string{"X-Key" + nul: "v"}}}, "config.headers"},
		{"POST", "/api/v1/mcp-servers", tok, map[string]any{"name": "m", "config": map[string]any{
			"endpoint": "https://mcp.example/mcp", "headers": map[string]string{"X-Key": nul}}}, "config.headers.X-Key"},
		{"POST", "/api/v1/auth/login", "", map[string]any{"username": nul, "password": "whatever"}, "username"},
	} {
		e := h.call(c.method, c.path, c.token, c.body).wantErr(t, 400, "validation")
		if !strings.Contains(e.Fields[c.field], "NUL") {
			t.Errorf("%s %s: the refusal names %v, want %s", c.method, c.path, e.Fields, c.field)
		}
	}

	// Past the decoder: YAML spells a NUL "\0" inside a quoted string.
	e := h.call("POST", "/api/v1/skills", tok, map[string]any{"content": "---\nname: s\ndescription: \"a\\0b\"\n---\nbody"}).
		wantErr(t, 400, "validation")
	if !strings.Contains(e.Fields["content"], "NUL") {
		t.Errorf("a skill's description with a YAML \\0: %+v", e)
	}

	// Path and query parameters, sent as %00.
	for path, field := range map[string]string{
		"/api/v1/sessions/a%00b":                                    "id",
		"/api/v1/memories?agent_config_id=a%00b":                    "agent_config_id",
		"/api/v1/sessions/" + s.session + "/messages?before_id=%00": "before_id",
		"/api/v1/settings/system%00prompt":                          "key",
	} {
		method := "GET"
		var body any
		if strings.HasPrefix(path, "/api/v1/settings/") {
			method, body = "PUT", map[string]any{"value": "x"}
		}
		e := h.call(method, path, h.admin, body).wantErr(t, 400, "validation")
		if !strings.Contains(e.Fields[field], "NUL") {
			t.Errorf("%s %s: the refusal names %v, want %s", method, path, e.Fields, field)
		}
	}

	// A signed webhook delivery whose body holds a NUL starts nothing.
	e = s.deliver(hook.ID, hook.Secret, time.Now().Unix(), `{"event":"`+nul+`"}`).wantErr(t, 400, "validation")
	if !strings.Contains(e.Fields["body"], "NUL") {
		t.Errorf("a webhook body with a NUL: %+v", e)
	}

	// An upload whose file name (RFC 2231-encoded) decodes to a NUL.
	e = h.uploadNamed(tok, `form-data; name="file"; filename*=UTF-8''shot%00.png`, pngOf(t, 4, 4)).wantErr(t, 400, "validation")
	if !strings.Contains(e.Fields["file"], "NUL") {
		t.Errorf("an upload named with a NUL: %+v", e)
	}

	// The bus: run.create answers run.error user_error for the session.
	ws := h.dialWS(tok)
	ws.send(domain.CommandRunCreate, map[string]any{"session_id": s.session, "input": nul})
	ev := ws.read()
	var refused domain.ErrorPayload
	if err := json.Unmarshal(ev.Payload, &refused); err != nil {
		t.Fatal(err)
	}
	if ev.Type != domain.EventError || refused.Code != domain.CodeUserError || refused.SessionID != s.session ||
		!strings.Contains(refused.Message, "input") || !strings.Contains(refused.Message, "NUL") {
		t.Errorf("run.create with a NUL input answered %s %+v", ev.Type, refused)
	}

	// /mcp: asking an agent with a NUL prompt is a tool error.
	cs, err := h.mcpClient(tok)
	if err != nil {
		t.Fatal(err)
	}
	for tool, args := range map[string]map[string]any{"ask_reporter": {"prompt": nul}, "read_session": {"session_id": nul}} {
		res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: tool, Arguments: args})
		if err != nil || !res.IsError || !strings.Contains(textOf(t, res), "NUL") {
			t.Errorf("%s with a NUL = %+v, %v", tool, res, err)
		}
	}

	if after := h.stateOf(tok, s.session); after != before {
		t.Fatalf("a refused request changed something:\nbefore %s\nafter  %s", before, after)
	}
}

// stateOf is what the refusals above could have changed, as read back.
func (h *harness) stateOf(token, sessionID string) string {
	h.t.Helper()
	var b strings.Builder
	for _, read := range []struct{ token, path string }{
		{token, "/api/v1/workflows"}, {token, "/api/v1/triggers"}, {token, "/api/v1/sessions"}, {token, "/api/v1/agents"},
		{token, "/api/v1/providers"}, {token, "/api/v1/memories"}, {token, "/api/v1/auth/tokens"}, {token, "/api/v1/skills"},
		{token, "/api/v1/mcp-servers"}, {token, "/api/v1/sessions/" + sessionID + "/runs"},
		{token, "/api/v1/sessions/" + sessionID + "/messages"}, {h.admin, "/api/v1/guardrails"}, {h.admin, "/api/v1/settings"},
	} {
		fmt.Fprintf(&b, "%s: %s\n", read.path, h.call("GET", read.path, read.token, nil).want(h.t, 200).Body)
	}
	return b.String()
}

// uploadNamed posts an attachment whose file part carries the
// Content-Disposition given as is.
func (h *harness) uploadNamed(token, disposition string, data []byte) reply {
	h.t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	part, err := mw.CreatePart(textproto.MIMEHeader{"Content-Disposition": {disposition}, "Content-Type": {"image/png"}})
	if err != nil {
		h.t.Fatal(err)
	}
	part.Write(data)
	mw.Close()
	req, err := http.NewRequest("POST", h.base+"/api/v1/attachments", bytes.NewReader(body.Bytes()))
	if err != nil {
		h.t.Fatal(err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+token)
	return h.send(req, body.Bytes())
}

// TestJSONRoutesWantAJSONContentType: a route taking a JSON body answers
// 415 (the error envelope, code validation, naming the type it wants) to a
// body labelled anything else — text/plain and a form are what a page on
// another origin may send without asking — and creates nothing; JSON with a
// charset passes, an optional body may be absent without a type, and the
// upload and webhook routes take their own bodies.
func TestJSONRoutesWantAJSONContentType(t *testing.T) {
	t.Parallel()
	s := newTriggerSetup(t, testConfig(t))
	h, tok := s.h, s.token
	hook := s.create(nil)
	before := h.stateOf(tok, s.session)
	for _, ct := range []string{"text/plain", "text/plain; charset=utf-8", "application/x-www-form-urlencoded", "", "application/json; charset=utf-16"} {
		for _, c := range []struct{ method, path, body string }{
			{"POST", "/api/v1/sessions", `{"name":"from elsewhere"}`},
			{"POST", "/api/v1/sessions/" + s.session + "/runs", `{"input":"hi"}`},
			{"PUT", "/api/v1/settings/system_prompt", `{"value":"from elsewhere"}`},
		} {
			req, _ := http.NewRequest(c.method, h.base+c.path, strings.NewReader(c.body))
			req.Header.Set("Authorization", "Bearer "+h.admin)
			if c.method == "POST" {
				req.Header.Set("Authorization", "Bearer "+tok)
			}
			if ct != "" {
				req.Header.Set("Content-Type", ct)
			}
			e := h.send(req, []byte(c.body)).wantErr(t, http.StatusUnsupportedMediaType, "validation")
			if !strings.Contains(e.Message, "application/json") {
				t.Errorf("%s %s as %q: %+v", c.method, c.path, ct, e)
			}
		}
	}
	if after := h.stateOf(tok, s.session); after != before {
		t.Fatalf("a refused request changed something:\nbefore %s\nafter  %s", before, after)
	}

	h.call("POST", "/api/v1/sessions", tok, `{"name":"typed"}`, "Content-Type", "application/json; charset=UTF-8").want(t, 201)
	// An optional body may be absent, with no type (connecting an MCP
	// server takes one; the answer past the body does not matter here).
	req, _ := http.NewRequest("POST", h.base+"/api/v1/mcp-servers/nonesuch/connect", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	h.send(req, nil).wantErr(t, 404, "not_found")
	// Not JSON routes: a webhook delivery of any type, an upload.
	stamp := strconv.FormatInt(time.Now().Unix(), 10)
	h.call("POST", "/hooks/"+hook.ID, "", "plain text", "Content-Type", "text/plain",
		triggers.TimestampHeader, stamp, triggers.SignatureHeader, triggers.Sign(hook.Secret, stamp, []byte("plain text"))).want(t, 201)
	h.upload(tok, "file", "shot.png", pngOf(t, 4, 4)).want(t, 201)
}

// TestTextFromAModelHoldingNULIsKeptAlikeOnBothEngines: text the server
// takes from elsewhere cannot be refused — a model's answer holding a NUL
// is still the run's answer — so the store keeps it with U+FFFD in the
// NUL's place on both engines. On Postgres the run's end and the title
// written from the answer were lost before (the run read as running).
func TestTextFromAModelHoldingNULIsKeptAlikeOnBothEngines(t *testing.T) {
	t.Parallel()
	model, url := startScripted(t)
	model.SetScript("nul-answer", oneStep(scripted.Step{Text: "out" + "\x00" + "put"}))
	h := startServer(t, testConfig(t))
	agent := h.agentOn(h.admin, protocols(url)["openai-responses"], map[string]any{"name": "n", "model": "nul-answer"})
	s := h.createSession(h.admin, map[string]any{"agent_config_id": agent})
	if v := h.chat(h.admin, s.ID, "hi"); v.Status != "completed" {
		t.Fatalf("the run = %+v %+v", v, v.Error)
	}
	var runs []httpapi.RunSummaryView
	waitFor(t, func() bool {
		h.call("GET", "/api/v1/sessions/"+s.ID+"/runs", h.admin, nil).want(t, 200).decode(t, &runs)
		return len(runs) == 1 && runs[0].Status != "running"
	})
	if runs[0].Status != "completed" {
		t.Fatalf("the recorded run = %+v", runs[0])
	}
	var got httpapi.SessionView
	waitFor(t, func() bool {
		h.call("GET", "/api/v1/sessions/"+s.ID, h.admin, nil).want(t, 200).decode(t, &got)
		return got.Name != ""
	})
	if got.Name != "out\uFFFDput" {
		t.Fatalf("the title written from the answer = %q", got.Name)
	}
}
