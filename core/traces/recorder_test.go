package traces_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/settings"
	"github.com/agents-server/agents-server/core/traces"
	"github.com/agents-server/agents-server/ports"
	"github.com/agents-server/agents-server/ports/porttest"
)

// heard is what a recorder told its observer and its live watchers.
type heard struct {
	saved     []string
	published []string
}

func (h *heard) RunEnded(domain.Run)          {}
func (h *heard) SpanSaved(s domain.Span)      { h.saved = append(h.saved, s.ID) }
func (h *heard) publish(p traces.SpanPayload) { h.published = append(h.published, p.SpanID) }

// spanTx is a session transaction that takes spans (or refuses them).
type spanTx struct {
	ports.SessionTx
	store  *porttest.TraceStore
	refuse bool
}

func (tx spanTx) SaveSpans(ctx context.Context, spans []domain.Span) error {
	if tx.refuse {
		return errors.New("the transaction failed")
	}
	return tx.store.SaveSpans(ctx, spans)
}

func newRecorder(t *testing.T, w *world, h *heard) *traces.Recorder {
	t.Helper()
	return traces.NewRecorder(context.Background(), w.settings, traces.RecorderDeps{Store: w.store, Observer: h, Publish: h.publish,
		IDs: &porttest.IDs{}, Clock: w.clock, Log: slog.New(slog.DiscardHandler)}, w.session.ID, "run-1")
}

func TestARecorderHoldsSpansUntilAWriteCarriesThem(t *testing.T) {
	w := setup(t)
	h := &heard{}
	r := newRecorder(t, w, h)
	sp := r.Span(domain.SpanGeneration, "m", "")
	sp.Meta("model", "m").Set("input", "hello", true).Finish(nil)
	if got := len(w.store.Spans()); got != 0 || len(h.saved)+len(h.published) != 0 {
		t.Fatalf("a finished span was stored or told before a write carried it: %d stored, %+v", got, h)
	}
	b := r.Take()
	if b.Len() != 1 {
		t.Fatalf("the write carries %d spans, want 1", b.Len())
	}
	wrote := 0
	err := b.In(func(also func(tx ports.SessionTx) error) error {
		wrote++
		return also(spanTx{store: w.store})
	}, nil)
	if err != nil || wrote != 1 {
		t.Fatalf("In: err %v after %d writes", err, wrote)
	}
	stored := w.store.Spans()
	if len(stored) != 1 || stored[0].ID != sp.ID() || stored[0].RunID != "run-1" || stored[0].SessionID != w.session.ID ||
		!strings.Contains(string(stored[0].Data), "hello") {
		t.Fatalf("stored %+v", stored)
	}
	if len(h.saved) != 1 || len(h.published) != 1 || h.published[0] != sp.ID() {
		t.Fatalf("told %+v, want the stored span once each", h)
	}
	if r.Take().Len() != 0 {
		t.Fatal("a span carried once is held again")
	}
}

func TestASpanNeverCostsTheWriteItRidesOn(t *testing.T) {
	w := setup(t)
	h := &heard{}
	r := newRecorder(t, w, h)
	r.Span(domain.SpanFunction, "calc", "").Finish(errors.New("boom"))
	var writes []bool // whether each try carried the spans
	err := r.Take().In(func(also func(tx ports.SessionTx) error) error {
		carried := also != nil
		writes = append(writes, carried)
		if carried {
			return also(spanTx{store: w.store, refuse: true})
		}
		return nil
	}, nil)
	if err != nil || len(writes) != 2 || !writes[0] || writes[1] {
		t.Fatalf("err %v, writes %v: want the write tried with the spans, then without", err, writes)
	}
	stored := w.store.Spans()
	if len(stored) != 1 || stored[0].Error != "boom" || len(h.saved) != 1 {
		t.Fatalf("the spans were not stored on their own: %+v, told %+v", stored, h)
	}
}

func TestAfterHandOverASpanIsStoredAsItFinishes(t *testing.T) {
	w := setup(t)
	h := &heard{}
	r := newRecorder(t, w, h)
	r.Span(domain.SpanAgent, "helper", "").Finish(nil)
	if b := r.HandOver(); b.Len() != 1 {
		t.Fatalf("HandOver carries %d spans, want the one held", b.Len())
	} else {
		b.Alone()
	}
	r.Span(domain.SpanGuardrail, "late", "").Zero(nil)
	stored := w.store.Spans()
	if len(stored) != 2 || stored[1].Name != "late" || !stored[1].StartedAt.Equal(stored[1].EndedAt) {
		t.Fatalf("stored %+v: want the late span stored on finishing, zero long", stored)
	}
	if len(h.published) != 2 {
		t.Fatalf("published %v", h.published)
	}
}

func TestARecorderKeepsToTheTraceSettings(t *testing.T) {
	w := setup(t)
	ctx := context.Background()
	for key, v := range map[string]string{settings.KeyTraceIncludeSensitiveData: "false", settings.KeyTraceSpanDataKB: "1"} {
		if _, err := w.settings.Put(ctx, admin, key, v); err != nil {
			t.Fatal(err)
		}
	}
	h := &heard{}
	r := newRecorder(t, w, h)
	r.Span(domain.SpanGeneration, "private", "").Set("input", "secret words", true).Set("model", "m", false).Finish(nil)
	r.Span(domain.SpanGeneration, "big", "").Set("tools", strings.Repeat("x", 4096), false).Finish(nil)
	r.Flush()
	stored := w.store.Spans()
	if len(stored) != 2 {
		t.Fatalf("stored %d spans", len(stored))
	}
	if d := string(stored[0].Data); strings.Contains(d, "secret") || !strings.Contains(d, `"model"`) {
		t.Fatalf("sensitive data off, the payload is %s", d)
	}
	if d := stored[1].Data; len(d) > 1024 || strings.Contains(string(d), "xxxx") {
		t.Fatalf("a payload over 1 KB was kept whole: %d bytes", len(d))
	}
}
