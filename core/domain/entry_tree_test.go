package domain

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"testing"
)

func meta(id, parent string, seq int64, kind string) EntryMeta {
	return EntryMeta{ID: id, ParentID: parent, Seq: seq, Kind: kind}
}

func TestActivePathWalksParentsAndSurvivesDamage(t *testing.T) {
	// u1 → a1 → t1, and a regenerate: leaf L (under u1) → a2.
	metas := IndexMetas([]EntryMeta{
		meta("u1", "", 1, KindItem), meta("a1", "u1", 2, KindItem), meta("t1", "a1", 3, KindItem),
		meta("L", "u1", 4, KindLeaf), meta("a2", "L", 5, KindItem),
	})
	path := ActivePath(metas, "a2")
	for id, want := range map[string]bool{"u1": true, "L": true, "a2": true, "a1": false, "t1": false} {
		if path[id] != want {
			t.Errorf("%s on path = %v", id, path[id])
		}
	}
	// A loop or a missing parent ends the walk instead of hanging.
	loop := IndexMetas([]EntryMeta{meta("x", "y", 1, KindItem), meta("y", "x", 2, KindItem)})
	if got := ActivePath(loop, "y"); len(got) != 2 {
		t.Errorf("loop walk = %v", got)
	}
	if got := ActivePath(IndexMetas([]EntryMeta{meta("c", "gone", 3, KindItem)}), "c"); len(got) != 1 {
		t.Errorf("missing parent walk = %v", got)
	}
	if got := ActivePath(metas, ""); len(got) != 0 {
		t.Errorf("empty tip = %v", got)
	}
}

func item(id, itemJSON string) Entry {
	return Entry{ID: id, Kind: KindItem, Item: json.RawMessage(itemJSON)}
}

func TestFoldUpdates(t *testing.T) {
	call := item("c1", `{"type":"function_call","call_id":"call_9","name":"spawn_task"}`)
	out := item("o1", `{"type":"function_call_output","call_id":"call_9","output":"ok"}`)
	msg := item("m1", `{"type":"message","role":"assistant","content":[]}`)
	msg.Display = &Display{Title: "old", Extra: map[string]string{"a": "1"}}
	entries := []Entry{call, out, msg}
	updates := []Entry{
		{Kind: KindUpdate, TargetCallID: "call_9", Display: &Display{Title: "Research task", Extra: map[string]string{"task_status": "working"}}},
		{Kind: KindUpdate, TargetID: "m1", Display: &Display{Summary: "first"}},
		{Kind: KindUpdate, TargetID: "m1", Display: &Display{Summary: "second", Title: ""}}, // last write wins; empty writes nothing
		{Kind: KindUpdate, TargetCallID: "call_9", Display: &Display{Extra: map[string]string{"task_status": "completed", "task_id": "t"}}},
		{Kind: KindUpdate, TargetID: "gone", Display: &Display{Title: "ignored"}}, // missing target
		{Kind: KindUpdate, TargetID: "m1"}, // nothing to apply
	}
	FoldUpdates(entries, metasOf(entries), updates)
	if d := entries[0].Display; d == nil || d.Title != "Research task" || d.Extra["task_status"] != "completed" || d.Extra["task_id"] != "t" {
		t.Fatalf("call card = %+v", d)
	}
	if entries[1].Display != nil {
		t.Fatalf("the output took the call's update: %+v", entries[1].Display)
	}
	if d := entries[2].Display; d.Title != "old" || d.Summary != "second" || d.Extra["a"] != "1" {
		t.Fatalf("message = %+v", d)
	}
	// Folding never writes back into what it was given.
	if msg.Display.Summary != "" {
		t.Fatal("the fold mutated a shared display")
	}
	// An update stored before its target still applies: order of the two
	// lists does not matter, only the updates' own order.
	late := []Entry{item("x", `{"type":"message"}`)}
	FoldUpdates(late, metasOf(late), []Entry{{Kind: KindUpdate, TargetID: "x", Display: &Display{Title: "early"}}})
	if late[0].Display.Title != "early" {
		t.Fatal("an update preceding its target was dropped")
	}
}

func metasOf(entries []Entry) map[string]EntryMeta {
	out := map[string]EntryMeta{}
	for _, e := range entries {
		out[e.ID] = MetaOf(e, "")
	}
	return out
}

func TestPlanForkRewritesEveryID(t *testing.T) {
	src := []Entry{
		{ID: "u1", Kind: KindItem},
		{ID: "a1", ParentID: "u1", Kind: KindItem, Item: json.RawMessage(`{"type":"function_call","call_id":"k"}`)},
		{ID: "up", ParentID: "a1", Kind: KindUpdate, TargetID: "a1", Display: &Display{Title: "t"}},
		{ID: "L", ParentID: "u1", Kind: KindLeaf},
		{ID: "cp", ParentID: "L", Kind: KindCompaction, Checkpoint: &Checkpoint{Summary: "s", ExcludedIDs: []string{"u1", "elsewhere"}}},
	}
	n := 0
	plan := PlanFork(src, "cp", func() string { n++; return fmt.Sprintf("new%d", n) })
	old := map[string]bool{}
	for _, e := range src {
		old[e.ID] = true
	}
	ids := map[string]bool{}
	for _, e := range plan.Entries {
		ids[e.ID] = true
	}
	for _, e := range plan.Entries {
		for _, ref := range append([]string{e.ID, e.ParentID, e.TargetID}, checkpointIDs(e)...) {
			if old[ref] {
				t.Errorf("%s points into the source (%s)", e.ID, ref)
			}
			if ref != "" && !ids[ref] {
				t.Errorf("%s points outside the fork (%s)", e.ID, ref)
			}
		}
	}
	if plan.TipID != plan.Entries[4].ID || plan.Entries[1].ParentID != plan.Entries[0].ID || plan.Entries[2].TargetID != plan.Entries[1].ID {
		t.Fatalf("links not mapped: %+v", plan)
	}
	if got := plan.Entries[4].Checkpoint.ExcludedIDs; len(got) != 1 || got[0] != plan.Entries[0].ID {
		t.Fatalf("checkpoint ids = %v", got)
	}
	if src[4].Checkpoint.ExcludedIDs[0] != "u1" {
		t.Fatal("the source was modified")
	}
	// An update whose target was cut off targets nothing rather than the source.
	cut := PlanFork([]Entry{{ID: "up", Kind: KindUpdate, TargetID: "a9"}}, "up", func() string { return "z" })
	if cut.Entries[0].TargetID != "" {
		t.Fatalf("dangling target = %q", cut.Entries[0].TargetID)
	}
}

func checkpointIDs(e Entry) []string {
	if e.Checkpoint == nil {
		return nil
	}
	return e.Checkpoint.ExcludedIDs
}

func TestSiblingsGroupAtBranchPoints(t *testing.T) {
	metas := []EntryMeta{
		{ID: "u1", Kind: KindItem}, {ID: "a1", BranchParent: "u1", Kind: KindItem},
		{ID: "L", BranchParent: "u1", Kind: KindLeaf}, {ID: "a2", BranchParent: "u1", Kind: KindItem},
		{ID: "t2", BranchParent: "a2", Kind: KindItem},
	}
	g := Siblings(metas)
	if len(g) != 1 || len(g["u1"]) != 2 || g["u1"][0].ID != "a1" || g["u1"][1].ID != "a2" {
		t.Fatalf("groups = %+v", g)
	}
	if BranchParentFor(&EntryMeta{ID: "L", Kind: KindLeaf, BranchParent: "u1"}) != "u1" || BranchParentFor(&EntryMeta{ID: "a", Kind: KindItem}) != "a" || BranchParentFor(nil) != "" {
		t.Fatal("BranchParentFor")
	}
}

// TestTotalsExtendEqualsRecompute checks the running totals against a
// from-scratch recompute over random appends: the two must never drift.
func TestTotalsExtendEqualsRecompute(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	var metas []EntryMeta
	var running ContextTotals
	kinds := []string{KindItem, KindItem, KindItem, KindAnnotation, KindUpdate, KindCompaction}
	for i := 1; i <= 500; i++ {
		m := EntryMeta{ID: fmt.Sprint(i), Seq: int64(i), Kind: kinds[rng.Intn(len(kinds))], Chars: int64(rng.Intn(5000))}
		if len(metas) > 0 {
			m.ParentID = metas[len(metas)-1].ID
		}
		if m.Kind == KindItem && rng.Intn(3) == 0 {
			m.Usage = &Usage{InputTokens: int64(rng.Intn(90000)), OutputTokens: 300, TotalTokens: int64(rng.Intn(90000)) + 300}
		}
		if !ModelVisible(m.Kind) {
			m.Chars = 0
		}
		running.Extend(m)
		metas = append(metas, m)
		path := ActivePath(IndexMetas(metas), m.ID)
		if got := ComputeTotals(metas, path); got != running {
			t.Fatalf("after %d entries: running %+v, recomputed %+v", i, running, got)
		}
	}
	if running.SessionInputTokens == 0 || running.ActiveChars == 0 {
		t.Fatal("the random session did nothing")
	}
}

func TestContextRulers(t *testing.T) {
	var tot ContextTotals
	tot.Extend(EntryMeta{Seq: 1, Kind: KindItem, Chars: 400})
	if tot.CompactionTokens() != 100 || tot.ConversationTokens() != 100 {
		t.Fatalf("no anchor: %+v", tot)
	}
	tot.Extend(EntryMeta{Seq: 2, Kind: KindItem, Chars: 80, Usage: &Usage{InputTokens: 1000, OutputTokens: 20, TotalTokens: 1020}})
	tot.Extend(EntryMeta{Seq: 3, Kind: KindItem, Chars: 41})
	tot.Extend(EntryMeta{Seq: 4, Kind: KindAnnotation, Chars: 9999}) // people-only: not in context
	if tot.CompactionTokens() != 1020+11 || tot.ConversationTokens() != (400+80+41+3)/4 || tot.AnchorUsage.InputTokens != 1000 {
		t.Fatalf("anchored: %+v compaction=%d", tot, tot.CompactionTokens())
	}
	tot.Extend(EntryMeta{Seq: 5, Kind: KindCompaction, Chars: 100})
	if tot.AnchorSeq != 0 || tot.CompactionTokens() != tot.ConversationTokens() {
		t.Fatalf("a fold must drop the anchor: %+v", tot)
	}
	if tot.SessionInputTokens != 1000 {
		t.Fatalf("session input = %d", tot.SessionInputTokens)
	}
}
