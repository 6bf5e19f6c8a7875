package domain

// CharsPerToken converts the character ruler to estimated tokens.
const CharsPerToken = 4

// ContextTotals are the running figures behind a session's context report,
// kept on the session row and moved in the same transaction as every append,
// so the report costs one row however long the session is. Provider counts
// (the anchor's usage) and character estimates are separate rulers and are
// never added together except where compaction compares one number (see
// CompactionTokens).
type ContextTotals struct {
	// ActiveChars sums the model-visible characters of the active branch's
	// uncompacted entries: the transcript still in context.
	ActiveChars int64
	// AnchorSeq is the newest usage-bearing entry on the active branch with
	// no fold after it (0: none); AnchorUsage its provider count.
	AnchorSeq   int64
	AnchorUsage Usage
	// CharsAfterAnchor sums what the active branch added after the anchor.
	CharsAfterAnchor int64
	// SessionInputTokens / SessionOutputTokens total every call the session
	// made, on any branch, folded or not: the call happened.
	SessionInputTokens  int64
	SessionOutputTokens int64
}

// Extend accounts for an entry appended at the tip of the active branch.
func (t *ContextTotals) Extend(m EntryMeta) {
	if m.Usage != nil {
		t.SessionInputTokens += m.Usage.InputTokens
		t.SessionOutputTokens += m.Usage.OutputTokens
	}
	if m.Compacted || !ModelVisible(m.Kind) {
		return
	}
	t.ActiveChars += m.Chars
	switch {
	case m.Kind == KindCompaction:
		// A fold changes what the model sees: the last call's count no
		// longer describes it.
		t.AnchorSeq, t.AnchorUsage, t.CharsAfterAnchor = 0, Usage{}, 0
	case m.Usage != nil:
		t.AnchorSeq, t.AnchorUsage, t.CharsAfterAnchor = m.Seq, *m.Usage, 0
	case t.AnchorSeq != 0:
		t.CharsAfterAnchor += m.Chars
	}
}

// ComputeTotals recomputes the totals from scratch: every call counts toward
// the session figures, the active branch (onPath) toward the rest. metas must
// be oldest first.
func ComputeTotals(metas []EntryMeta, onPath map[string]bool) ContextTotals {
	var t ContextTotals
	for _, m := range metas {
		if onPath[m.ID] {
			t.Extend(m)
			continue
		}
		if m.Usage != nil {
			t.SessionInputTokens += m.Usage.InputTokens
			t.SessionOutputTokens += m.Usage.OutputTokens
		}
	}
	return t
}

// ConversationTokens estimates the transcript still in context.
func (t ContextTotals) ConversationTokens() int64 { return ceilDiv(t.ActiveChars, CharsPerToken) }

// CompactionTokens is the number a compaction threshold is compared with:
// the last call's provider total plus an estimate of what came after it, or
// the whole estimate when no call anchors it.
func (t ContextTotals) CompactionTokens() int64 {
	if t.AnchorSeq == 0 {
		return t.ConversationTokens()
	}
	return t.AnchorUsage.TotalTokens + ceilDiv(t.CharsAfterAnchor, CharsPerToken)
}

func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }
