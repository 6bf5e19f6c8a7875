package sqlstore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/ports"
	"github.com/agents-server/agents-server/ports/storetest"
)

// The store keeps the audit log's contract its in-memory fake is held to.
func TestAuditStoreKeepsTheContract(t *testing.T) {
	t.Parallel()
	storetest.Audit(t, openTemp(t))
}

// A record staged in a write's context lands with the write, in its
// transaction: once, whether the write is a lone statement or a
// transaction; a write that fails leaves no record; the log refuses an
// update.
func TestAStagedAuditRecordLandsWithItsWriteOnly(t *testing.T) {
	t.Parallel()
	db := openTemp(t)
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	staged := func(id string) context.Context {
		return ports.WithAuditRecord(context.Background(), &domain.AuditRecord{At: at, Actor: domain.Actor{Kind: domain.ActorUser, ID: "u1"},
			Action: "setting.update", ObjectKind: "setting", ObjectID: id, Outcome: domain.AuditSuccess, Fields: []string{"value"}})
	}
	logged := func() (ids []string) {
		t.Helper()
		recs, err := db.ListAudit(context.Background(), domain.AuditQuery{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			ids = append(ids, r.ObjectID)
		}
		return ids
	}
	// A lone statement.
	ctx := staged("lone")
	if err := db.PutSetting(ctx, ports.StoredSetting{Key: "k", Value: "v", UpdatedAt: at}); err != nil {
		t.Fatal(err)
	}
	// The same context's next write does not repeat the record.
	if _, err := db.DeleteSetting(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	// A lone statement that changes nothing: no record.
	if existed, err := db.DeleteSetting(staged("absent"), "absent"); err != nil || existed {
		t.Fatalf("deleting an absent key = %v, %v", existed, err)
	}
	// A transaction that fails: neither the change nor its record.
	put := func(ctx context.Context, key string, fail error) error {
		return db.tx(ctx, func(tx txQ) error {
			if _, err := tx.ExecContext(ctx, `INSERT INTO settings (key, value, updated_at) VALUES (?, '', 0)`, key); err != nil {
				return err
			}
			return fail
		})
	}
	boom := errors.New("boom")
	if err := put(staged("failed"), "failed", boom); !errors.Is(err, boom) {
		t.Fatalf("the failing transaction returned %v", err)
	}
	// A transaction that commits.
	if err := put(staged("tx"), "tx", nil); err != nil {
		t.Fatal(err)
	}
	if got := logged(); len(got) != 2 || got[0] != "tx" || got[1] != "lone" {
		t.Fatalf("logged %v; want [tx lone]", got)
	}
	if _, ok, _ := db.GetSetting(context.Background(), "failed"); ok {
		t.Fatal("the failed transaction's change was kept")
	}
	if _, err := db.exec(context.Background(), `UPDATE audit_log SET actor_id = 'someone else'`); err == nil {
		t.Fatal("an audit record was updated")
	}
}
