package main

import (
	"testing"
)

// Refusals the document once left out (a `default` response hid them from
// the harness): each is answered here for real, and the harness fails
// unless the operation lists the status.

func TestQueryAndCursorRefusalsAreDocumented(t *testing.T) {
	t.Parallel()
	h := startServer(t, testConfig(t))
	sess := h.createSession(h.admin, map[string]any{"name": "q"})
	h.call("GET", "/api/v1/sessions?all=maybe", h.admin, nil).wantErr(t, 400, "validation")
	// The document says boolean; all=1 is true as it is for sessions, and a
	// word that is no boolean is refused rather than read as false.
	h.call("GET", "/api/v1/projects?all=maybe", h.admin, nil).wantErr(t, 400, "validation")
	h.call("GET", "/api/v1/projects?all=1", h.admin, nil).want(t, 200)
	h.call("GET", "/api/v1/sessions/"+sess.ID+"/traces?summary=maybe", h.admin, nil).wantErr(t, 400, "validation")
	h.call("GET", "/api/v1/sessions/"+sess.ID+"/messages?limit=0", h.admin, nil).wantErr(t, 400, "validation")
	// The cursor is read before the run is looked up.
	h.call("GET", "/api/v1/runs/any/events?from_seq=-1", h.admin, nil).wantErr(t, 400, "validation")
	h.call("GET", "/api/v1/runs/any/events", h.admin, nil, "Last-Event-ID", "x").wantErr(t, 400, "validation")
	h.call("POST", "/api/v1/auth/login", "", map[string]string{"username": "admin", "password": "not it"}).
		wantErr(t, 401, "unauthorized")
}

func TestSandboxActionRefusalsAreDocumented(t *testing.T) {
	t.Parallel()
	h := startServer(t, testConfig(t))
	// Nothing listens on port 1: every daemon call is an upstream failure.
	gone := h.createSandbox(map[string]any{"name": "gone", "type": "docker",
		"config": map[string]any{"image": "agents-sandbox:test", "host": "tcp://127.0.0.1:1"}})
	p := h.createProject(h.admin, map[string]any{"name": "site", "sandbox_id": gone.ID})
	pp := "/api/v1/projects/" + p.ID
	h.call("GET", pp+"/export", h.admin, nil).wantErr(t, 502, "upstream")
	h.call("GET", pp+"/sandbox", h.admin, nil).wantErr(t, 502, "upstream")
	h.call("POST", pp+"/sandbox/start", h.admin, nil).wantErr(t, 502, "upstream")
	h.call("POST", pp+"/sandbox/rebuild", h.admin, nil).wantErr(t, 502, "upstream")
	h.call("GET", "/api/v1/sandboxes/"+gone.ID+"/containers", h.admin, nil).wantErr(t, 502, "upstream")

	// The container routes are docker's alone.
	e2b := h.createSandbox(map[string]any{"name": "cloud", "type": "e2b",
		"config": map[string]any{"template_id": "base", "api_key": "e2b_secret"}})
	sp := "/api/v1/sandboxes/" + e2b.ID + "/containers/agents-x"
	h.call("POST", sp+"/stop", h.admin, nil).wantErr(t, 400, "validation")
	h.call("DELETE", sp, h.admin, nil).wantErr(t, 400, "validation")
}
