package main

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agents-server/agents-server/adapters/httpapi"
	"github.com/agents-server/agents-server/adapters/llm/scripted"
	"github.com/agents-server/agents-server/core/domain"
)

// openSSE opens a run's events on the binary as SSE after lastID (0: from
// the start).
func (p *process) openSSE(t *testing.T, runID string, lastID int64) *sseStream {
	t.Helper()
	req, _ := http.NewRequest("GET", p.url+"/api/v1/runs/"+runID+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+p.token)
	if lastID > 0 {
		req.Header.Set("Last-Event-ID", strconv.FormatInt(lastID, 10))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("events of %s: %d", runID, resp.StatusCode)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return &sseStream{resp: resp, rd: bufio.NewReader(resp.Body)}
}

// A run streaming when the server is SIGKILLed: after the restart its
// record answers, the SSE resume from the last id held gets the terminal
// server_restarted error and closes, a watcher from the start gets a gap
// then the same ending, and the text it had streamed before the kill is
// in the conversation as a cut-short answer.
func TestAStreamResumesAcrossSIGKILLAndRestart(t *testing.T) {
	t.Parallel()
	model, modelURL := startScripted(t)
	answer := strings.Repeat("a long answer streaming slowly ", 40)
	model.SetScript("slow", scripted.Script{Exchanges: []scripted.Exchange{{Steps: []scripted.Step{
		{Text: answer, ChunkSize: 4, DelayMS: 25}}}}})
	dir := t.TempDir()
	p := startBinary(t, dir)
	_, prov, _ := p.call(t, "POST", "/api/v1/providers", map[string]any{"name": "m", "base_url": modelURL + "/v1", "api_key": "k"})
	_, agent, _ := p.call(t, "POST", "/api/v1/agents", map[string]any{"name": "slow", "model": "slow", "provider_id": prov["id"]})
	_, sess, _ := p.call(t, "POST", "/api/v1/sessions", map[string]any{"agent_config_id": agent["id"], "name": "s"})
	sid := sess["id"].(string)
	code, run, raw := p.call(t, "POST", "/api/v1/sessions/"+sid+"/runs", map[string]any{"input": "go"})
	if code != 201 {
		t.Fatalf("start: %d %s", code, raw)
	}
	runID := run["run_id"].(string)
	events := p.openSSE(t, runID, 0)
	// Watch 40 deltas arrive and a checkpoint pass (one a second), then kill.
	var last int64
	var seen strings.Builder
	deltas, firstAt := 0, time.Time{}
	for deltas < 40 || time.Since(firstAt) < 1500*time.Millisecond {
		ev, ok := events.next(t)
		if !ok {
			t.Fatalf("the stream ended early after %d deltas", deltas)
		}
		last = ev.ID
		if ev.Type == domain.EventStep {
			var d domain.DeltaPayload
			json.Unmarshal(ev.Event.Payload, &d)
			seen.WriteString(d.Delta)
			if deltas++; deltas == 1 {
				firstAt = time.Now()
			}
		}
	}
	p.cmd.Process.Signal(syscall.SIGKILL)
	p.wait(t)
	events.close()

	p2 := startBinary(t, dir)
	if code, r, raw := p2.call(t, "GET", "/api/v1/runs/"+runID, nil); code != 200 || r["status"] != "error" {
		t.Fatalf("the run after the restart: %d %s", code, raw)
	}
	// Resuming from the last id held: the terminal event, then the end.
	got := p2.openSSE(t, runID, last).all(t)
	end := got[len(got)-1]
	if end.Type != domain.EventError || !strings.Contains(string(end.Event.Payload), domain.CodeServerRestarted) || end.ID <= last {
		t.Fatalf("resumed from %d: %+v", last, got)
	}
	// From the start: a gap says the events are in the conversation now.
	got = p2.openSSE(t, runID, 0).all(t)
	if len(got) != 2 || got[0].Type != domain.EventGap || got[1].Type != domain.EventError {
		t.Fatalf("from the start: %+v", got)
	}
	// What streamed before the kill survives, cut short (checkpointed once
	// a second: at least the first second's text, at most what was seen).
	_, _, raw = p2.call(t, "GET", "/api/v1/sessions/"+sid+"/messages", nil)
	var msgs []httpapi.EntryView
	json.Unmarshal(raw, &msgs)
	var partial string
	var stopped bool
	for _, m := range msgs {
		if it := domain.ParseItem(m.Item); it.Kind() == domain.ItemMessage && it.Role == "assistant" {
			partial, stopped = it.Text(), m.Display != nil && m.Display.Kind == "stopped"
		}
	}
	if !stopped || partial == "" || !strings.HasPrefix(answer, partial) || len(partial) > seen.Len()+4*10 {
		t.Fatalf("the partial answer after the kill: %q (stopped %v); seen %d chars", partial, stopped, seen.Len())
	}
}
