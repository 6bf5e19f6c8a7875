package main

import (
	"testing"

	"github.com/agents-server/agents-server/adapters/httpapi"
)

// A run outlives its stream: after a restart (the hub starts empty)
// GET /runs/:id answers from the runs table, and its events from the
// stored ending — a gap for what the watcher lacks, then the ending — to
// its owner only.
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
	events := h.openSSE(ann, v.RunID, 0).all(t)
	end := events[len(events)-1]

	h.stop()
	h = startServer(t, cfg)
	var stored httpapi.RunView
	h.call("GET", "/api/v1/runs/"+v.RunID, ann, nil).want(t, 200).decode(t, &stored)
	if stored.Status != "completed" || stored.SessionID != s.ID || stored.LastSeq != live.LastSeq || stored.LastSeq == 0 {
		t.Fatalf("after a restart = %+v, before = %+v", stored, live)
	}
	got := h.openSSE(ann, v.RunID, 0).all(t)
	if len(got) != 2 || got[0].Type != "run.gap" || got[1].Type != "run.output" || got[1].ID != end.ID ||
		string(got[1].Event.Payload) != string(end.Event.Payload) {
		t.Fatalf("events from the start after a restart: %+v; the live ending was %+v", got, end)
	}
	if got = h.openSSE(ann, v.RunID, end.ID-1).all(t); len(got) != 1 || got[0].ID != end.ID {
		t.Fatalf("events from before the ending: %+v", got)
	}
	h.call("GET", "/api/v1/runs/"+v.RunID+"/events", bob, nil).wantErr(t, 404, "not_found")
	h.call("GET", "/api/v1/runs/"+v.RunID, bob, nil).wantErr(t, 404, "not_found")
	h.call("GET", "/api/v1/runs/nope", ann, nil).wantErr(t, 404, "not_found")
}
