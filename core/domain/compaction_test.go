package domain

import (
	"strings"
	"testing"
)

// metasFrom reads a compact history: u user, a assistant, r reasoning, cN
// call N, oN its output, s a summary.
func metasFrom(spec string) []EntryMeta {
	var out []EntryMeta
	for _, tok := range strings.Fields(spec) {
		m := EntryMeta{ID: tok, Kind: KindItem}
		switch tok[0] {
		case 'u', 'a':
			m.ItemType = "message"
		case 'r':
			m.ItemType = "reasoning"
		case 'c':
			m.ItemType, m.CallID = "function_call", tok[1:]
		case 'o':
			m.ItemType, m.CallID = "function_call_output", tok[1:]
		case 's':
			m.Kind = KindCompaction
		}
		out = append(out, m)
	}
	return out
}

func ids(ms []EntryMeta) string {
	var out []string
	for _, m := range ms {
		out = append(out, m.ID)
	}
	return strings.Join(out, " ")
}

func TestFoldPrefixKeepsTheWindowAndEveryGroupWhole(t *testing.T) {
	cases := []struct {
		history string
		window  int
		want    string
	}{
		{"u1 a1 u2 a2 u3 a3", 2, "u1 a1 u2 a2"},
		{"u1 a1 u2 a2", 4, ""},  // nothing older than the window
		{"u1 a1 u2 a2", 10, ""}, // shorter than the window
		// The kept part may not open on an output: the window grows back
		// to its call.
		{"u1 c1 o1 a1 u2 a2", 4, "u1"},
		// Parallel calls fold together with both outputs, or not at all.
		{"u1 c1 c2 o1 o2 a1 u2 a2", 5, "u1"},
		{"u1 c1 c2 o1 o2 a1 u2 a2", 3, "u1 c1 c2 o1 o2"},
		// Reasoning stays with the call it led to.
		{"u1 a1 r1 c1 o1 a2", 3, "u1 a1"},
		// A summary alone is not summarized again; with more it is.
		{"s0 u1 a1 u2 a2", 4, ""},
		{"s0 u1 a1 u2 a2", 2, "s0 u1 a1"},
	}
	for _, c := range cases {
		if got := ids(FoldPrefix(metasFrom(c.history), c.window)); got != c.want {
			t.Errorf("%q window %d: folded %q, want %q", c.history, c.window, got, c.want)
		}
	}
}

func TestCompactionDefaults(t *testing.T) {
	var c AgentCompaction
	if c.Threshold() != 50_000 || c.KeptWindow() != 10 {
		t.Fatalf("defaults = %d, %d", c.Threshold(), c.KeptWindow())
	}
	c = AgentCompaction{ThresholdTokens: 1000, Window: 3}
	if c.Threshold() != 1000 || c.KeptWindow() != 3 {
		t.Fatalf("set = %d, %d", c.Threshold(), c.KeptWindow())
	}
}
