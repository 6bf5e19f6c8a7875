package domain

import (
	"encoding/json"
	"time"
)

// Entry kinds. The set is open: an unknown kind is stored and shown
// generically, never dropped.
const (
	KindItem       = "item"       // one model-visible item (Responses item shape)
	KindAnnotation = "annotation" // a note for people; the model never sees it
	KindCompaction = "compaction" // a checkpoint folding earlier entries into a summary
	KindUpdate     = "update"     // a change to another entry's display, folded on read
	KindLeaf       = "leaf"       // a branch marker: moves the tip, holds nothing
)

// Entry sources: who produced an entry.
const (
	SourceUser         = "user"
	SourceModel        = "model"
	SourceTool         = "tool"
	SourceHandoff      = "handoff"
	SourceErrorHandler = "error_handler"
	SourceCompaction   = "compaction"
	// SourceTaskNotification is a wake-up's input: background results the
	// model reads as a user message, shown to people as a note, not a bubble.
	SourceTaskNotification = "task_notification"
)

// Entry is one node of a session's tree, stored whole as JSON. The JSON tags
// are the stored and the wire shape; tree and store facts (parent, row id,
// seq, compacted) live in columns beside it, not inside it.
type Entry struct {
	ID       string `json:"id"`
	ParentID string `json:"-"`
	Kind     string `json:"kind"`
	Source   string `json:"source,omitempty"`
	RunID    string `json:"run_id,omitempty"`
	// Item is the model-visible item for KindItem, in the OpenAI Responses
	// item shape (message, function_call, function_call_output, reasoning).
	Item json.RawMessage `json:"item,omitempty"`
	// Text is an annotation's words.
	Text        string          `json:"text,omitempty"`
	Display     *Display        `json:"display,omitempty"`
	Usage       *Usage          `json:"usage,omitempty"`
	Diagnostics json.RawMessage `json:"diagnostics,omitempty"`
	// TargetID / TargetCallID name what an update entry changes: an entry
	// id, or the tool call id of a call's card.
	TargetID     string      `json:"target_id,omitempty"`
	TargetCallID string      `json:"target_call_id,omitempty"`
	Checkpoint   *Checkpoint `json:"checkpoint,omitempty"`
	// Data carries the payload of kinds this build does not know.
	Data      json.RawMessage `json:"data,omitempty"`
	CreatedAt time.Time       `json:"created_at"`

	// Store-managed, outside the JSON body.
	RowID     string `json:"-"`
	Seq       int64  `json:"-"`
	Compacted bool   `json:"-"`
}

// Display is how people see an entry: a card's kind, title, summary,
// renderer hint and free extras. Update entries change it after the fact.
type Display struct {
	Kind     string            `json:"kind,omitempty"`
	Title    string            `json:"title,omitempty"`
	Summary  string            `json:"summary,omitempty"`
	Renderer string            `json:"renderer,omitempty"`
	Extra    map[string]string `json:"extra,omitempty"`
	// IsError marks a tool result that failed, so a reload shows what the
	// live run.tool_result said.
	IsError bool `json:"is_error,omitempty"`
}

// Usage is what one model call cost, as the provider counted it.
type Usage struct {
	InputTokens      int64 `json:"input_tokens"`
	OutputTokens     int64 `json:"output_tokens"`
	CachedTokens     int64 `json:"cached_tokens,omitempty"`
	CacheWriteTokens int64 `json:"cache_write_tokens,omitempty"`
	// ReasoningTokens are the part of OutputTokens spent reasoning, where
	// the provider tells them apart.
	ReasoningTokens int64 `json:"reasoning_tokens,omitempty"`
	TotalTokens     int64 `json:"total_tokens"`
}

// Checkpoint is a compaction: the summary the model sees instead of the
// entries it folded.
type Checkpoint struct {
	Summary     string   `json:"summary"`
	ExcludedIDs []string `json:"excluded_ids"`
	Reset       bool     `json:"reset,omitempty"`
}

// RawEntry is an entry as stored — its lifted columns and its JSON body
// unparsed — for reads that pass bodies through untouched.
type RawEntry struct {
	Meta EntryMeta
	Body json.RawMessage
}

// Decode parses the body and restores the column-held facts.
func (r RawEntry) Decode() (Entry, error) {
	var e Entry
	if err := json.Unmarshal(r.Body, &e); err != nil {
		return e, err
	}
	e.ParentID, e.RowID, e.Seq, e.Compacted = r.Meta.ParentID, r.Meta.RowID, r.Meta.Seq, r.Meta.Compacted
	return e, nil
}

// Content reports whether the entry is shown as itself (not an update or a
// branch marker, which exist only to change others).
func (e Entry) Content() bool { return IsContentKind(e.Kind) }

// IsContentKind reports whether entries of a kind are listed as themselves.
func IsContentKind(kind string) bool { return kind != KindUpdate && kind != KindLeaf }

// ModelVisible reports whether the model sees the entry (items and
// checkpoints); annotations and the rest are for people.
func ModelVisible(kind string) bool { return kind == KindItem || kind == KindCompaction }

// itemFields are the few Responses item fields the server reads.
type itemFields struct {
	Type    string `json:"type"`
	Role    string `json:"role"`
	CallID  string `json:"call_id"`
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
}

func (e Entry) item() itemFields {
	var f itemFields
	if len(e.Item) > 0 {
		_ = json.Unmarshal(e.Item, &f) // a malformed item simply has no fields
	}
	return f
}

// CallID is the tool call id an item carries (function_call and
// function_call_output), or "".
func (e Entry) CallID() string { return e.item().CallID }

// ItemType is the item's type (message, function_call, …), or "".
func (e Entry) ItemType() string { return e.item().Type }

// UserText returns the text of a user message item, and whether it is one.
func (e Entry) UserText() (string, bool) {
	f := e.item()
	if e.Kind != KindItem || f.Type != "message" || f.Role != "user" {
		return "", false
	}
	text := ""
	for _, c := range f.Content {
		text += c.Text
	}
	return text, true
}

// EstimateChars is the entry's share of the model's context, in characters:
// what the character-estimate ruler sums (about four per token).
func EstimateChars(e Entry) int64 {
	switch e.Kind {
	case KindItem:
		return int64(len(e.Item))
	case KindCompaction:
		if e.Checkpoint != nil {
			return int64(len(e.Checkpoint.Summary))
		}
	}
	return 0
}

// EntryMeta is what the store lifts out of an entry into columns, so walks
// and reports read rows, never bodies.
type EntryMeta struct {
	RowID        string
	ID           string
	ParentID     string
	BranchParent string // nearest content ancestor: the parent people see
	Seq          int64
	Kind         string
	Source       string
	RunID        string
	CallID       string
	ItemType     string // the item's type (message, function_call, …)
	Target       string // an update's target id or call id
	Compacted    bool
	Chars        int64
	Usage        *Usage
	CreatedAt    time.Time
}

// MetaOf lifts an entry's query facts; branchParent is computed by the
// appender from the parent's own meta.
func MetaOf(e Entry, branchParent string) EntryMeta {
	target := e.TargetID
	if target == "" {
		target = e.TargetCallID
	}
	f := e.item()
	return EntryMeta{RowID: e.RowID, ID: e.ID, ParentID: e.ParentID, BranchParent: branchParent, Seq: e.Seq, Kind: e.Kind,
		Source: e.Source, RunID: e.RunID, CallID: f.CallID, ItemType: f.Type, Target: target, Compacted: e.Compacted,
		Chars: EstimateChars(e), Usage: e.Usage, CreatedAt: e.CreatedAt}
}

// BranchParentFor is the branch parent of a child appended under parent: the
// parent itself when it is content, else the parent's own branch parent.
func BranchParentFor(parent *EntryMeta) string {
	if parent == nil {
		return ""
	}
	if IsContentKind(parent.Kind) {
		return parent.ID
	}
	return parent.BranchParent
}
