package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agents-server/agents-server/adapters/httpapi"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/internal/workbenchparts"
)

// BenchmarkSessions measures the conversation reads on sessions of 100,000
// entries: one whose bodies total ~234 MB, one of tiny entries, so the
// figures show whether a read's cost follows bytes or rows.
//
//	go tool task bench -- -run '^$' -bench BenchmarkSessions ./cmd/agents-server
func BenchmarkSessions(b *testing.B) {
	dir := b.TempDir()
	cfg := config{
		Addr: "127.0.0.1:0", DataDir: dir, DatabaseURL: databaseFor(b, dir), LogLevel: "error", LogFormat: "text",
		HTTP: httpapi.Config{BodyLimit: httpapi.DefaultBodyLimit, RateLimits: roomyLimits}, PasswordParams: fastPasswords,
		DrainTimeout: time.Second,
	}
	a, err := newApp(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		b.Fatal(err)
	}
	go a.serve()
	defer a.shutdown()

	create := func(name string) string {
		req, _ := http.NewRequest("POST", a.URL()+"/api/v1/sessions", strings.NewReader(`{"name":"`+name+`"}`))
		req.Header.Set("Authorization", "Bearer "+a.wb.AdminToken())
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		var s httpapi.SessionView
		json.NewDecoder(resp.Body).Decode(&s)
		return s.ID
	}
	large, small := create("large"), create("small")
	start := time.Now()
	bytes := seed(b, a, large, 100_000, 2340)
	b.Logf("seeded %d entries, %.0f MB of bodies, in %s", 100_000, float64(bytes)/1e6, time.Since(start).Round(time.Second))
	seed(b, a, small, 100_000, 40)

	get := func(b *testing.B, path string) {
		req, _ := http.NewRequest("GET", a.URL()+path, nil)
		req.Header.Set("Authorization", "Bearer "+a.wb.AdminToken())
		for b.Loop() {
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			n, _ := io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || n == 0 {
				b.Fatalf("status %d", resp.StatusCode)
			}
		}
	}
	for _, s := range []struct{ name, id string }{{"234MB", large}, {"tiny", small}} {
		b.Run("context/"+s.name, func(b *testing.B) { get(b, "/api/v1/sessions/"+s.id+"/context") })
		b.Run("newest200/"+s.name, func(b *testing.B) { get(b, "/api/v1/sessions/"+s.id+"/messages?limit=200") })
		// The check every turn boundary of a compacting agent makes, and
		// the plan a pass past the threshold reads (lifted columns, plus
		// the bodies of what it folds).
		b.Run("compactionCheck/"+s.name, func(b *testing.B) {
			ctx := context.Background()
			for b.Loop() {
				if _, err := workbenchparts.Of(a.wb).Sessions.CompactionDue(ctx, s.id, domain.DefaultCompactionThreshold); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("planFold/"+s.name, func(b *testing.B) {
			ctx := context.Background()
			for b.Loop() {
				if f, err := workbenchparts.Of(a.wb).Sessions.PlanFold(ctx, s.id, 99_990); err != nil || len(f.Entries) == 0 {
					b.Fatal(f.Empty(), err)
				}
			}
		})
		b.Run("appendTurn/"+s.name, func(b *testing.B) {
			ctx := context.Background()
			for b.Loop() {
				turn := syntheticTurn(len(s.name), 3, 2340)
				if _, err := workbenchparts.Of(a.wb).Sessions.Append(ctx, s.id, turn); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// seed appends n entries of about size bytes each, in turns of three
// (question, tool call, answer with usage), 300 entries per transaction.
func seed(b *testing.B, a *app, sessionID string, n, size int) int64 {
	ctx := context.Background()
	var total int64
	for done := 0; done < n; done += 300 {
		batch := syntheticTurn(done, min(300, n-done), size)
		for _, e := range batch {
			total += int64(len(e.Item))
		}
		if _, err := workbenchparts.Of(a.wb).Sessions.Append(ctx, sessionID, batch); err != nil {
			b.Fatal(err)
		}
	}
	return total
}

func syntheticTurn(at, n, size int) []domain.Entry {
	out := make([]domain.Entry, n)
	pad := strings.Repeat("lorem ipsum dolor sit amet ", size/27+1)[:max(size-120, 1)]
	for i := range out {
		run := fmt.Sprintf("run-%d", (at+i)/3)
		switch (at + i) % 3 {
		case 0:
			out[i] = userMsg(pad, run)
		case 1:
			item, _ := json.Marshal(map[string]any{"type": "function_call", "call_id": fmt.Sprintf("call_%d", at+i), "name": "read_file", "arguments": pad})
			out[i] = domain.Entry{Kind: domain.KindItem, Source: domain.SourceModel, RunID: run, Item: item}
		default:
			out[i] = assistantMsg(pad, run, &domain.Usage{InputTokens: int64(at+i) * 10, OutputTokens: 200, TotalTokens: int64(at+i)*10 + 200})
		}
	}
	return out
}
