package sqlstore

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/agents-server/agents-server/adapters/sqlstore/pgtest"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/ports"
	"github.com/agents-server/agents-server/ports/storetest"
)

// onBothEngines runs fn on an empty SQLite store and on an empty Postgres
// one (the test cluster; skipped, saying why, without it), whichever
// engine AGENTS_TEST_STORE chose for the rest of the suite.
func onBothEngines(t *testing.T, fn func(t *testing.T, db *DB)) {
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		db, err := Open(context.Background(), filepath.Join(t.TempDir(), FileName), quiet)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		fn(t, db)
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		db, err := OpenPostgres(context.Background(), pgtest.URL(t, "usage store suite on Postgres"), quiet)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		fn(t, db)
	})
}

// The store keeps the usage contract its in-memory fake is held to.
func TestUsageStoreKeepsTheContract(t *testing.T) {
	t.Parallel()
	onBothEngines(t, func(t *testing.T, db *DB) { storetest.Usage(t, db) })
}

// A report labels its groups with the names of the people, agents,
// providers and conversations they are of, read when the report is made;
// one deleted since keeps its usage, under the label "".
func TestUsageReportLabelsGroupsWithTheirNames(t *testing.T) {
	t.Parallel()
	onBothEngines(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
		for _, u := range []domain.User{{ID: "u1", Username: "alice"}, {ID: "u2", Username: "bob"}} {
			u.Role, u.CreatedAt, u.UpdatedAt = domain.RoleMember, at, at
			if err := db.CreateUser(ctx, u); err != nil {
				t.Fatal(err)
			}
		}
		seed := []string{
			`INSERT INTO providers (id, owner_id, scope, name, type, auth_mode, api, created_at, updated_at)
				VALUES ('p1', 'u1', 'global', 'OpenAI', 'openai', 'api_key', 'responses', 0, 0)`,
			`INSERT INTO agents (id, owner_id, scope, name, created_at, updated_at) VALUES ('a1', 'u1', 'global', 'coder', 0, 0)`,
			`INSERT INTO agents (id, owner_id, scope, name, created_at, updated_at) VALUES ('a2', 'u1', 'global', 'gone', 0, 0)`,
		}
		for _, q := range seed {
			if _, err := db.write.ExecContext(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
		if err := db.CreateSession(ctx, domain.Session{ID: "s1", OwnerID: "u1", Name: "Plan the launch", CreatedAt: at, UpdatedAt: at}); err != nil {
			t.Fatal(err)
		}
		rec := func(id, user, agent, session string, cost int64) domain.UsageRecord {
			return domain.UsageRecord{ID: id, At: at, UserID: user, AgentID: agent, ProviderID: "p1", ProviderType: "openai",
				Model: "gpt-5", SessionID: session, RunID: "r" + id, Kind: domain.UsageChat, Outcome: domain.UsageOK,
				InputTokens: 10, OutputTokens: 5, CostMicros: cost, Priced: true}
		}
		for _, r := range []domain.UsageRecord{rec("1", "u1", "a1", "s1", 300), rec("2", "u2", "a2", "s2", 200), rec("3", "u3", "a2", "", 100)} {
			if err := db.RecordUsage(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := db.write.ExecContext(ctx, `DELETE FROM agents WHERE id = 'a2'`); err != nil {
			t.Fatal(err)
		}
		labels := func(g ports.UsageGroup) map[string]string {
			t.Helper()
			r, err := db.UsageReport(ctx, ports.UsageQuery{GroupBy: g})
			if err != nil {
				t.Fatal(err)
			}
			out := map[string]string{}
			for _, row := range r.Rows {
				out[row.Key] = row.Label
			}
			return out
		}
		for g, want := range map[ports.UsageGroup]map[string]string{
			ports.GroupPerson:       {"u1": "alice", "u2": "bob", "u3": ""},
			ports.GroupAgent:        {"a1": "coder", "a2": ""},
			ports.GroupProvider:     {"p1": "OpenAI"},
			ports.GroupModel:        {"openai/gpt-5": "gpt-5"},
			ports.GroupDay:          {"2026-12-01": "2026-12-01"},
			ports.GroupConversation: {"s1": "Plan the launch", "s2": ""},
		} {
			if got := labels(g); len(got) != len(want) || !mapsEqual(got, want) {
				t.Errorf("by %s: %v; want %v", g, got, want)
			}
		}
	})
}

func mapsEqual(a, b map[string]string) bool {
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return len(a) == len(b)
}

// A call is recorded whole or not at all: a rollup that fails takes its
// record with it, and an audit record staged in the write's context lands
// in the same transaction.
func TestRecordUsageIsOneTransaction(t *testing.T) {
	t.Parallel()
	onBothEngines(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
		rec := domain.UsageRecord{ID: "r1", At: at, UserID: "u1", ProviderID: "p1", ProviderType: "openai", Model: "gpt-5",
			SessionID: "s1", RunID: "run1", Kind: domain.UsageChat, Outcome: domain.UsageOK, InputTokens: 10, Priced: true}
		// A session rollup row that refuses the addition: its upsert fails
		// after the record and the daily rollup were written.
		refuse := []string{`CREATE TRIGGER refuse_usage BEFORE UPDATE ON usage_session_daily BEGIN SELECT RAISE(ABORT, 'refused'); END`}
		allow := `DROP TRIGGER refuse_usage`
		if db.Dialect() == "postgres" {
			refuse = []string{`CREATE FUNCTION refuse_usage() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'refused'; END; $$ LANGUAGE plpgsql`,
				`CREATE TRIGGER refuse_usage BEFORE UPDATE ON usage_session_daily FOR EACH ROW EXECUTE FUNCTION refuse_usage()`}
			allow += ` ON usage_session_daily`
		}
		if err := db.RecordUsage(ctx, rec); err != nil {
			t.Fatal(err)
		}
		for _, q := range refuse {
			if _, err := db.write.ExecContext(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
		second := rec
		second.ID = "r2"
		staged := ports.WithAuditRecord(ctx, &domain.AuditRecord{At: at, Actor: domain.Actor{Kind: domain.ActorUser, ID: "u1"},
			Action: "usage.record", ObjectKind: "usage", ObjectID: "r2", Outcome: domain.AuditSuccess})
		if err := db.RecordUsage(staged, second); err == nil {
			t.Fatal("the refused rollup did not fail the record")
		}
		run, err := db.RunUsage(ctx, "run1")
		if err != nil {
			t.Fatal(err)
		}
		day, err := db.UsageTotals(ctx, ports.UsageFilter{}, "2026-12-01", "2026-12-01")
		if err != nil {
			t.Fatal(err)
		}
		if run.Calls != 1 || day.Calls != 1 {
			t.Fatalf("after the failed record: the run has %d calls, the day %d; want 1 each", run.Calls, day.Calls)
		}
		if logged, err := db.ListAudit(ctx, domain.AuditQuery{Limit: 10}); err != nil || len(logged) != 0 {
			t.Fatalf("the failed record's audit: %v, %v; want none", logged, err)
		}
		// Without the trigger the staged record lands with the call.
		if _, err := db.write.ExecContext(ctx, allow); err != nil {
			t.Fatal(err)
		}
		if err := db.RecordUsage(staged, second); err != nil {
			t.Fatal(err)
		}
		if logged, err := db.ListAudit(ctx, domain.AuditQuery{Limit: 10}); err != nil || len(logged) != 1 || logged[0].ObjectID != "r2" {
			t.Fatalf("the audit after the call landed: %v, %v; want its record", logged, err)
		}
	})
}
