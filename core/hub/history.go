package hub

import (
	"bytes"
	"slices"
	"strconv"

	"github.com/agents-server/agents-server/core/domain"
)

// history keeps every event that left a run's ring, so a watcher that comes
// late (or resumes from an old cursor) still gets the whole run. Its cost is
// held near the run's own content: a stretch of consecutive fragments of one
// stream (text, reasoning, one tool's progress) is kept as one merged text
// with the sequence at which each fragment ended, and replayed as one event
// standing for the fragments the watcher lacks — first_seq in its payload is
// the first of them, seq the last — so no cursor ever lands inside it.
type history struct {
	entries []histEntry
}

// histEntry is one verbatim event, or (merged non-nil) a merged stretch.
type histEntry struct {
	ev     domain.Event
	merged *mergedDeltas
}

// mergedDeltas is a stretch of fragments of one stream. The text is kept
// as the JSON string contents the fragments carried (escaped): escaped
// fragments joined are the escaped join, so merging never decodes a
// payload — the hub's publish path stays as cheap as a copy.
type mergedDeltas struct {
	typ   string
	proto []byte // the first fragment's payload, its delta's contents at [at, end)
	at    int
	end   int
	key   []byte // the stream within the type: a tool progress's call_id
	text  []byte
	// first is the first fragment's seq; the fragments are consecutive
	// events (anything between would have ended the stretch), so the i-th
	// has seq first+i and ended at ends[i] in text.
	first int64
	ends  []int32
}

// mergeable reports whether an event is a fragment a stretch can absorb.
func mergeable(typ string) bool {
	return typ == domain.EventStep || typ == domain.EventReasoning || typ == domain.EventToolProgress
}

// add appends an event that left the ring.
func (h *history) add(ev domain.Event) {
	at, end, ok := stringField(ev.Payload, "delta")
	if !mergeable(ev.Type) || !ok {
		h.entries = append(h.entries, histEntry{ev: ev})
		return
	}
	var key []byte
	if ev.Type == domain.EventToolProgress {
		if ks, ke, ok := stringField(ev.Payload, "call_id"); ok {
			key = ev.Payload[ks:ke]
		}
	}
	delta := ev.Payload[at:end]
	if n := len(h.entries); n > 0 {
		if m := h.entries[n-1].merged; m != nil && m.typ == ev.Type && bytes.Equal(m.key, key) && m.last()+1 == ev.Seq {
			m.text = append(m.text, delta...)
			m.ends = append(m.ends, int32(len(m.text)))
			return
		}
	}
	m := &mergedDeltas{typ: ev.Type, proto: ev.Payload, at: at, end: end, key: key,
		text: slices.Clone(delta), first: ev.Seq, ends: []int32{int32(len(delta))}}
	h.entries = append(h.entries, histEntry{merged: m})
}

// last is the seq of the stretch's last fragment.
func (m *mergedDeltas) last() int64 { return m.first + int64(len(m.ends)) - 1 }

// stringField finds the contents of a top-level "name":"…" string in a
// JSON object the hub's publishers encoded (no spaces): [at, end) spans
// them still escaped. An unescaped `"name":"` cannot occur inside a string
// value, so the first match is the field.
func stringField(obj []byte, name string) (at, end int, ok bool) {
	i := bytes.Index(obj, []byte(`"`+name+`":"`))
	if i < 0 {
		return 0, 0, false
	}
	at = i + len(name) + 4
	for j := at; j < len(obj); j++ {
		switch obj[j] {
		case '\\':
			j++ // the escaped character
		case '"':
			return at, j, true
		}
	}
	return 0, 0, false
}

// firstSeq is the oldest seq held, or next when nothing is.
func (h *history) firstSeq(next int64) int64 {
	if len(h.entries) == 0 {
		return next
	}
	if m := h.entries[0].merged; m != nil {
		return m.first
	}
	return h.entries[0].ev.Seq
}

// after renders what the history holds past cursor, oldest first; a stretch
// the cursor falls inside yields only the fragments after it.
func (h *history) after(cursor int64) []domain.Event {
	var out []domain.Event
	for _, e := range h.entries {
		if e.merged == nil {
			if e.ev.Seq > cursor {
				out = append(out, e.ev)
			}
			continue
		}
		if ev, ok := e.merged.after(cursor); ok {
			out = append(out, ev)
		}
	}
	return out
}

// after is the stretch's event for a watcher holding cursor: the text of
// the fragments after it; ok is false when it holds them all.
func (m *mergedDeltas) after(cursor int64) (domain.Event, bool) {
	last := m.last()
	if cursor >= last {
		return domain.Event{}, false
	}
	i := max(cursor+1-m.first, 0) // the first fragment the watcher lacks
	start := 0
	if i > 0 {
		start = int(m.ends[i-1])
	}
	text := m.text[start:]
	p := make([]byte, 0, len(m.proto)+len(text)+24)
	p = append(p, m.proto[:m.at]...)
	p = append(p, text...)
	rest := m.proto[m.end:]
	if m.first+i != last {
		// Before the closing brace: the first seq this event stands for.
		p = append(p, rest[:len(rest)-1]...)
		p = append(p, `,"first_seq":`...)
		p = strconv.AppendInt(p, m.first+i, 10)
		p = append(p, '}')
	} else {
		p = append(p, rest...)
	}
	return domain.Event{Type: m.typ, Seq: last, Payload: p}, true
}
