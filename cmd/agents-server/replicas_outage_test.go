package main

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/agents-server/agents-server/adapters/llm/scripted"
	"github.com/agents-server/agents-server/adapters/sqlstore/pgtest"
	"github.com/agents-server/agents-server/core/domain"
)

// The outage suite: replicas on one Postgres whose connections to it are
// cut mid-run. What a replica's backplane misses while it reconnects is
// caught up from the run's replica: a watcher anywhere still sees every
// event once, in order.

// terminate ends the connections to the database at url whose last query
// starts with prefix (the backplane's listeners: "LISTEN"; its senders:
// "SELECT pg_notify"), as an operator's pg_terminate_backend or a
// network cut would; it returns how many it ended.
func terminate(t *testing.T, url, like string) int {
	t.Helper()
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var n int
	err = db.QueryRowContext(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid() AND query LIKE $1`, like).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestAWatcherOnAnotherReplicaMissesNothingWhenTheBackplaneDrops(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t, "replica outage suite on Postgres")
	model, modelURL := startScripted(t)
	model.SetScript("stream", scripted.Script{Exchanges: []scripted.Exchange{{Steps: []scripted.Step{
		{Text: strings.Repeat("abcd", 240), ChunkSize: 4, DelayMS: 15}}}}})
	a := startReplica(t, url)
	b := startReplica(t, url)
	_, out, raw := a.call(t, "POST", "/api/v1/providers", map[string]any{"name": "m", "base_url": modelURL + "/v1", "api_key": "k"})
	prov, _ := out["id"].(string)
	if prov == "" {
		t.Fatalf("provider: %s", raw)
	}
	_, out, raw = a.call(t, "POST", "/api/v1/agents", map[string]any{"name": "stream", "model": "stream", "provider_id": prov})
	agent, _ := out["id"].(string)
	if agent == "" {
		t.Fatalf("agent: %s", raw)
	}
	for _, cut := range []struct{ name, like string }{
		{"the listeners", "LISTEN%"},
		{"the senders", "%pg_notify%"},
	} {
		t.Run("cutting "+cut.name+" mid-run", func(t *testing.T) {
			_, out, raw := a.call(t, "POST", "/api/v1/sessions", map[string]any{"agent_config_id": agent, "name": "s"})
			sid, _ := out["id"].(string)
			if sid == "" {
				t.Fatalf("session: %s", raw)
			}
			_, out, raw = a.call(t, "POST", "/api/v1/sessions/"+sid+"/runs", map[string]any{"input": "go"})
			runID, _ := out["run_id"].(string)
			if runID == "" {
				t.Fatalf("start: %s", raw)
			}
			fromB, fromA := b.openSSE(t, runID, 0), a.openSSE(t, runID, 0)
			var early []domain.Event
			for len(early) < 20 {
				ev, ok := fromB.next(t)
				if !ok {
					t.Fatal("B's stream ended before the cut")
				}
				early = append(early, ev.Event)
			}
			if n := terminate(t, url, cut.like); n == 0 {
				t.Fatalf("no connection of %s to cut", cut.name)
			}
			time.Sleep(300 * time.Millisecond)
			terminate(t, url, cut.like) // again, while they reconnect
			onB := append(early, eventsOf(t, fromB)...)
			onA := eventsOf(t, fromA)
			wholeOnce(t, "SSE on A", onA)
			// B may be caught up after A's run ended, from A's history, where
			// a stretch of deltas is one event standing for them (first_seq):
			// still every number once, in order, and no gap — A held them all.
			orderedOnce(t, "SSE on B", onB)
			for _, ev := range onB {
				if ev.Type == domain.EventGap {
					t.Fatalf("B's watcher got a gap although A held every event: %s", ev.Payload)
				}
			}
			if last := onB[len(onB)-1]; last.Seq != onA[len(onA)-1].Seq || last.Type != onA[len(onA)-1].Type {
				t.Fatalf("A's stream ended with %d %s, B's with %d %s", onA[len(onA)-1].Seq, onA[len(onA)-1].Type, last.Seq, last.Type)
			}
		})
	}
}
