package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// traceEpoch is when the trace contract's spans start: a time a store
// keeps to the millisecond.
var traceEpoch = time.Date(2026, 7, 8, 9, 10, 11, 700000, time.UTC)

// Traces is the contract of ports.TraceStore, as the trace recorder and
// the trace API lean on it: spans stored whole (payloads byte for byte,
// however a store keeps them), listed by start then id with or without
// payloads, paged back from the newest, copied into a fork, and pruned by
// start. open returns an empty database; its Traces and NewSession are
// what the contract uses.
func Traces(t *testing.T, open func(t *testing.T) Stores) {
	t.Run("spans are stored whole", func(t *testing.T) { tracesWhole(t, open(t)) })
	t.Run("a batch is stored whole, all or none, alone or in a session's transaction", func(t *testing.T) { tracesBatch(t, open(t)) })
	t.Run("listed by start then id, with or without payloads", func(t *testing.T) { tracesListing(t, open(t)) })
	t.Run("pages walk back from the newest", func(t *testing.T) { tracesPages(t, open(t)) })
	t.Run("a fork copies the runs' spans under new ids", func(t *testing.T) { tracesCopy(t, open(t)) })
	t.Run("pruning deletes what started before the cutoff", func(t *testing.T) { tracesPrune(t, open(t)) })
}

// modelCall is a generation payload repeating the conversation so far —
// turns messages big enough for a store to keep each once — as a
// session's model calls do.
func modelCall(turns int) json.RawMessage {
	var input []string
	for i := 1; i <= turns; i++ {
		input = append(input, fmt.Sprintf(`{"role":"user","content":%q}`, strings.Repeat(fmt.Sprintf("turn %d ", i), 60)))
	}
	return json.RawMessage(`{"input":[` + strings.Join(input, ",") + `],"model":"m","tools":[{"name":"read_file","description":"` +
		strings.Repeat("d", 400) + `"}],"n":3,"k\"ey\u003c\u003e":"v\u2028"}`)
}

// saveSpan stores a span of sessionID started at traceEpoch plus offset.
func saveSpan(t *testing.T, s Stores, sessionID, id, runID string, offset time.Duration, data json.RawMessage) domain.Span {
	t.Helper()
	at := traceEpoch.Add(offset)
	sp := domain.Span{ID: id, SessionID: sessionID, RunID: runID, Kind: domain.SpanGeneration, Name: "call " + id, StartedAt: at,
		EndedAt: at.Add(time.Second), Data: data}
	if err := s.Traces.SaveSpan(context.Background(), sp); err != nil {
		t.Fatal(err)
	}
	return sp
}

func spanID(sp domain.Span) string { return sp.ID }

// spanAsStored is sp as a store reads it back whole: meta through JSON,
// times to the millisecond, the payload's size counted.
func spanAsStored(t *testing.T, sp domain.Span) domain.Span {
	t.Helper()
	meta, err := json.Marshal(sp.Meta)
	if err != nil || sp.Meta == nil {
		meta = []byte("{}")
	}
	sp.Meta = nil
	if err := json.Unmarshal(meta, &sp.Meta); err != nil {
		t.Fatal(err)
	}
	sp.StartedAt, sp.EndedAt, sp.DataBytes, sp.PayloadOmitted = kept(sp.StartedAt), kept(sp.EndedAt), len(sp.Data), false
	return sp
}

// tracesBatch: SaveSpans stores every span of a batch as SaveSpan would
// (sharing payload content among them), or none when one id is taken.
func tracesBatch(t *testing.T, s Stores) {
	ctx := context.Background()
	sess := s.NewSession(t, "s")
	batch := []domain.Span{
		{ID: "b1", SessionID: sess.ID, RunID: "r1", Kind: domain.SpanGeneration, Name: "call", StartedAt: traceEpoch,
			EndedAt: traceEpoch.Add(time.Second), Meta: map[string]any{"model": "m"}, Data: modelCall(3)},
		{ID: "b2", SessionID: sess.ID, RunID: "r1", ParentID: "b3", Kind: domain.SpanGeneration, Name: "call",
			StartedAt: traceEpoch.Add(time.Second), EndedAt: traceEpoch.Add(2 * time.Second), Data: modelCall(4)},
		{ID: "b3", SessionID: sess.ID, RunID: "r1", Kind: domain.SpanAgent, Name: "a", StartedAt: traceEpoch, EndedAt: traceEpoch.Add(3 * time.Second)},
	}
	if err := s.Traces.SaveSpans(ctx, nil); err != nil {
		t.Fatalf("an empty batch: %v", err)
	}
	if err := s.Traces.SaveSpans(ctx, batch); err != nil {
		t.Fatal(err)
	}
	for _, sp := range batch {
		if got, err := s.Traces.FindSpan(ctx, sess.ID, sp.ID); err != nil || !reflect.DeepEqual(got, spanAsStored(t, sp)) {
			t.Fatalf("a batch's span:\n%+v, %v\nwant\n%+v", got, err, spanAsStored(t, sp))
		}
	}
	fresh := domain.Span{ID: "b4", SessionID: sess.ID, RunID: "r2", Kind: domain.SpanAgent, StartedAt: traceEpoch, EndedAt: traceEpoch}
	if err := s.Traces.SaveSpans(ctx, []domain.Span{fresh, batch[0]}); errs.CodeOf(err) != errs.Conflict {
		t.Fatalf("a batch with a taken span id: %v, want conflict", err)
	}
	if _, err := s.Traces.FindSpan(ctx, sess.ID, fresh.ID); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("a refused batch kept a span: %v, want not_found", err)
	}
	// In a session's write transaction: kept with it, or gone with it.
	inTx := func(sp domain.Span, fail error) error {
		return s.Sessions.WriteSession(ctx, sess.ID, func(tx ports.SessionTx) error {
			if err := tx.SaveSpans(ctx, []domain.Span{sp}); err != nil {
				return err
			}
			return fail
		})
	}
	boom := errs.E(errs.Conflict, "rolled back")
	if err := inTx(fresh, boom); err != boom {
		t.Fatalf("a failing transaction: %v", err)
	}
	if _, err := s.Traces.FindSpan(ctx, sess.ID, fresh.ID); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("a rolled back transaction kept its span: %v, want not_found", err)
	}
	withData := fresh
	withData.Data = modelCall(5)
	if err := inTx(withData, nil); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Traces.FindSpan(ctx, sess.ID, fresh.ID); err != nil || !reflect.DeepEqual(got, spanAsStored(t, withData)) {
		t.Fatalf("a span saved in a transaction:\n%+v, %v\nwant\n%+v", got, err, spanAsStored(t, withData))
	}
}

func tracesWhole(t *testing.T, s Stores) {
	ctx := context.Background()
	sess, other := s.NewSession(t, "s"), s.NewSession(t, "other")
	full := domain.Span{ID: "sp1", SessionID: sess.ID, RunID: "r1", ParentID: "sp0", Kind: domain.SpanFunction, Name: "read_file",
		StartedAt: traceEpoch, EndedAt: traceEpoch.Add(1500 * time.Microsecond), Error: "boom",
		Meta: map[string]any{"model": "m", "usage": map[string]any{"input_tokens": 5}, "tags": []any{"a", 1}}, Data: modelCall(3)}
	for _, sp := range []domain.Span{
		full,
		{ID: "sp2", SessionID: sess.ID, Kind: domain.SpanAgent, StartedAt: traceEpoch, EndedAt: traceEpoch},
		{ID: "sp3", SessionID: sess.ID, Kind: domain.SpanFunction, StartedAt: traceEpoch, EndedAt: traceEpoch, Data: json.RawMessage(`["not","an","object"]`)},
	} {
		if err := s.Traces.SaveSpan(ctx, sp); err != nil {
			t.Fatal(err)
		}
		want := spanAsStored(t, sp)
		got, err := s.Traces.FindSpan(ctx, sess.ID, sp.ID)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("stored span:\n%+v, %v\nwant\n%+v", got, err, want)
		}
		if got, err := s.Traces.FindSpanByID(ctx, sp.ID); err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("span by id alone:\n%+v, %v\nwant\n%+v", got, err, want)
		}
	}
	if err := s.Traces.SaveSpan(ctx, full); errs.CodeOf(err) != errs.Conflict {
		t.Fatalf("a taken span id: %v, want conflict", err)
	}
	if _, err := s.Traces.FindSpan(ctx, other.ID, full.ID); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("another session's span: %v, want not_found", err)
	}
	if _, err := s.Traces.FindSpanByID(ctx, "nope"); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("a missing span: %v, want not_found", err)
	}
	// What a caller does to a returned span changes nothing stored.
	got, _ := s.Traces.FindSpan(ctx, sess.ID, full.ID)
	got.Meta["model"], got.Data[0] = "changed", 'X'
	if again, _ := s.Traces.FindSpan(ctx, sess.ID, full.ID); again.Meta["model"] != "m" || string(again.Data) != string(full.Data) {
		t.Fatal("a stored span changed with a returned one")
	}
}

func tracesListing(t *testing.T, s Stores) {
	ctx := context.Background()
	sess, other := s.NewSession(t, "s"), s.NewSession(t, "other")
	// Saved out of order; two start together, one within a millisecond of
	// another (the same start, as stored).
	saveSpan(t, s, sess.ID, "c", "r1", 2*time.Second, modelCall(2))
	saveSpan(t, s, sess.ID, "b", "r1", time.Second, nil)
	saveSpan(t, s, sess.ID, "a", "r1", 2*time.Second+200*time.Microsecond, modelCall(1))
	saveSpan(t, s, sess.ID, "d", "r1", 0, json.RawMessage(`{"tiny":1}`))
	saveSpan(t, s, other.ID, "o", "r9", 0, nil)
	whole, err := s.Traces.ListSpans(ctx, sess.ID, true, ports.SpanPage{})
	if err != nil || !slices.Equal(idsOf(whole, spanID), []string{"d", "b", "a", "c"}) {
		t.Fatalf("spans = %v, %v; want by start, then id", idsOf(whole, spanID), err)
	}
	for _, sp := range whole {
		found, _ := s.Traces.FindSpan(ctx, sess.ID, sp.ID)
		if !reflect.DeepEqual(sp, found) {
			t.Fatalf("listed with payloads:\n%+v\nfound\n%+v", sp, found)
		}
	}
	summary, err := s.Traces.ListSpans(ctx, sess.ID, false, ports.SpanPage{})
	if err != nil || len(summary) != len(whole) {
		t.Fatalf("summary = %v, %v", idsOf(summary, spanID), err)
	}
	for i, sp := range summary {
		want := whole[i]
		want.Data, want.PayloadOmitted = nil, want.DataBytes > 0
		if !reflect.DeepEqual(sp, want) {
			t.Fatalf("summary span:\n%+v\nwant the payload left out\n%+v", sp, want)
		}
	}
	if none, err := s.Traces.ListSpans(ctx, "nobody", false, ports.SpanPage{}); err != nil || len(none) != 0 {
		t.Fatalf("spans of no session = %v, %v", idsOf(none, spanID), err)
	}
}

func tracesPages(t *testing.T, s Stores) {
	ctx := context.Background()
	sess, other := s.NewSession(t, "s"), s.NewSession(t, "other")
	var ids []string
	for i := range 12 {
		id := fmt.Sprintf("g%02d", i)
		saveSpan(t, s, sess.ID, id, "r1", time.Duration(i/2)*time.Minute, modelCall(i+1)) // pairs share a start
		ids = append(ids, id)
	}
	saveSpan(t, s, other.ID, "o1", "r9", 0, nil)
	page := func(withData bool, p ports.SpanPage, want ...string) []domain.Span {
		t.Helper()
		got, err := s.Traces.ListSpans(ctx, sess.ID, withData, p)
		if err != nil || !slices.Equal(idsOf(got, spanID), want) && (len(got) != 0 || len(want) != 0) {
			t.Fatalf("page %+v = %v, %v; want %v", p, idsOf(got, spanID), err, want)
		}
		for _, sp := range got {
			if withData && string(sp.Data) != string(modelCall(slices.Index(ids, sp.ID)+1)) {
				t.Fatalf("page %+v: span %s's payload came back different", p, sp.ID)
			}
			if !withData && (sp.Data != nil || !sp.PayloadOmitted) {
				t.Fatalf("page %+v: span %s kept its payload", p, sp.ID)
			}
		}
		return got
	}
	page(true, ports.SpanPage{Limit: 5}, ids[7:]...)
	page(false, ports.SpanPage{Limit: 5, BeforeID: "g07"}, ids[2:7]...)
	page(true, ports.SpanPage{Limit: 5, BeforeID: "g02"}, "g00", "g01")
	page(true, ports.SpanPage{BeforeID: "g05"}, ids[:5]...)
	page(false, ports.SpanPage{BeforeID: "g00"})
	page(false, ports.SpanPage{Limit: 50}, ids...)
	for _, cursor := range []string{"nope", "o1"} {
		if _, err := s.Traces.ListSpans(ctx, sess.ID, false, ports.SpanPage{Limit: 5, BeforeID: cursor}); errs.CodeOf(err) != errs.Validation {
			t.Fatalf("a cursor not of the session (%s): %v, want validation", cursor, err)
		}
	}
}

func tracesCopy(t *testing.T, s Stores) {
	ctx := context.Background()
	from, to := s.NewSession(t, "from"), s.NewSession(t, "to")
	root := saveSpan(t, s, from.ID, "root", "r1", 0, nil)
	child := domain.Span{ID: "child", SessionID: from.ID, RunID: "r1", ParentID: root.ID, Kind: domain.SpanFunction, StartedAt: traceEpoch.Add(time.Second),
		EndedAt: traceEpoch.Add(time.Second), Meta: map[string]any{"tool": "x"}, Data: modelCall(4)}
	if err := s.Traces.SaveSpan(ctx, child); err != nil {
		t.Fatal(err)
	}
	orphan := domain.Span{ID: "orphan", SessionID: from.ID, RunID: "r2", ParentID: "elsewhere", Kind: domain.SpanFunction,
		StartedAt: traceEpoch.Add(2 * time.Second), EndedAt: traceEpoch.Add(2 * time.Second), Data: modelCall(2)}
	if err := s.Traces.SaveSpan(ctx, orphan); err != nil {
		t.Fatal(err)
	}
	saveSpan(t, s, from.ID, "left", "r3", 3*time.Second, modelCall(1))
	n := 0
	if err := s.Traces.CopySpans(ctx, from.ID, to.ID, []string{"r1", "r2"}, func() string { n++; return fmt.Sprintf("copy-%d", n) }); err != nil {
		t.Fatal(err)
	}
	copied, err := s.Traces.ListSpans(ctx, to.ID, true, ports.SpanPage{})
	if err != nil || len(copied) != 3 {
		t.Fatalf("copied = %v, %v; want the spans of r1 and r2", idsOf(copied, spanID), err)
	}
	newIDs := map[string]string{}
	for i, orig := range []domain.Span{root, child, orphan} {
		newIDs[orig.ID] = copied[i].ID
	}
	for i, orig := range []domain.Span{root, child, orphan} {
		want := spanAsStored(t, orig)
		want.ID, want.SessionID, want.ParentID = newIDs[orig.ID], to.ID, newIDs[orig.ParentID]
		if !strings.HasPrefix(copied[i].ID, "copy-") || !reflect.DeepEqual(copied[i], want) {
			t.Fatalf("the copy of %s:\n%+v\nwant\n%+v", orig.ID, copied[i], want)
		}
	}
	if copied[1].ParentID != copied[0].ID || copied[2].ParentID != "" {
		t.Fatalf("parents = %q, %q; want the root's copy, and none for a parent not copied", copied[1].ParentID, copied[2].ParentID)
	}
	if still, _ := s.Traces.ListSpans(ctx, from.ID, false, ports.SpanPage{}); len(still) != 4 {
		t.Fatalf("the source has %d spans after the copy", len(still))
	}
}

func tracesPrune(t *testing.T, s Stores) {
	ctx := context.Background()
	s1, s2 := s.NewSession(t, "s1"), s.NewSession(t, "s2")
	for i := range 6 {
		saveSpan(t, s, s1.ID, fmt.Sprintf("a%d", i), "r1", time.Duration(i)*time.Minute, modelCall(i+1))
	}
	saveSpan(t, s, s2.ID, "b0", "r2", 0, modelCall(1))
	saveSpan(t, s, s2.ID, "b5", "r2", 5*time.Minute, modelCall(1))
	// The cutoff is kept to the millisecond, as the spans' starts are: a
	// span at the cutoff's millisecond is not before it.
	cutoff := kept(traceEpoch).Add(3*time.Minute + 500*time.Microsecond)
	if n, err := s.Traces.DeleteSpansBefore(ctx, cutoff); err != nil || n != 4 {
		t.Fatalf("pruned %d, %v; want a0-a2 and b0", n, err)
	}
	if got, _ := s.Traces.ListSpans(ctx, s1.ID, true, ports.SpanPage{}); !slices.Equal(idsOf(got, spanID), []string{"a3", "a4", "a5"}) {
		t.Fatalf("s1 keeps %v", idsOf(got, spanID))
	} else {
		for i, sp := range got {
			if string(sp.Data) != string(modelCall(i+4)) {
				t.Fatalf("a surviving span's payload came back different: %s", sp.ID)
			}
		}
	}
	if sp, err := s.Traces.FindSpan(ctx, s2.ID, "b5"); err != nil || string(sp.Data) != string(modelCall(1)) {
		t.Fatalf("a surviving span of another session: %v", err)
	}
	if n, err := s.Traces.DeleteSpansBefore(ctx, cutoff); err != nil || n != 0 {
		t.Fatalf("a second prune = %d, %v", n, err)
	}
	if n, err := s.Traces.DeleteSpansBefore(ctx, traceEpoch.Add(time.Hour)); err != nil || n != 4 {
		t.Fatalf("pruning the rest = %d, %v", n, err)
	}
}
