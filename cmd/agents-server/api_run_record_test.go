package main

import (
	"testing"

	"github.com/agents-server/agents-server/adapters/httpapi"
)

// A run outlives its stream: after a restart (the hub starts empty)
// GET /runs/:id answers from the runs table — to its owner only.
func TestAFinishedRunIsReadAfterARestart(t *testing.T) {
	t.Parallel()
	_, url := startScripted(t)
	cfg := testConfig(t)
	h := startServer(t, cfg)
	ann, bob := h.member("ann"), h.member("bob")
	agent := h.agentOn(ann, protocols(url)["openai-responses"], map[string]any{"name": "echoer", "model": "echo"})
	s := h.createSession(ann, map[string]any{"agent_config_id": agent})
	v := h.chat(ann, s.ID, "remember me")
	if v.Status != "completed" {
		t.Fatalf("run = %+v", v)
	}
	var live httpapi.RunView
	h.call("GET", "/api/v1/runs/"+v.RunID, ann, nil).want(t, 200).decode(t, &live)

	h.stop()
	h = startServer(t, cfg)
	var stored httpapi.RunView
	h.call("GET", "/api/v1/runs/"+v.RunID, ann, nil).want(t, 200).decode(t, &stored)
	if stored.Status != "completed" || stored.SessionID != s.ID || stored.LastSeq != live.LastSeq || stored.LastSeq == 0 {
		t.Fatalf("after a restart = %+v, before = %+v", stored, live)
	}
	h.call("GET", "/api/v1/runs/"+v.RunID, bob, nil).wantErr(t, 404, "not_found")
	h.call("GET", "/api/v1/runs/nope", ann, nil).wantErr(t, 404, "not_found")
}
