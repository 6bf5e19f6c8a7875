package sqlstore

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agents-server/agents-server/adapters/sqlstore/pgtest"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/migrations"
	"github.com/agents-server/agents-server/ports"
)

// A year of a team's usage: 1,000,000 calls over 365 days by 50 people
// through 20 agents on 4 providers and 12 models, in 20,000 conversations
// of 50 calls each spread over up to three days. Each person works with
// four agents; an agent runs one model. Every 25th call is outside a
// conversation (a playground's), and the models of one provider have no
// price.
const (
	benchCalls         = 1_000_000
	benchDays          = 365
	benchPeople        = 50
	benchAgents        = 20
	benchProviders     = 4
	benchModels        = 12
	benchConversations = 20_000
	// benchDataVersion names the fill below in the cached file's name:
	// change it with the fill.
	benchDataVersion = 1
)

// benchFirstDay is the year's first day.
var benchFirstDay = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// BenchmarkUsageReport times a report over the whole year by each grouping
// (the top 10 conversations), and a person's month (a budget's sum), on
// SQLite and on Postgres (the test cluster; skipped with the reason
// without it). The filled SQLite file is kept under os.TempDir(), named
// by the schema and the fill, so later runs start at once; Postgres is
// filled for each run (a minute or two).
//
//	go test -run '^$' -bench 'UsageReport|RecordUsage' -benchtime 20x ./adapters/sqlstore
func BenchmarkUsageReport(b *testing.B) {
	b.Run("sqlite", func(b *testing.B) {
		db, err := Open(context.Background(), benchSQLiteFile(b), quiet)
		if err != nil {
			b.Fatal(err)
		}
		defer db.Close()
		benchReports(b, db)
	})
	b.Run("postgres", func(b *testing.B) {
		db, err := OpenPostgres(context.Background(), pgtest.URL(b, "usage report benchmark on Postgres"), quiet)
		if err != nil {
			b.Fatal(err)
		}
		defer db.Close()
		fillUsage(b, db)
		// What autovacuum would have done for a year-old table (its
		// statistics, its pages marked all-visible for index-only scans),
		// and the fill's writes flushed, so they do not run under the timing.
		for _, q := range []string{`VACUUM ANALYZE`, `CHECKPOINT`} {
			if _, err := db.write.ExecContext(context.Background(), q); err != nil {
				b.Fatal(err)
			}
		}
		benchReports(b, db)
	})
}

func benchReports(b *testing.B, db *DB) {
	ctx := context.Background()
	year := func(g ports.UsageGroup, limit int) ports.UsageQuery {
		return ports.UsageQuery{FromDay: "2026-01-01", ToDay: "2026-12-31", GroupBy: g, Limit: limit}
	}
	for _, c := range []struct {
		name string
		q    ports.UsageQuery
		rows int
	}{
		{"person", year(ports.GroupPerson, 0), benchPeople},
		{"agent", year(ports.GroupAgent, 0), benchAgents},
		{"provider", year(ports.GroupProvider, 0), benchProviders},
		{"model", year(ports.GroupModel, 0), benchModels},
		{"day", year(ports.GroupDay, 0), benchDays},
		{"conversation-top10", year(ports.GroupConversation, 10), 10},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				r, err := db.UsageReport(ctx, c.q)
				if err != nil {
					b.Fatal(err)
				}
				if len(r.Rows) != c.rows || r.Totals.Calls == 0 {
					b.Fatalf("%d rows, %d calls; want %d rows", len(r.Rows), r.Totals.Calls, c.rows)
				}
			}
		})
	}
	b.Run("totals-person-month", func(b *testing.B) {
		for b.Loop() {
			t, err := db.UsageTotals(ctx, ports.UsageFilter{UserID: benchID("u", 7)}, "2026-06-01", "2026-06-30")
			if err != nil {
				b.Fatal(err)
			}
			if t.Calls == 0 {
				b.Fatal("the month holds no call of the person")
			}
		}
	})
}

// BenchmarkRecordUsage times recording one call (the record and its two
// rollups, one transaction) into a store, on SQLite and on Postgres.
func BenchmarkRecordUsage(b *testing.B) {
	run := func(b *testing.B, db *DB) {
		ctx := context.Background()
		at := benchFirstDay
		i := 0
		for b.Loop() {
			i++
			rec := domain.UsageRecord{ID: fmt.Sprintf("rec%09d", i), At: at.Add(time.Duration(i) * time.Second),
				UserID: benchID("u", i%benchPeople), AgentID: benchID("a", i%benchAgents), ProviderID: "p1",
				ProviderType: "openai", Model: "gpt-5", SessionID: benchID("s", i%500), RunID: benchID("r", i/3),
				Kind: domain.UsageChat, Outcome: domain.UsageOK, InputTokens: 3000, CachedInputTokens: 1000,
				OutputTokens: 400, CostMicros: 4000, Priced: true}
			if err := db.RecordUsage(ctx, rec); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("sqlite", func(b *testing.B) {
		db, err := Open(context.Background(), filepath.Join(b.TempDir(), FileName), quiet)
		if err != nil {
			b.Fatal(err)
		}
		defer db.Close()
		run(b, db)
	})
	b.Run("postgres", func(b *testing.B) {
		db, err := OpenPostgres(context.Background(), pgtest.URL(b, "record usage benchmark on Postgres"), quiet)
		if err != nil {
			b.Fatal(err)
		}
		defer db.Close()
		run(b, db)
	})
}

func benchID(prefix string, n int) string { return fmt.Sprintf("%s%05d", prefix, n) }

// benchSQLiteFile returns the filled SQLite file, filling it first when
// no run made it yet for this schema and fill: its name holds a hash of
// the migrations and benchDataVersion. A fill is written beside it and
// renamed when complete, so an interrupted one is never used.
func benchSQLiteFile(b *testing.B) string {
	names, err := fs.Glob(migrations.SQLite, "*.sql")
	if err != nil || len(names) == 0 {
		b.Fatalf("the SQLite migrations: %v", err)
	}
	h := sha256.New()
	for _, name := range names {
		data, err := fs.ReadFile(migrations.SQLite, name)
		if err != nil {
			b.Fatal(err)
		}
		fmt.Fprintf(h, "%s %d\n", name, len(data))
		h.Write(data)
	}
	path := filepath.Join(os.TempDir(), fmt.Sprintf("agents-usage-bench-%x-d%d.db", h.Sum(nil)[:6], benchDataVersion))
	if _, err := os.Stat(path); err == nil {
		return path
	}
	filling := path + ".filling"
	for _, f := range []string{filling, filling + "-wal", filling + "-shm"} {
		_ = os.Remove(f)
	}
	db, err := Open(context.Background(), filling, quiet)
	if err != nil {
		b.Fatal(err)
	}
	fillUsage(b, db)
	if err := db.Close(); err != nil {
		b.Fatal(err)
	}
	if err := os.Rename(filling, path); err != nil {
		b.Fatal(err)
	}
	return path
}

// fillUsage writes the year's records with multi-row INSERTs in large
// transactions, then builds the rollups from them with INSERT … SELECT …
// GROUP BY: the store's rows, without a million RecordUsage calls.
func fillUsage(b *testing.B, db *DB) {
	ctx := context.Background()
	start := time.Now()
	rng := rand.New(rand.NewPCG(43, 43))
	priced := func(model int) bool { return model/3 != 3 } // provider 3's models have no price
	var rows []string
	flush := func(tx *dbTx) {
		if len(rows) == 0 {
			return
		}
		tx.exec(b, `INSERT INTO usage_records (`+usageRecordColumns+`) VALUES `+strings.Join(rows, ","))
		rows = rows[:0]
	}
	tx := db.beginBench(b)
	n := 0
	for c := range benchConversations {
		person := c % benchPeople
		agent := (person*7 + rng.IntN(4)*5) % benchAgents // four agents a person works with
		provider := agent % benchProviders
		model := provider*3 + (agent/benchProviders)%3
		firstDay := rng.IntN(benchDays)
		for k := range benchCalls / benchConversations {
			day := min(firstDay+rng.IntN(3), benchDays-1)
			at := benchFirstDay.AddDate(0, 0, day).Add(time.Duration(rng.Int64N(int64(24 * time.Hour))))
			in, out := 500+rng.Int64N(20_000), 50+rng.Int64N(2_000)
			cached := in * rng.Int64N(80) / 100
			cost, p := (in*1_250_000+out*10_000_000)/1_000_000, 1
			if !priced(model) {
				cost, p = 0, 0
			}
			session, kind := benchID("s", c), domain.UsageChat
			if n%25 == 0 {
				session, kind = "", domain.UsagePlayground
			}
			rows = append(rows, fmt.Sprintf("('%s',%d,'%s','%s','%s','%s','%s','%s','%s','','%s','ok',%d,%d,%d,%d,%d,%d)",
				fmt.Sprintf("rec%09d", n), at.UnixMilli(), benchID("u", person), benchID("a", agent), benchID("p", provider),
				[]string{"openai", "anthropic", "openai", "local"}[provider], benchID("m", model), session,
				benchID("r", c*10+k/5), kind, in, cached, out, out/10, cost, p))
			n++
			if len(rows) == 1000 {
				flush(tx)
			}
			if n%100_000 == 0 {
				tx.commit(b)
				tx = db.beginBench(b)
			}
		}
	}
	flush(tx)
	tx.commit(b)
	// The rollups, from the records.
	day := `strftime('%Y-%m-%d', at / 1000, 'unixepoch')`
	if db.Dialect() == "postgres" {
		day = `to_char(to_timestamp(at / 1000) AT TIME ZONE 'UTC', 'YYYY-MM-DD')`
	}
	sums := `COUNT(*), SUM(input_tokens), SUM(cached_input_tokens), SUM(output_tokens), SUM(reasoning_tokens),
		SUM(CASE WHEN priced = 1 THEN cost_micros ELSE 0 END), SUM(1 - priced)`
	tx = db.beginBench(b)
	tx.exec(b, `INSERT INTO usage_daily (day, user_id, agent_id, provider_id, provider_type, model, `+rollupColumns+`)
		SELECT `+day+`, user_id, agent_id, provider_id, MIN(provider_type), model, `+sums+` FROM usage_records
		GROUP BY `+day+`, user_id, agent_id, provider_id, model`)
	tx.exec(b, `INSERT INTO usage_session_daily (day, session_id, user_id, `+rollupColumns+`)
		SELECT `+day+`, session_id, MIN(user_id), `+sums+` FROM usage_records WHERE session_id <> ''
		GROUP BY `+day+`, session_id`)
	tx.commit(b)
	var daily, sessions int
	db.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM usage_daily`).Scan(&daily)
	db.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM usage_session_daily`).Scan(&sessions)
	b.Logf("filled %s with %d calls (%d daily rollup rows, %d conversation-day rows) in %s",
		db.Dialect(), n, daily, sessions, time.Since(start).Round(time.Second))
}

// dbTx is a raw write transaction for the fill: no audit, no observer,
// and its statements (values written out, no placeholders) bypass the
// dialect, which would keep each rewritten text.
type dbTx struct{ *sql.Tx }

func (db *DB) beginBench(b *testing.B) *dbTx {
	t, err := db.write.DB.BeginTx(context.Background(), nil)
	if err != nil {
		b.Fatal(err)
	}
	return &dbTx{t}
}

func (t *dbTx) exec(b *testing.B, query string) {
	if _, err := t.Tx.ExecContext(context.Background(), query); err != nil {
		b.Fatal(err)
	}
}

func (t *dbTx) commit(b *testing.B) {
	if err := t.Commit(); err != nil {
		b.Fatal(err)
	}
}
