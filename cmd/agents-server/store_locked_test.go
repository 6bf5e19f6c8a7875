package main

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agents-server/agents-server/adapters/llm/scripted"
	"github.com/agents-server/agents-server/adapters/sqlstore"
	"github.com/agents-server/agents-server/adapters/sqlstore/pgtest"
	"github.com/agents-server/agents-server/core/domain"
)

// TestARunOnALockedDatabaseEndsOnceItAnswers: a single server on SQLite
// whose database file another process holds locked mid-run, past the busy
// timeout twice over. The run's writes wait, and fail (its checkpoints,
// its turn or its end, as the timing falls): until the lock goes its row
// says running, its stream has no final event and its conversation is
// busy; once it goes, the run's answer is in the conversation and the
// row, the stream and the conversation agree. (The end written again
// after a refusal is core/runs' TestARunsEndWaitsForTheStore.)
func TestARunOnALockedDatabaseEndsOnceItAnswers(t *testing.T) {
	if pgtest.OnPostgres() {
		t.Skip("a file lock is SQLite's: the outage suite covers Postgres")
	}
	t.Parallel()
	model, modelURL := startScripted(t)
	model.SetScript("stream", scripted.Script{Exchanges: []scripted.Exchange{{Steps: []scripted.Step{
		{Text: strings.Repeat("abcd", 40), ChunkSize: 4, DelayMS: 20}}}}})
	model.SetScript("quick", scripted.Script{Exchanges: []scripted.Exchange{{Steps: []scripted.Step{{Text: "fine"}}}}})
	dir := t.TempDir()
	p := startBinary(t, dir)
	must := func(method, path string, body any, want int) map[string]any {
		t.Helper()
		code, out, raw := p.call(t, method, path, body)
		if code != want {
			t.Fatalf("%s %s: %d %s", method, path, code, raw)
		}
		return out
	}
	prov := must("POST", "/api/v1/providers", map[string]any{"name": "m", "base_url": modelURL + "/v1", "api_key": "k"}, 201)["id"]
	agent := must("POST", "/api/v1/agents", map[string]any{"name": "stream", "model": "stream", "provider_id": prov}, 201)["id"]
	quick := must("POST", "/api/v1/agents", map[string]any{"name": "quick", "model": "quick", "provider_id": prov}, 201)["id"]
	sid := must("POST", "/api/v1/sessions", map[string]any{"agent_config_id": agent, "name": "s"}, 201)["id"].(string)

	// Another process takes the database's write lock.
	locker, err := sql.Open("sqlite", filepath.Join(dir, sqlstore.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer locker.Close()
	conn, err := locker.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()

	runID := must("POST", "/api/v1/sessions/"+sid+"/runs", map[string]any{"input": "go"}, 201)["run_id"].(string)
	stream := p.openSSE(t, runID, 0)
	if ev, ok := stream.next(t); !ok || ev.Type != domain.EventRunStarted {
		t.Fatal("the stream did not start")
	}
	if _, err := conn.ExecContext(context.Background(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	// Past the busy timeout (10 s) twice.
	time.Sleep(24 * time.Second)
	if code, out, _ := p.call(t, "GET", "/api/v1/runs/"+runID, nil); code != 200 || out["status"] != string(domain.RunRunning) {
		t.Fatalf("with its end unwritten, GET /runs says %d %v", code, out["status"])
	}
	if code, _, raw := p.call(t, "POST", "/api/v1/sessions/"+sid+"/runs", map[string]any{"input": "again", "agent_config_id": quick}); code != 409 {
		t.Fatalf("with its end unwritten, the conversation took a new run: %d %s", code, raw)
	}
	if _, err := conn.ExecContext(context.Background(), "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	evs := eventsOf(t, stream)
	final := evs[len(evs)-1]
	if !final.Final() {
		t.Fatalf("the stream ended on %s", final.Type)
	}
	row := must("GET", "/api/v1/runs/"+runID, nil, 200)
	if row["status"] != finalStatus(final) {
		t.Fatalf("the row says %v, the stream ended %s", row["status"], final.Type)
	}
	t.Logf("the run ended %v %v", row["status"], row["error"])
	_, _, raw := p.call(t, "GET", "/api/v1/sessions/"+sid+"/messages", nil)
	if !strings.Contains(string(raw), "abcdabcd") {
		t.Fatal("the run's answer is not in the conversation")
	}
	must("POST", "/api/v1/sessions/"+sid+"/runs", map[string]any{"input": "again", "agent_config_id": quick}, 201)
}
