package porttest_test

import (
	"context"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
	"github.com/agents-server/agents-server/ports/porttest"
)

// epoch is when the stored rows of these tests happen.
var epoch = time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC)

func TestTraceStorePages(t *testing.T) {
	ctx := context.Background()
	s := &porttest.TraceStore{}
	for i, id := range []string{"s1", "s2", "s3"} {
		sp := domain.Span{ID: id, SessionID: "x", RunID: "r", StartedAt: epoch.Add(time.Duration(i) * time.Second), Meta: map[string]any{"n": i},
			Data: []byte(`{"a":1}`)}
		if err := s.SaveSpan(ctx, sp); err != nil {
			t.Fatal(err)
		}
	}
	page, err := s.ListSpans(ctx, "x", false, ports.SpanPage{Limit: 1, BeforeID: "s3"})
	if err != nil || len(page) != 1 || page[0].ID != "s2" || page[0].Data != nil || !page[0].PayloadOmitted || page[0].Meta["n"] != float64(1) {
		t.Fatalf("page = %+v, %v", page, err)
	}
	if _, err := s.ListSpans(ctx, "x", false, ports.SpanPage{BeforeID: "nope"}); errs.CodeOf(err) != errs.Validation {
		t.Fatalf("a foreign cursor: %v", err)
	}
	ids := 0
	if err := s.CopySpans(ctx, "x", "y", []string{"r"}, func() string { ids++; return string(rune('a' + ids)) }); err != nil {
		t.Fatal(err)
	}
	if whole, err := s.FindSpan(ctx, "y", "b"); err != nil || string(whole.Data) != `{"a":1}` || whole.DataBytes != 7 {
		t.Fatalf("copy = %+v, %v", whole, err)
	}
	if n, err := s.DeleteSpansBefore(ctx, epoch.Add(time.Second)); err != nil || n != 2 {
		t.Fatalf("deleted %d, %v", n, err)
	}
}
