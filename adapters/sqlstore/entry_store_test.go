package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// seedTree writes a small tree: u1 → a1 → (update on a1) and a branch
// marker L under u1 → a2, with row ids r1… and seqs 1….
func seedTree(t *testing.T, db *DB) domain.Session {
	t.Helper()
	ctx := context.Background()
	u := user("owner", domain.RoleMember)
	db.CreateUser(ctx, u)
	s := domain.Session{ID: "s1", OwnerID: u.ID, CreatedAt: when, UpdatedAt: when}
	if err := db.CreateSession(ctx, s); err != nil {
		t.Fatal(err)
	}
	mk := func(seq int64, id, parent, bp, kind string, extra func(*domain.Entry)) (domain.Entry, domain.EntryMeta) {
		e := domain.Entry{ID: id, ParentID: parent, Kind: kind, RowID: fmt.Sprintf("r%02d", seq), Seq: seq, CreatedAt: when}
		if kind == domain.KindItem {
			e.Item = json.RawMessage(`{"type":"message","role":"user","content":[{"type":"input_text","text":"` + id + `"}]}`)
		}
		if extra != nil {
			extra(&e)
		}
		return e, domain.MetaOf(e, bp)
	}
	var entries []domain.Entry
	var metas []domain.EntryMeta
	for _, x := range []struct {
		seq                  int64
		id, parent, bp, kind string
		extra                func(*domain.Entry)
	}{
		{1, "u1", "", "", domain.KindItem, nil},
		{2, "a1", "u1", "u1", domain.KindItem, func(e *domain.Entry) { e.Usage = &domain.Usage{InputTokens: 5, TotalTokens: 7} }},
		{3, "up", "a1", "a1", domain.KindUpdate, func(e *domain.Entry) { e.TargetID = "a1"; e.Display = &domain.Display{Title: "t"} }},
		{4, "L", "u1", "u1", domain.KindLeaf, nil},
		{5, "a2", "L", "u1", domain.KindItem, nil},
	} {
		e, m := mk(x.seq, x.id, x.parent, x.bp, x.kind, x.extra)
		entries, metas = append(entries, e), append(metas, m)
	}
	err := db.WriteSession(ctx, "s1", func(tx ports.SessionTx) error {
		if err := tx.InsertEntries(ctx, entries, metas); err != nil {
			return err
		}
		return tx.SaveState(ctx, "a2", 5, domain.ContextTotals{ActiveChars: 42, AnchorSeq: 2, AnchorUsage: domain.Usage{TotalTokens: 7}}, when)
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestEntryStoreReads(t *testing.T) {
	db := openTemp(t)
	ctx := context.Background()
	seedTree(t, db)
	s, _ := db.FindSession(ctx, "s1")
	if s.TipID != "a2" || s.LastSeq != 5 || s.Totals.ActiveChars != 42 || s.Totals.AnchorUsage.TotalTokens != 7 {
		t.Fatalf("state = %+v", s)
	}
	err := db.ReadSession(ctx, "s1", func(r ports.SessionReader) error {
		metas, err := r.EntryMetas(ctx, 2)
		if err != nil || len(metas) != 4 || metas[0].ID != "a1" || metas[0].Usage == nil || metas[0].Usage.InputTokens != 5 ||
			metas[1].Target != "a1" || metas[3].BranchParent != "u1" || metas[1].Usage != nil {
			t.Errorf("metas = %+v %v", metas, err)
		}
		content, _ := r.ContentEntries(ctx, 0, 0)
		if len(content) != 3 || content[2].Meta.ID != "a2" || content[2].Meta.RowID != "r05" || content[2].Meta.Seq != 5 {
			t.Errorf("content = %+v", content)
		}
		newest, _ := r.ContentEntries(ctx, 5, 1)
		if len(newest) != 1 || newest[0].Meta.ID != "a1" {
			t.Errorf("newest before seq 5 = %+v", newest)
		}
		if e, err := content[1].Decode(); err != nil || e.ID != "a1" || e.ParentID != "u1" || e.Seq != 2 || e.Usage.InputTokens != 5 {
			t.Errorf("decoded = %+v %v", e, err)
		}
		all, _ := r.Entries(ctx, 3)
		if len(all) != 3 || all[2].Kind != domain.KindUpdate || all[2].Display.Title != "t" || all[1].ParentID != "u1" {
			t.Errorf("entries = %+v", all)
		}
		ups, _ := r.UpdatesTargeting(ctx, []string{"a1", "zz"})
		if len(ups) != 1 || ups[0].ID != "up" {
			t.Errorf("updates = %+v", ups)
		}
		sibs, _ := r.MetasByBranchParent(ctx, []string{"u1"})
		if len(sibs) != 2 || sibs[0].ID != "a1" || sibs[1].ID != "a2" {
			t.Errorf("siblings = %+v", sibs)
		}
		if tip, _ := r.SubtreeTip(ctx, "u1"); tip != "a2" {
			t.Errorf("subtree tip of u1 = %s", tip)
		}
		if tip, _ := r.SubtreeTip(ctx, "a1"); tip != "a1" {
			t.Errorf("subtree tip of a1 = %s (updates are not content)", tip)
		}
		if seq, err := r.SeqOfRow(ctx, "r04"); seq != 4 || err != nil {
			t.Errorf("seq of r04 = %d %v", seq, err)
		}
		if _, err := r.SeqOfRow(ctx, "nope"); errs.CodeOf(err) != errs.NotFound {
			t.Errorf("foreign row: %v", err)
		}
		if _, err := r.FindEntry(ctx, "nope"); errs.CodeOf(err) != errs.NotFound {
			t.Errorf("missing entry: %v", err)
		}
		if m, err := r.FindMeta(ctx, "L"); err != nil || m.Kind != domain.KindLeaf {
			t.Errorf("leaf meta = %+v %v", m, err)
		}
		if _, ok, _ := r.LatestContextProfile(ctx); ok {
			t.Error("a profile before any run")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.ReadSession(ctx, "nope", func(ports.SessionReader) error { return nil }); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("missing session: %v", err)
	}
}

func TestEntryInvariantsAndCascade(t *testing.T) {
	db := openTemp(t)
	ctx := context.Background()
	seedTree(t, db)
	// A seq or entry id is never reused within a session.
	dup := domain.Entry{ID: "fresh", Kind: domain.KindItem, RowID: "r99", Seq: 5, CreatedAt: when}
	err := db.WriteSession(ctx, "s1", func(tx ports.SessionTx) error {
		return tx.InsertEntries(ctx, []domain.Entry{dup}, []domain.EntryMeta{domain.MetaOf(dup, "")})
	})
	if errs.CodeOf(err) != errs.Conflict {
		t.Fatalf("duplicate seq: %v", err)
	}
	dup.ID, dup.Seq = "u1", 6
	err = db.WriteSession(ctx, "s1", func(tx ports.SessionTx) error {
		return tx.InsertEntries(ctx, []domain.Entry{dup}, []domain.EntryMeta{domain.MetaOf(dup, "")})
	})
	if errs.CodeOf(err) != errs.Conflict {
		t.Fatalf("duplicate entry id: %v", err)
	}
	var n int
	db.read.QueryRow(`SELECT count(*) FROM entries`).Scan(&n)
	if n != 5 {
		t.Fatalf("%d entries after refused writes", n)
	}
	if err := db.DeleteSession(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	db.read.QueryRow(`SELECT count(*) FROM entries`).Scan(&n)
	if n != 0 {
		t.Fatalf("%d entries survived their session", n)
	}
}
