package sqlstore

import (
	"context"
	"slices"
	"testing"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/ports"
)

// The listing's on_path is domain.ActivePath over what one ReadSession
// returns: the session's tip and the entries' parent links. These tests
// drive the tree the way the sessions service does (appends chain from the
// tip; a branch appends a leaf under its target and moves the tip there)
// and check what the store gives back puts exactly the right entries on
// the path.

// appendAtTip appends items under the session's tip, in one transaction.
func appendAtTip(t *testing.T, db *DB, sessionID string, ids ...string) {
	t.Helper()
	ctx := context.Background()
	err := db.WriteSession(ctx, sessionID, func(tx ports.SessionTx) error {
		sess, err := tx.Session(ctx)
		if err != nil {
			return err
		}
		var prev *domain.EntryMeta
		if sess.TipID != "" {
			m, err := tx.FindMeta(ctx, sess.TipID)
			if err != nil {
				return err
			}
			prev = &m
		}
		var entries []domain.Entry
		var metas []domain.EntryMeta
		for i, id := range ids {
			e := domain.Entry{ID: id, RowID: "row-" + id, Kind: domain.KindItem, Seq: sess.LastSeq + int64(i) + 1, CreatedAt: when,
				Item: []byte(`{"type":"message","role":"user","content":"` + id + `"}`)}
			if prev != nil {
				e.ParentID = prev.ID
			}
			m := domain.MetaOf(e, domain.BranchParentFor(prev))
			entries, metas = append(entries, e), append(metas, m)
			prev = &metas[len(metas)-1]
		}
		last := entries[len(entries)-1]
		if err := tx.InsertEntries(ctx, entries, metas); err != nil {
			return err
		}
		return tx.SaveState(ctx, last.ID, last.Seq, sess.Totals, when)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// branchTo moves the active branch to entryID with a leaf under it.
func branchTo(t *testing.T, db *DB, sessionID, leafID, entryID string) {
	t.Helper()
	ctx := context.Background()
	err := db.WriteSession(ctx, sessionID, func(tx ports.SessionTx) error {
		sess, err := tx.Session(ctx)
		if err != nil {
			return err
		}
		target, err := tx.FindMeta(ctx, entryID)
		if err != nil {
			return err
		}
		leaf := domain.Entry{ID: leafID, RowID: "row-" + leafID, ParentID: target.ID, Kind: domain.KindLeaf, Seq: sess.LastSeq + 1, CreatedAt: when}
		if err := tx.InsertEntries(ctx, []domain.Entry{leaf}, []domain.EntryMeta{domain.MetaOf(leaf, domain.BranchParentFor(&target))}); err != nil {
			return err
		}
		return tx.SaveState(ctx, leaf.ID, leaf.Seq, sess.Totals, when)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// switchTo is what switching to an attempt means: branching to the newest
// entry of its subtree.
func switchTo(t *testing.T, db *DB, sessionID, leafID, head string) {
	t.Helper()
	ctx := context.Background()
	var tip string
	err := db.ReadSession(ctx, sessionID, func(r ports.SessionReader) error {
		var err error
		tip, err = r.SubtreeTip(ctx, head)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	branchTo(t, db, sessionID, leafID, tip)
}

// contentOnPath reads the session once and returns its content entries on
// the active path, sorted.
func contentOnPath(t *testing.T, r ports.SessionReader) []string {
	t.Helper()
	ctx := context.Background()
	sess, err := r.Session(ctx)
	if err != nil {
		t.Fatal(err)
	}
	metas, err := r.EntryMetas(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	path := domain.ActivePath(domain.IndexMetas(metas), sess.TipID)
	var on []string
	for _, m := range metas {
		if domain.IsContentKind(m.Kind) && path[m.ID] {
			on = append(on, m.ID)
		}
	}
	slices.Sort(on)
	return on
}

func wantOnPath(t *testing.T, db *DB, sessionID, step string, want ...string) {
	t.Helper()
	var got []string
	err := db.ReadSession(context.Background(), sessionID, func(r ports.SessionReader) error {
		got = contentOnPath(t, r)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("%s: on path %v, want %v", step, got, want)
	}
}

// TestOnPathFollowsBranchesAndSwitches regenerates an answer, continues,
// switches between the attempts and branches from an older message: after
// every step exactly the entries of the active branch are on the path, the
// abandoned ones stay stored off it, and a reopened database says the same.
func TestOnPathFollowsBranchesAndSwitches(t *testing.T) {
	db := openTemp(t)
	ctx := context.Background()
	s := newSession(t, db, "tree")

	appendAtTip(t, db, s.ID, "u1", "a1")
	wantOnPath(t, db, s.ID, "first answer", "u1", "a1")

	branchTo(t, db, s.ID, "L1", "u1") // regenerate a1
	appendAtTip(t, db, s.ID, "a2")
	wantOnPath(t, db, s.ID, "regenerated", "u1", "a2")

	appendAtTip(t, db, s.ID, "u2", "a3")
	wantOnPath(t, db, s.ID, "continued", "u1", "a2", "u2", "a3")

	err := db.ReadSession(ctx, s.ID, func(r ports.SessionReader) error {
		sibs, err := r.MetasByBranchParent(ctx, []string{"u1"})
		if err != nil || len(sibs) != 2 || sibs[0].ID != "a1" || sibs[1].ID != "a2" {
			t.Fatalf("the attempts at u1 = %+v %v", sibs, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	switchTo(t, db, s.ID, "L2", "a1")
	wantOnPath(t, db, s.ID, "switched to the first attempt", "u1", "a1")

	switchTo(t, db, s.ID, "L3", "a2") // back: to the newest entry under a2
	wantOnPath(t, db, s.ID, "switched back", "u1", "a2", "u2", "a3")

	branchTo(t, db, s.ID, "L4", "u1") // edit and resend the first message's answer
	appendAtTip(t, db, s.ID, "a4", "u3")
	wantOnPath(t, db, s.ID, "branched from u1", "u1", "a4", "u3")

	// Nothing was deleted on the way: every attempt is still stored.
	var all []string
	db.ReadSession(ctx, s.ID, func(r ports.SessionReader) error {
		metas, _ := r.EntryMetas(ctx, 0)
		for _, m := range metas {
			if domain.IsContentKind(m.Kind) {
				all = append(all, m.ID)
			}
		}
		return nil
	})
	if want := []string{"u1", "a1", "a2", "u2", "a3", "a4", "u3"}; !slices.Equal(all, want) {
		t.Fatalf("stored content %v, want %v", all, want)
	}

	reopened := reopen(t, db)
	wantOnPath(t, reopened, s.ID, "after a reopen", "u1", "a4", "u3")
}
