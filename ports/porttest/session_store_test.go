package porttest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
	"github.com/agents-server/agents-server/ports/porttest"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// chain builds n entries, each the parent of the next, with seqs from 1.
func chain(prefix string, n int, kinds ...string) ([]domain.Entry, []domain.EntryMeta) {
	var es []domain.Entry
	var ms []domain.EntryMeta
	var prev *domain.EntryMeta
	for i := range n {
		kind := domain.KindItem
		if i < len(kinds) {
			kind = kinds[i]
		}
		e := domain.Entry{ID: fmt.Sprintf("%s%d", prefix, i+1), RowID: fmt.Sprintf("row-%s%d", prefix, i+1), Kind: kind,
			Seq: int64(i + 1), CreatedAt: t0, Item: domain.TextMessage("user", "input_text", "hi")}
		if prev != nil {
			e.ParentID = prev.ID
		}
		m := domain.MetaOf(e, domain.BranchParentFor(prev))
		es, ms = append(es, e), append(ms, m)
		prev = &ms[len(ms)-1]
	}
	return es, ms
}

func TestSessionStoreRows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var s porttest.SessionStore
	rows := []domain.Session{
		{ID: "a", OwnerID: "u1", UpdatedAt: t0},
		{ID: "b", OwnerID: "u1", UpdatedAt: t0.Add(time.Minute)},
		{ID: "c", OwnerID: "u1", UpdatedAt: t0, Pinned: true},
		{ID: "d", OwnerID: "u2", UpdatedAt: t0.Add(time.Hour)},
		{ID: "e", OwnerID: "u1", UpdatedAt: t0.Add(time.Hour), Hidden: true},
	}
	for _, r := range rows {
		if err := s.CreateSession(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.CreateSession(ctx, rows[0]); !errs.Is(err, errs.Conflict) {
		t.Fatalf("duplicate id: %v, want conflict", err)
	}
	ids := func(list []domain.Session) string {
		out := ""
		for _, r := range list {
			out += r.ID
		}
		return out
	}
	if got, _ := s.ListSessions(ctx, "u1"); ids(got) != "cba" {
		t.Errorf("u1's list = %q, want pinned first, then newest, hidden left out", ids(got))
	}
	if got, _ := s.ListSessions(ctx, ""); ids(got) != "cdba" {
		t.Errorf("everyone's list = %q", ids(got))
	}
	got, err := s.UpdateSession(ctx, "a", func(r *domain.Session) error {
		r.Name, r.TipID, r.UpdatedAt = "renamed", "not-stored", t0.Add(2*time.Hour)
		return nil
	})
	if err != nil || got.Name != "renamed" {
		t.Fatalf("update = %+v, %v", got, err)
	}
	if r, _ := s.FindSession(ctx, "a"); r.Name != "renamed" || r.TipID != "" {
		t.Errorf("stored after update = %+v: name kept, tip untouched", r)
	}
	boom := errors.New("boom")
	if _, err := s.UpdateSession(ctx, "a", func(r *domain.Session) error { r.Name = "lost"; return boom }); !errors.Is(err, boom) {
		t.Fatalf("failed update: %v", err)
	}
	if r, _ := s.FindSession(ctx, "a"); r.Name != "renamed" {
		t.Errorf("a failed update stored %q", r.Name)
	}
	if err := s.DeleteSession(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{s.DeleteSession(ctx, "a"), s.ReadSession(ctx, "a", nil), s.WriteSession(ctx, "a", nil),
		func() error { _, err := s.FindSession(ctx, "a"); return err }()} {
		if !errs.Is(err, errs.NotFound) {
			t.Errorf("after delete: %v, want not_found", err)
		}
	}
}

func TestSessionStoreEntries(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var s porttest.SessionStore
	es, ms := chain("e", 4, domain.KindItem, domain.KindItem, domain.KindLeaf, domain.KindItem)
	es[3].ParentID, ms[3].ParentID = "e1", "e1" // e4 branches off e1 beside e2
	ms[3].BranchParent = "e1"
	if err := s.CreateSessionWithEntries(ctx, domain.Session{ID: "s", TipID: "e4", LastSeq: 4}, es, ms); err != nil {
		t.Fatal(err)
	}
	err := s.ReadSession(ctx, "s", func(r ports.SessionReader) error {
		content, _ := r.ContentEntries(ctx, 0, 2)
		if len(content) != 2 || content[0].Meta.ID != "e2" || content[1].Meta.ID != "e4" {
			t.Errorf("newest two content entries = %+v", content)
		}
		if older, _ := r.ContentEntries(ctx, 2, 0); len(older) != 1 || older[0].Meta.ID != "e1" {
			t.Errorf("before seq 2 = %+v", older)
		}
		if tip, _ := r.SubtreeTip(ctx, "e1"); tip != "e4" {
			t.Errorf("subtree tip of e1 = %s", tip)
		}
		if tip, _ := r.SubtreeTip(ctx, "e2"); tip != "e2" {
			t.Errorf("subtree tip of e2 = %s (the leaf below it holds nothing)", tip)
		}
		if sib, _ := r.MetasByBranchParent(ctx, []string{"e1"}); len(sib) != 2 {
			t.Errorf("siblings under e1 = %+v", sib)
		}
		if seq, err := r.SeqOfRow(ctx, "row-e3"); seq != 3 || err != nil {
			t.Errorf("seq of row-e3 = %d, %v", seq, err)
		}
		if _, err := r.FindMeta(ctx, "nope"); !errs.Is(err, errs.NotFound) {
			t.Errorf("missing meta: %v", err)
		}
		if e, err := r.FindEntry(ctx, "e2"); err != nil || e.ParentID != "e1" || e.RowID != "row-e2" || e.Seq != 2 {
			t.Errorf("entry e2 = %+v, %v", e, err)
		}
		if tx, ok := r.(ports.SessionTx); ok {
			if err := tx.SaveState(ctx, "x", 9, domain.ContextTotals{}, t0); err == nil {
				t.Error("a read snapshot accepted a write")
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	// A failing transaction leaves nothing behind.
	boom := errors.New("boom")
	more, moreMetas := chain("f", 1)
	more[0].Seq, moreMetas[0].Seq = 5, 5
	err = s.WriteSession(ctx, "s", func(tx ports.SessionTx) error {
		if err := tx.InsertEntries(ctx, more, moreMetas); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("write: %v", err)
	}
	// A duplicate seq, entry id or row id is a conflict.
	for name, change := range map[string]func(*domain.Entry){
		"seq": func(e *domain.Entry) { e.Seq = 4 }, "entry id": func(e *domain.Entry) { e.ID = "e1" },
		"row id": func(e *domain.Entry) { e.RowID = "row-e1" },
	} {
		e := more[0]
		change(&e)
		err := s.WriteSession(ctx, "s", func(tx ports.SessionTx) error {
			return tx.InsertEntries(ctx, []domain.Entry{e}, moreMetas)
		})
		if !errs.Is(err, errs.Conflict) {
			t.Errorf("duplicate %s: %v, want conflict", name, err)
		}
	}
	err = s.WriteSession(ctx, "s", func(tx ports.SessionTx) error {
		if err := tx.InsertEntries(ctx, more, moreMetas); err != nil {
			return err
		}
		return tx.SaveState(ctx, "f1", 5, domain.ContextTotals{ActiveChars: 7}, t0)
	})
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := s.FindSession(ctx, "s"); r.TipID != "f1" || r.LastSeq != 5 || r.Totals.ActiveChars != 7 {
		t.Errorf("state after a committed write = %+v", r)
	}
	err = s.WriteSession(ctx, "s", func(tx ports.SessionTx) error {
		return tx.FileApprovals(ctx, nil, domain.Run{}, domain.PauseState{})
	})
	if !errs.Is(err, errs.Internal) {
		t.Errorf("FileApprovals without a ledger: %v, want internal", err)
	}
}

func TestSessionStoreContextProfiles(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var s porttest.SessionStore
	if err := s.SaveContextProfile(ctx, "gone", "r", json.RawMessage(`{}`), t0); !errs.Is(err, errs.Conflict) {
		t.Errorf("profile of a missing session: %v, want conflict", err)
	}
	_ = s.CreateSession(ctx, domain.Session{ID: "s"})
	latest := func() string {
		var got string
		_ = s.ReadSession(ctx, "s", func(r ports.SessionReader) error {
			p, ok, err := r.LatestContextProfile(ctx)
			if ok {
				got = string(p)
			}
			return err
		})
		return got
	}
	if got := latest(); got != "" {
		t.Errorf("before any run: %q", got)
	}
	_ = s.SaveContextProfile(ctx, "s", "r1", json.RawMessage(`1`), t0.Add(time.Second))
	_ = s.SaveContextProfile(ctx, "s", "r2", json.RawMessage(`2`), t0)
	if got := latest(); got != "1" {
		t.Errorf("latest = %q, want the newest by time", got)
	}
	_ = s.SaveContextProfile(ctx, "s", "r2", json.RawMessage(`3`), t0.Add(time.Minute))
	if got := latest(); got != "3" {
		t.Errorf("latest after r2 saved again = %q", got)
	}
}
