package porttest

import (
	"cmp"
	"context"
	"encoding/json"
	"slices"
	"sync"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// TraceStore is an in-memory ports.TraceStore. A span's meta goes through
// JSON, as it does on disk (numbers come back as float64), and its times
// are kept to the millisecond. The zero value is empty and ready.
type TraceStore struct {
	mu      sync.Mutex
	spans   []domain.Span // whole, in insertion order
	commits int           // the writes that stored spans
}

var _ ports.TraceStore = (*TraceStore)(nil)

// SaveSpan inserts a span with its payload; conflict when its id is taken.
func (s *TraceStore) SaveSpan(ctx context.Context, sp domain.Span) error {
	return s.SaveSpans(ctx, []domain.Span{sp})
}

// SaveSpans inserts spans with their payloads, all or none; conflict when
// an id is taken (by a stored span or an earlier one of spans).
func (s *TraceStore) SaveSpans(ctx context.Context, spans []domain.Span) error {
	if err := s.insert(ctx, spans); err != nil {
		return err
	}
	s.mu.Lock()
	s.commits++
	s.mu.Unlock()
	return nil
}

// insert is SaveSpans without counting a commit: a session transaction's.
func (s *TraceStore) insert(ctx context.Context, spans []domain.Span) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	stored := make([]domain.Span, 0, len(spans))
	for _, sp := range spans {
		meta, err := json.Marshal(sp.Meta)
		if err != nil || sp.Meta == nil {
			meta = []byte("{}")
		}
		sp.Meta = nil
		if err := json.Unmarshal(meta, &sp.Meta); err != nil {
			return errs.Wrap(errs.Internal, err, "span %s has malformed meta", sp.ID)
		}
		sp.StartedAt, sp.EndedAt = storedTime(sp.StartedAt), storedTime(sp.EndedAt)
		sp.Data = slices.Clone(sp.Data)
		sp.DataBytes, sp.PayloadOmitted = len(sp.Data), false
		stored = append(stored, sp)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, sp := range stored {
		taken := func(x domain.Span) bool { return x.ID == sp.ID }
		if slices.ContainsFunc(s.spans, taken) || slices.ContainsFunc(stored[:i], taken) {
			return errs.E(errs.Conflict, "span %s already exists", sp.ID)
		}
	}
	s.spans = append(s.spans, stored...)
	return nil
}

// Commits is how many writes of its own (SaveSpan or SaveSpans calls)
// stored spans — what a real store pays a transaction for each — leaving
// out those stored in a session's transaction.
func (s *TraceStore) Commits() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.commits
}

// ListSpans returns a session's spans by start, then id — every one, or
// the newest page.Limit before page.BeforeID — with their payloads or
// (withData false) without, PayloadOmitted set where one exists. Returns
// validation for a cursor that is not a span of the session.
func (s *TraceStore) ListSpans(ctx context.Context, sessionID string, withData bool, page ports.SpanPage) ([]domain.Span, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []domain.Span
	for _, sp := range s.spans {
		if sp.SessionID == sessionID {
			out = append(out, copySpan(sp))
		}
	}
	slices.SortFunc(out, spanOrder)
	if page.BeforeID != "" {
		at := slices.IndexFunc(out, func(sp domain.Span) bool { return sp.ID == page.BeforeID })
		if at < 0 {
			return nil, errs.Field("before_id", "is not a span of this session")
		}
		out = out[:at]
	}
	if page.Limit > 0 && len(out) > page.Limit {
		out = out[len(out)-page.Limit:]
	}
	if !withData {
		for i := range out {
			out[i].Data, out[i].PayloadOmitted = nil, out[i].DataBytes > 0
		}
	}
	return append([]domain.Span{}, out...), nil
}

// FindSpan returns one span of a session, whole; not_found when absent.
func (s *TraceStore) FindSpan(ctx context.Context, sessionID, spanID string) (domain.Span, error) {
	return s.find(ctx, func(sp domain.Span) bool { return sp.SessionID == sessionID && sp.ID == spanID })
}

// FindSpanByID returns a span, whole, by its id alone; not_found when
// absent.
func (s *TraceStore) FindSpanByID(ctx context.Context, spanID string) (domain.Span, error) {
	return s.find(ctx, func(sp domain.Span) bool { return sp.ID == spanID })
}

func (s *TraceStore) find(ctx context.Context, match func(domain.Span) bool) (domain.Span, error) {
	if err := ctx.Err(); err != nil {
		return domain.Span{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if i := slices.IndexFunc(s.spans, match); i >= 0 {
		return copySpan(s.spans[i]), nil
	}
	return domain.Span{}, errs.E(errs.NotFound, "span not found")
}

// DeleteSpansBefore removes the spans that started before cutoff and says
// how many.
func (s *TraceStore) DeleteSpansBefore(ctx context.Context, cutoff time.Time) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	cutoff = storedTime(cutoff) // compared as the store compares: to the millisecond
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.spans)
	s.spans = slices.DeleteFunc(s.spans, func(sp domain.Span) bool { return sp.StartedAt.Before(cutoff) })
	return n - len(s.spans), nil
}

// CopySpans copies the spans of the given runs of one session into another
// under new ids, parents following their copies ("" for a parent not
// copied).
func (s *TraceStore) CopySpans(ctx context.Context, fromSession, toSession string, runIDs []string, newID func() string) error {
	all, err := s.ListSpans(ctx, fromSession, true, ports.SpanPage{})
	if err != nil {
		return err
	}
	ids := map[string]string{}
	var copies []domain.Span
	for _, sp := range all {
		if slices.Contains(runIDs, sp.RunID) {
			ids[sp.ID] = newID()
			copies = append(copies, sp)
		}
	}
	for _, sp := range copies {
		sp.ID, sp.SessionID, sp.ParentID = ids[sp.ID], toSession, ids[sp.ParentID]
		if err := s.SaveSpan(ctx, sp); err != nil {
			return err
		}
	}
	return nil
}

// ForgetSession drops a session's spans: what deleting the session
// cascades to in the real store (SessionStore.DeleteSession calls it when
// this fake is its Traces).
func (s *TraceStore) ForgetSession(sessionID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.spans = slices.DeleteFunc(s.spans, func(sp domain.Span) bool { return sp.SessionID == sessionID })
}

// forget removes the spans of ids (a rolled back transaction's).
func (s *TraceStore) forget(ids []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.spans = slices.DeleteFunc(s.spans, func(sp domain.Span) bool { return slices.Contains(ids, sp.ID) })
}

// Spans returns every stored span, whole, by start then id: what a test
// asserts on.
func (s *TraceStore) Spans() []domain.Span {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]domain.Span, len(s.spans))
	for i, sp := range s.spans {
		out[i] = copySpan(sp)
	}
	slices.SortFunc(out, spanOrder)
	return out
}

func spanOrder(a, b domain.Span) int {
	return cmp.Or(a.StartedAt.Compare(b.StartedAt), cmp.Compare(a.ID, b.ID))
}

// copySpan is a deep copy, so a caller changing what it got changes
// nothing stored. The meta was decoded from JSON, so it encodes again.
func copySpan(sp domain.Span) domain.Span {
	b, _ := json.Marshal(sp.Meta)
	sp.Meta = nil
	_ = json.Unmarshal(b, &sp.Meta)
	sp.Data = slices.Clone(sp.Data)
	return sp
}
