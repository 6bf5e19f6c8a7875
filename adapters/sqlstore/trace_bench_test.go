package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
)

// BenchmarkTraceStorage saves the generation spans of a 60-turn agent
// session — each call sends 3 KB of instructions, a 6 KB tool list and the
// whole conversation so far, 2 KB more per turn — and reports the bytes
// stored against the bytes of payload, and what one save and one read cost.
//
//	go test -run '^$' -bench TraceStorage ./adapters/sqlstore
func BenchmarkTraceStorage(b *testing.B) {
	ctx := context.Background()
	const turns = 60
	instructions := strings.Repeat("Be careful. ", 256)
	tools := make([]map[string]string, 12)
	for i := range tools {
		tools[i] = map[string]string{"name": fmt.Sprint("tool_", i), "description": strings.Repeat("does things ", 42)}
	}
	payloads := make([][]byte, turns)
	var input []map[string]string
	logical := 0
	for t := range turns {
		input = append(input, map[string]string{"role": "user", "content": strings.Repeat(fmt.Sprintf("turn %d asks ", t), 80)},
			map[string]string{"role": "assistant", "content": strings.Repeat(fmt.Sprintf("turn %d answers ", t), 60)})
		payloads[t], _ = json.Marshal(map[string]any{"model": "m", "system_instructions": instructions, "tools": tools, "input": input})
		logical += len(payloads[t])
	}
	var stored, saveNS, readNS float64
	for b.Loop() {
		b.StopTimer()
		db := openTempB(b)
		u := user("bench", domain.RoleMember)
		db.CreateUser(ctx, u)
		db.CreateSession(ctx, domain.Session{ID: "s", OwnerID: u.ID, CreatedAt: when, UpdatedAt: when})
		b.StartTimer()
		start := time.Now()
		for t, p := range payloads {
			sp := domain.Span{ID: fmt.Sprintf("g%03d", t), SessionID: "s", RunID: "r", Kind: domain.SpanGeneration, StartedAt: when, EndedAt: when, Data: p}
			if err := db.SaveSpan(ctx, sp); err != nil {
				b.Fatal(err)
			}
		}
		saveNS = float64(time.Since(start).Nanoseconds()) / turns
		start = time.Now()
		if _, err := db.FindSpan(ctx, "s", fmt.Sprintf("g%03d", turns-1)); err != nil {
			b.Fatal(err)
		}
		readNS = float64(time.Since(start).Nanoseconds())
		b.StopTimer()
		var p, bl int
		db.read.QueryRowContext(ctx, `SELECT COALESCE(SUM(LENGTH(data)), 0) FROM trace_payloads`).Scan(&p)
		db.read.QueryRowContext(ctx, `SELECT COALESCE(SUM(LENGTH(data)), 0) FROM trace_blobs`).Scan(&bl)
		stored = float64(p + bl)
		db.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(logical)/1e6, "payload-MB")
	b.ReportMetric(stored/1e6, "stored-MB")
	b.ReportMetric(saveNS/1e6, "ms/save")
	b.ReportMetric(readNS/1e6, "ms/read-last")
}

func openTempB(b *testing.B) *DB {
	b.Helper()
	db, err := Open(context.Background(), b.TempDir()+"/"+FileName, quiet)
	if err != nil {
		b.Fatal(err)
	}
	return db
}
