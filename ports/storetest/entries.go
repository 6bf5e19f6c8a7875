package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// The entry side of the session contract (see Sessions).

// chain is a line of user messages e<from>…e<to>, each the parent of the
// next (e<from> continues from e<from-1>), with row ids rows-<seq>.
func chain(rows string, from, to int64) []domain.Entry {
	var out []domain.Entry
	for seq := from; seq <= to; seq++ {
		e := domain.Entry{ID: fmt.Sprintf("e%d", seq), RowID: fmt.Sprintf("%s-%d", rows, seq), Kind: domain.KindItem, Source: domain.SourceUser,
			Seq: seq, CreatedAt: sessionEpoch.Add(time.Duration(seq) * time.Second), Item: domain.TextMessage("user", "input_text", rows)}
		if seq > 1 {
			e.ParentID = fmt.Sprintf("e%d", seq-1)
		}
		out = append(out, e)
	}
	return out
}

// metasOf lifts entries' metas as the appender does: each branch parent
// from its parent's meta, found in the batch or through find.
func metasOf(entries []domain.Entry, find func(id string) (domain.EntryMeta, error)) ([]domain.EntryMeta, error) {
	metas := make([]domain.EntryMeta, len(entries))
	done := make([]bool, len(entries))
	var lift func(i int) error
	lift = func(i int) error {
		if done[i] {
			return nil
		}
		var parent *domain.EntryMeta
		if id := entries[i].ParentID; id != "" {
			if j := slices.IndexFunc(entries, func(e domain.Entry) bool { return e.ID == id }); j >= 0 {
				if err := lift(j); err != nil {
					return err
				}
				parent = &metas[j]
			} else {
				m, err := find(id)
				if err != nil {
					return err
				}
				parent = &m
			}
		}
		metas[i], done[i] = domain.MetaOf(entries[i], domain.BranchParentFor(parent)), true
		return nil
	}
	for i := range entries {
		if err := lift(i); err != nil {
			return nil, err
		}
	}
	return metas, nil
}

// appendEntries files entries in one session write, moving the tip to
// the last.
func appendEntries(t *testing.T, s Stores, sessionID string, entries ...domain.Entry) {
	t.Helper()
	ctx := context.Background()
	err := s.Sessions.WriteSession(ctx, sessionID, func(tx ports.SessionTx) error {
		metas, err := metasOf(entries, func(id string) (domain.EntryMeta, error) { return tx.FindMeta(ctx, id) })
		if err != nil {
			return err
		}
		if err := tx.InsertEntries(ctx, entries, metas); err != nil {
			return err
		}
		last := entries[len(entries)-1]
		return tx.SaveState(ctx, last.ID, last.Seq, domain.ContextTotals{}, last.CreatedAt)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// read runs fn over a read of the session.
func read(t *testing.T, s Stores, sessionID string, fn func(r ports.SessionReader) error) {
	t.Helper()
	if err := s.Sessions.ReadSession(context.Background(), sessionID, fn); err != nil {
		t.Fatal(err)
	}
}

// entryIDs lists a session's entries, oldest first.
func entryIDs(t *testing.T, s Stores, sessionID string) []string {
	t.Helper()
	var out []string
	read(t, s, sessionID, func(r ports.SessionReader) error {
		all, err := r.Entries(context.Background(), 0)
		for _, e := range all {
			out = append(out, e.ID)
		}
		return err
	})
	return out
}

// asStored is e as a store reads it back: its body through JSON, the
// store-managed fields from their columns.
func asStored(t *testing.T, e domain.Entry) domain.Entry {
	t.Helper()
	body, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	var out domain.Entry
	if err := json.Unmarshal(body, &out); err != nil {
		t.Fatal(err)
	}
	out.ParentID, out.RowID, out.Seq, out.Compacted = e.ParentID, e.RowID, e.Seq, e.Compacted
	return out
}

func sameEntries(t *testing.T, what string, got, want []domain.Entry) {
	t.Helper()
	for i := range want {
		want[i] = asStored(t, want[i])
	}
	if !reflect.DeepEqual(got, want) && (len(got) != 0 || len(want) != 0) {
		t.Fatalf("%s:\n%+v\nwant\n%+v", what, got, want)
	}
}

func sameMetas(t *testing.T, what string, got, want []domain.EntryMeta) {
	t.Helper()
	for i := range want {
		want[i].CreatedAt = kept(want[i].CreatedAt)
	}
	if !reflect.DeepEqual(got, want) && (len(got) != 0 || len(want) != 0) {
		t.Fatalf("%s:\n%+v\nwant\n%+v", what, got, want)
	}
}

// entryTree is a session's tree: u1 → a1 (with an update on it) and a
// branch marker L under u1 → a2 → a call fc (with an update on its call
// id) → a checkpoint cp, seqs 1…8 in that order.
func entryTree() []domain.Entry {
	return []domain.Entry{
		{ID: "u1", Kind: domain.KindItem, Source: domain.SourceUser, Item: domain.TextMessage("user", "input_text", "hi")},
		{ID: "a1", ParentID: "u1", Kind: domain.KindItem, Source: domain.SourceModel, RunID: "r1", Item: domain.AssistantMessage("", "hello"),
			Usage: &domain.Usage{InputTokens: 5, OutputTokens: 2, CachedTokens: 1, CacheWriteTokens: 1, TotalTokens: 7}},
		{ID: "up", ParentID: "a1", Kind: domain.KindUpdate, TargetID: "a1", Display: &domain.Display{Title: "t", Extra: map[string]string{"k": "v"}}},
		{ID: "L", ParentID: "u1", Kind: domain.KindLeaf},
		{ID: "a2", ParentID: "L", Kind: domain.KindItem, Source: domain.SourceModel, RunID: "r2", Item: domain.AssistantMessage("", "again")},
		{ID: "fc", ParentID: "a2", Kind: domain.KindItem, Source: domain.SourceModel, RunID: "r2", Item: domain.FunctionCall("", "call-1", "t", "{}")},
		{ID: "uc", ParentID: "fc", Kind: domain.KindUpdate, TargetCallID: "call-1", Display: &domain.Display{IsError: true}},
		{ID: "cp", ParentID: "uc", Kind: domain.KindCompaction, Checkpoint: &domain.Checkpoint{Summary: "so far", ExcludedIDs: []string{"u1"}}},
	}
}

// storeTree files entryTree in sessionID, in reverse seq order (a store
// reads in seq order, whatever the order of the writes), and returns the
// entries and their metas, oldest first.
func storeTree(t *testing.T, s Stores, sessionID string) ([]domain.Entry, []domain.EntryMeta) {
	t.Helper()
	tree := entryTree()
	for i := range tree {
		seq := int64(i + 1)
		tree[i].Seq, tree[i].RowID = seq, fmt.Sprintf("%s-%d", sessionID, seq)
		tree[i].CreatedAt = sessionEpoch.Add(time.Duration(seq)*time.Second + 123456)
	}
	metas, err := metasOf(tree, nil)
	if err != nil {
		t.Fatal(err)
	}
	reversed, reversedMetas := slices.Clone(tree), slices.Clone(metas)
	slices.Reverse(reversed)
	slices.Reverse(reversedMetas)
	ctx := context.Background()
	if err := s.Sessions.WriteSession(ctx, sessionID, func(tx ports.SessionTx) error {
		return tx.InsertEntries(ctx, reversed, reversedMetas)
	}); err != nil {
		t.Fatal(err)
	}
	return tree, metas
}

// pick returns the entries (or metas) of list at those seqs.
func pick[T any](list []T, seqs ...int) []T {
	out := []T{}
	for _, seq := range seqs {
		out = append(out, list[seq-1])
	}
	return out
}

func sessionsEntries(t *testing.T, s Stores) {
	ctx := context.Background()
	sess := s.NewSession(t, "s")
	tree, metas := storeTree(t, s, sess.ID)
	other := s.NewSession(t, "other")
	appendEntries(t, s, other.ID, chain("other", 1, 2)...)
	read(t, s, sess.ID, func(r ports.SessionReader) error {
		if got, err := r.Session(ctx); err != nil || !reflect.DeepEqual(got, findSession(t, s, sess.ID)) {
			t.Fatalf("the reader's session = %+v, %v", got, err)
		}
		all, err := r.EntryMetas(ctx, 0)
		if err != nil {
			return err
		}
		sameMetas(t, "every meta", all, slices.Clone(metas))
		from5, _ := r.EntryMetas(ctx, 5)
		sameMetas(t, "metas from seq 5", from5, pick(slices.Clone(metas), 5, 6, 7, 8))

		content, _ := r.ContentEntries(ctx, 0, 0)
		var decoded []domain.Entry
		var contentMetas []domain.EntryMeta
		for _, raw := range content {
			e, err := raw.Decode()
			if err != nil {
				return err
			}
			decoded, contentMetas = append(decoded, e), append(contentMetas, raw.Meta)
		}
		sameEntries(t, "content entries (no updates or leaves)", decoded, pick(slices.Clone(tree), 1, 2, 5, 6, 8))
		sameMetas(t, "content metas", contentMetas, pick(slices.Clone(metas), 1, 2, 5, 6, 8))
		page := func(before int64, limit int, want ...string) {
			t.Helper()
			got, err := r.ContentEntries(ctx, before, limit)
			ids := []string{}
			for _, raw := range got {
				ids = append(ids, raw.Meta.ID)
			}
			if err != nil || !slices.Equal(ids, want) {
				t.Fatalf("content before %d, limit %d = %v, %v; want %v", before, limit, ids, err, want)
			}
		}
		page(0, 2, "fc", "cp")
		page(6, 2, "a1", "a2")
		page(2, 0, "u1")

		every, _ := r.Entries(ctx, 0)
		sameEntries(t, "every entry", every, slices.Clone(tree))
		upTo3, _ := r.Entries(ctx, 3)
		sameEntries(t, "entries to seq 3", upTo3, pick(slices.Clone(tree), 1, 2, 3))
		updates, _ := r.UpdatesTargeting(ctx, []string{"call-1", "a1", "zz"})
		sameEntries(t, "the updates of an entry id and a call id", updates, pick(slices.Clone(tree), 3, 7))
		if none, err := r.UpdatesTargeting(ctx, nil); err != nil || len(none) != 0 {
			t.Fatalf("the updates of nothing = %+v, %v", none, err)
		}
		byID, _ := r.EntriesByID(ctx, []string{"cp", "u1", "zz", "u1"})
		sameEntries(t, "entries by id", byID, pick(slices.Clone(tree), 1, 8))
		if e, err := r.FindEntry(ctx, "a2"); err != nil || !reflect.DeepEqual(e, asStored(t, tree[4])) {
			t.Fatalf("entry a2 = %+v, %v", e, err)
		}
		if m, err := r.FindMeta(ctx, "L"); err != nil {
			t.Fatal(err)
		} else {
			sameMetas(t, "the leaf's meta", []domain.EntryMeta{m}, pick(slices.Clone(metas), 4))
		}
		for _, id := range []string{"nope", "e1"} { // e1 is the other session's
			if _, err := r.FindEntry(ctx, id); errs.CodeOf(err) != errs.NotFound {
				t.Fatalf("entry %s: %v, want not_found", id, err)
			}
			if _, err := r.FindMeta(ctx, id); errs.CodeOf(err) != errs.NotFound {
				t.Fatalf("meta %s: %v, want not_found", id, err)
			}
		}
		siblings, _ := r.MetasByBranchParent(ctx, []string{"u1"})
		sameMetas(t, "the content under u1 (not its leaf)", siblings, pick(slices.Clone(metas), 2, 5))
		underCall, _ := r.MetasByBranchParent(ctx, []string{"fc", "zz"})
		sameMetas(t, "the content under fc (not its update)", underCall, pick(slices.Clone(metas), 8))
		if none, err := r.MetasByBranchParent(ctx, nil); err != nil || len(none) != 0 {
			t.Fatalf("the siblings under nothing = %+v, %v", none, err)
		}
		for from, want := range map[string]string{"u1": "cp", "a1": "a1", "L": "cp", "fc": "cp", "cp": "cp", "nope": "nope"} {
			if tip, err := r.SubtreeTip(ctx, from); err != nil || tip != want {
				t.Fatalf("the subtree tip of %s = %s, %v; want %s", from, tip, err, want)
			}
		}
		if seq, err := r.SeqOfRow(ctx, "s-4"); err != nil || seq != 4 {
			t.Fatalf("seq of row s-4 = %d, %v", seq, err)
		}
		if _, err := r.SeqOfRow(ctx, "other-1"); errs.CodeOf(err) != errs.NotFound {
			t.Fatalf("another session's row: %v, want not_found", err)
		}
		return nil
	})
}

func sessionsUnique(t *testing.T, s Stores) {
	ctx := context.Background()
	sess, other := s.NewSession(t, "s"), s.NewSession(t, "other")
	appendEntries(t, s, sess.ID, chain("s", 1, 2)...)
	// Another session's entry ids and seqs are its own.
	appendEntries(t, s, other.ID, chain("other", 1, 2)...)
	insert := func(entries ...domain.Entry) error {
		return s.Sessions.WriteSession(ctx, sess.ID, func(tx ports.SessionTx) error {
			metas, err := metasOf(entries, func(id string) (domain.EntryMeta, error) { return tx.FindMeta(ctx, id) })
			if err != nil {
				return err
			}
			return tx.InsertEntries(ctx, entries, metas)
		})
	}
	next := chain("s", 3, 3)[0]
	for name, change := range map[string]func(e *domain.Entry){
		"a seq":                   func(e *domain.Entry) { e.Seq = 2 },
		"an entry id":             func(e *domain.Entry) { e.ID = "e1" },
		"a row id":                func(e *domain.Entry) { e.RowID = "s-1" },
		"another session's row":   func(e *domain.Entry) { e.RowID = "other-1" },
		"a seq in the same write": nil,
	} {
		e := next
		batch := []domain.Entry{e}
		if change != nil {
			change(&e)
			batch = []domain.Entry{e}
		} else {
			twin := next
			twin.ID, twin.RowID = "twin", "s-twin"
			batch = append(batch, twin)
		}
		if err := insert(batch...); errs.CodeOf(err) != errs.Conflict {
			t.Fatalf("%s taken: %v, want conflict", name, err)
		}
		if got := entryIDs(t, s, sess.ID); !slices.Equal(got, []string{"e1", "e2"}) {
			t.Fatalf("after %s was refused the entries are %v", name, got)
		}
	}
	if err := insert(next); err != nil {
		t.Fatal(err)
	}
	if got := entryIDs(t, s, other.ID); !slices.Equal(got, []string{"e1", "e2"}) {
		t.Fatalf("the other session's entries = %v", got)
	}
}
