package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/agents-server/agents-server/adapters/httpapi"
	"github.com/agents-server/agents-server/adapters/llm/scripted"
	"github.com/agents-server/agents-server/adapters/sqlstore/pgtest"
)

// BenchmarkReplicaEventLatency measures what a second replica adds to an
// event's way to a client: two replicas on one Postgres database, a run
// streaming 300 deltas on A, a WebSocket watcher on A and one on B. For
// every event the watcher on B's arrival minus the watcher on A's is the
// relay (A's bus → NOTIFY → B's hub → B's socket); p50 and p99 are
// reported, in microseconds.
//
//	export "$(scripts/postgres/up.sh | tail -1)"
//	go test -run '^$' -bench ReplicaEventLatency ./cmd/agents-server
func BenchmarkReplicaEventLatency(b *testing.B) {
	url := pgtest.URL(b, "replica benchmark on Postgres")
	const deltas = 300
	model := scripted.New(scripted.Options{})
	model.SetScript("stream", oneStep(scripted.Step{Text: strings.Repeat("tok", deltas), ChunkSize: 3, DelayMS: 1}))
	modelSrv := httptest.NewServer(model.Handler())
	defer modelSrv.Close()

	open := func() *app {
		cfg := config{Addr: "127.0.0.1:0", DataDir: b.TempDir(), DatabaseURL: url, LogLevel: "error", LogFormat: "text",
			HTTP: httpapi.Config{BodyLimit: httpapi.DefaultBodyLimit, RateLimits: roomyLimits}, PasswordParams: fastPasswords,
			DrainTimeout: time.Second}
		a, err := newApp(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err != nil {
			b.Fatal(err)
		}
		go a.serve()
		b.Cleanup(func() { a.shutdown() })
		return a
	}
	a, r := open(), open()
	call := benchCall(b, a)
	prov := call("POST", "/api/v1/providers", `{"name":"bench","base_url":"`+modelSrv.URL+`/v1","api":"responses","api_key":"k"}`)
	agent := call("POST", "/api/v1/agents", `{"name":"bench","model":"stream","provider_id":"`+prov["id"].(string)+`"}`)

	// watch records when each event of each run reached a watcher.
	type key struct {
		run string
		seq int64
	}
	watch := func(srv *app) (map[key]time.Time, *sync.Mutex, chan string) {
		ws, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(srv.URL(), "http")+"/ws", nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { ws.Close() })
		ws.WriteJSON(map[string]string{"type": "auth", "token": srv.wb.AdminToken()})
		ws.ReadMessage()
		seen, mu, ended := map[key]time.Time{}, &sync.Mutex{}, make(chan string, 1024)
		go func() {
			for {
				_, frame, err := ws.ReadMessage()
				if err != nil {
					return
				}
				at := time.Now()
				var ev struct {
					Type    string `json:"type"`
					Seq     int64  `json:"seq"`
					Payload struct {
						RunID string `json:"run_id"`
					} `json:"payload"`
				}
				json.Unmarshal(frame, &ev)
				mu.Lock()
				seen[key{ev.Payload.RunID, ev.Seq}] = at
				mu.Unlock()
				if ev.Type == "run.output" || ev.Type == "run.error" {
					ended <- ev.Payload.RunID
				}
			}
		}()
		return seen, mu, ended
	}
	onA, muA, endA := watch(a)
	onB, muB, endB := watch(r)

	var relay []time.Duration
	merged := 0
	for b.Loop() {
		sess := call("POST", "/api/v1/sessions", `{"agent_config_id":"`+agent["id"].(string)+`"}`)
		run := call("POST", "/api/v1/sessions/"+sess["id"].(string)+"/runs", `{"input":"go"}`)["run_id"].(string)
		for _, ended := range []chan string{endA, endB} {
			for got := ""; got != run; {
				select {
				case got = <-ended:
				case <-time.After(30 * time.Second):
					b.Fatalf("run %s did not end on both replicas", run)
				}
			}
		}
		muA.Lock()
		muB.Lock()
		for k, atA := range onA {
			if k.run != run {
				continue
			}
			// An event B's watcher lacks was merged into a replay (its
			// socket attached after the run's end had compacted it).
			if atB, ok := onB[k]; ok {
				relay = append(relay, atB.Sub(atA))
			} else {
				merged++
			}
		}
		muB.Unlock()
		muA.Unlock()
	}
	if len(relay) == 0 {
		return
	}
	slices.Sort(relay)
	p := func(q float64) float64 { return float64(relay[int(q*float64(len(relay)-1))].Microseconds()) }
	b.ReportMetric(p(0.50), "p50-relay-µs")
	b.ReportMetric(p(0.99), "p99-relay-µs")
	b.ReportMetric(float64(len(relay))/float64(b.N), "events/run")
	b.ReportMetric(float64(merged)/float64(b.N), "merged/run")
}
