package domain

// Compaction defaults, for an agent that leaves its knobs at zero.
const (
	DefaultCompactionThreshold = 50_000 // tokens
	DefaultCompactionWindow    = 10     // entries kept intact
)

// Threshold is the token count past which a pass folds (0: the default).
func (c AgentCompaction) Threshold() int64 {
	if c.ThresholdTokens > 0 {
		return int64(c.ThresholdTokens)
	}
	return DefaultCompactionThreshold
}

// KeptWindow is how many recent entries a pass keeps intact (0: the default).
func (c AgentCompaction) KeptWindow() int {
	if c.Window > 0 {
		return c.Window
	}
	return DefaultCompactionWindow
}

// FoldPrefix picks what a compaction pass folds: of active (the active
// branch's uncompacted, model-visible entries, oldest first) everything
// but the newest window entries — moved earlier until no tool call is
// parted from its output and no reasoning from the call it led to. It is
// empty when there is nothing worth folding: too short a history, or a
// prefix that is one summary alone (a summary of a summary loses detail
// and saves nothing).
func FoldPrefix(active []EntryMeta, window int) []EntryMeta {
	s := len(active) - window
	for ; s > 0 && splitsAGroup(active, s); s-- {
	}
	if s <= 0 || (s == 1 && active[0].Kind == KindCompaction) {
		return nil
	}
	return active[:s]
}

// splitsAGroup reports whether cutting before active[s] parts an atomic
// group: a kept output whose call would be folded, or a call whose
// reasoning would be.
func splitsAGroup(active []EntryMeta, s int) bool {
	if active[s].ItemType == "function_call" && active[s-1].ItemType == "reasoning" {
		return true
	}
	folded := map[string]bool{}
	for _, m := range active[:s] {
		if m.ItemType == "function_call" {
			folded[m.CallID] = true
		}
	}
	for _, m := range active[s:] {
		if m.ItemType == "function_call_output" && folded[m.CallID] {
			return true
		}
	}
	return false
}
