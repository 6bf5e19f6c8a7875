package domain

import (
	"encoding/json"
	"testing"
)

// TestAStoredEntryDecodesWithItsColumns holds RawEntry.Decode: the body
// parsed, and the facts kept in columns (parent, row, seq, compacted)
// restored beside it; a damaged body is an error.
func TestAStoredEntryDecodesWithItsColumns(t *testing.T) {
	raw := RawEntry{Meta: EntryMeta{ParentID: "e0", RowID: "row-1", Seq: 9, Compacted: true},
		Body: json.RawMessage(`{"id":"e1","kind":"item","item":{"type":"message","role":"user","content":"hi"}}`)}
	e, err := raw.Decode()
	if err != nil || e.ID != "e1" || e.ParentID != "e0" || e.RowID != "row-1" || e.Seq != 9 || !e.Compacted {
		t.Fatalf("decoded %+v, %v", e, err)
	}
	if _, err := (RawEntry{Body: json.RawMessage(`{"id":`)}).Decode(); err == nil {
		t.Fatal("a damaged body decoded")
	}
}

// TestAnEntryIsReadForWhatTheServerNeeds holds the entry reads: whether
// it is content, its call id and item type, a user message's text, and
// its share of the model's context.
func TestAnEntryIsReadForWhatTheServerNeeds(t *testing.T) {
	user := Entry{Kind: KindItem, Item: json.RawMessage(`{"type":"message","role":"user","content":[{"type":"input_text","text":"a"},{"type":"input_text","text":"b"}]}`)}
	if text, ok := user.UserText(); !ok || text != "ab" || user.ItemType() != ItemMessage || !user.Content() {
		t.Fatalf("a user message: %q %v %q", text, ok, user.ItemType())
	}
	call := Entry{Kind: KindItem, Item: FunctionCall("", "call_7", "read_file", "{}")}
	if call.CallID() != "call_7" || call.ItemType() != ItemFunctionCall {
		t.Fatalf("a call: %q %q", call.CallID(), call.ItemType())
	}
	for _, e := range []Entry{
		{Kind: KindItem, Item: AssistantMessage("", "x")},
		{Kind: KindAnnotation, Item: user.Item},
		{Kind: KindItem, Item: json.RawMessage(`not json`)},
	} {
		if _, ok := e.UserText(); ok {
			t.Errorf("%s %s read as a user message", e.Kind, e.Item)
		}
	}
	if (Entry{Kind: KindUpdate}).Content() || (Entry{Kind: KindLeaf}).Content() || !(Entry{Kind: "future_kind"}).Content() {
		t.Fatal("Content: updates and leaves only are not content")
	}
	for _, tc := range []struct {
		e    Entry
		want int64
	}{
		{user, int64(len(user.Item))},
		{Entry{Kind: KindCompaction, Checkpoint: &Checkpoint{Summary: "twelve chars"}}, 12},
		{Entry{Kind: KindCompaction}, 0},
		{Entry{Kind: KindAnnotation, Text: "people only"}, 0},
	} {
		if got := EstimateChars(tc.e); got != tc.want {
			t.Errorf("%s: %d characters, want %d", tc.e.Kind, got, tc.want)
		}
	}
	if m := MetaOf(call, "bp"); m.CallID != "call_7" || m.ItemType != ItemFunctionCall || m.BranchParent != "bp" || m.Chars != int64(len(call.Item)) {
		t.Fatalf("meta %+v", m)
	}
}
