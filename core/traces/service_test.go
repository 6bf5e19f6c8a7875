package traces_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/secrets"
	"github.com/agents-server/agents-server/core/sessions"
	"github.com/agents-server/agents-server/core/settings"
	"github.com/agents-server/agents-server/core/traces"
	"github.com/agents-server/agents-server/ports"
	"github.com/agents-server/agents-server/ports/porttest"
)

var (
	ann   = domain.Principal{User: domain.User{ID: "ann", Role: domain.RoleMember}}
	admin = domain.Principal{User: domain.User{ID: "root", Role: domain.RoleAdmin}}
	start = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
)

type world struct {
	svc      *traces.Service
	store    *porttest.TraceStore
	settings *settings.Service
	clock    *porttest.Clock
	session  domain.Session // ann's
}

func setup(t *testing.T) *world {
	t.Helper()
	ctx := context.Background()
	w := &world{store: &porttest.TraceStore{}, clock: porttest.NewClock(start)}
	box, _ := secrets.NewBox(nil)
	w.settings = settings.New(&porttest.SettingStore{}, box, w.clock)
	sess := sessions.New(sessions.NewJournal(sessions.Deps{Store: &porttest.SessionStore{}, Agents: &porttest.ConfigStore{}, Traces: w.store,
		Runs: &porttest.RunStore{}, IDs: &porttest.IDs{}, Clock: w.clock}), nil)
	w.svc = traces.New(w.store, sess, w.settings, w.clock)
	var err error
	if w.session, err = sess.Create(ctx, ann, "traced", ""); err != nil {
		t.Fatal(err)
	}
	return w
}

// span saves a span of ann's session started at, with a payload.
func (w *world) span(t *testing.T, id string, at time.Time) {
	t.Helper()
	sp := domain.Span{ID: id, SessionID: w.session.ID, RunID: "run-1", Kind: "model", Name: "call", StartedAt: at, EndedAt: at,
		Meta: map[string]any{"model": "m"}, Data: json.RawMessage(`{"input":"hello"}`)}
	if err := w.store.SaveSpan(context.Background(), sp); err != nil {
		t.Fatal(err)
	}
}

func ids(spans []domain.Span) []string {
	out := []string{}
	for _, s := range spans {
		out = append(out, s.ID)
	}
	return out
}

// TestASessionsTracesAreItsOwners holds that spans are listed, paged and
// read whole for the session's owner only — an admin included among the
// others, who find no session — and that a summary leaves the payloads
// out.
func TestASessionsTracesAreItsOwners(t *testing.T) {
	w := setup(t)
	ctx := context.Background()
	for i := range 5 {
		w.span(t, fmt.Sprint("s", i), start.Add(time.Duration(i)*time.Second))
	}

	all, err := w.svc.List(ctx, ann, w.session.ID, false, ports.SpanPage{})
	if err != nil || !slices.Equal(ids(all), []string{"s0", "s1", "s2", "s3", "s4"}) || string(all[0].Data) != `{"input":"hello"}` {
		t.Fatalf("the whole listing: %v, %v", ids(all), err)
	}
	summary, err := w.svc.List(ctx, ann, w.session.ID, true, ports.SpanPage{Limit: 2, BeforeID: "s4"})
	if err != nil || !slices.Equal(ids(summary), []string{"s2", "s3"}) {
		t.Fatalf("the page before s4: %v, %v", ids(summary), err)
	}
	if summary[0].Data != nil || !summary[0].PayloadOmitted || summary[0].Meta["model"] != "m" {
		t.Fatalf("a summary span %+v: want meta, no payload", summary[0])
	}
	if got, err := w.svc.Get(ctx, ann, w.session.ID, "s1"); err != nil || string(got.Data) != `{"input":"hello"}` {
		t.Fatalf("a span whole: %+v, %v", got, err)
	}
	if _, err := w.svc.Get(ctx, ann, w.session.ID, "nope"); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("a missing span: %v", err)
	}
	if _, err := w.svc.List(ctx, admin, w.session.ID, true, ports.SpanPage{}); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("an admin lists ann's traces: %v", err)
	}
	if _, err := w.svc.Get(ctx, admin, w.session.ID, "s1"); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("an admin reads ann's span: %v", err)
	}
	if _, err := w.svc.List(ctx, ann, "missing", true, ports.SpanPage{}); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("the traces of a missing session: %v", err)
	}
}

// TestATracePageIsBounded holds the page limit's bounds (0 is every span)
// and that a cursor outside the session is a validation error.
func TestATracePageIsBounded(t *testing.T) {
	w := setup(t)
	ctx := context.Background()
	w.span(t, "s0", start)
	for _, tc := range []struct {
		page  ports.SpanPage
		field string // "" = accepted
	}{
		{ports.SpanPage{Limit: -1}, "limit"},
		{ports.SpanPage{Limit: traces.MaxPageLimit + 1}, "limit"},
		{ports.SpanPage{Limit: traces.MaxPageLimit}, ""},
		{ports.SpanPage{}, ""},
		{ports.SpanPage{Limit: 10, BeforeID: "elsewhere"}, "before_id"},
	} {
		_, err := w.svc.List(ctx, ann, w.session.ID, true, tc.page)
		if tc.field == "" && err != nil || tc.field != "" && errs.FieldsOf(err)[tc.field] == "" {
			t.Errorf("page %+v: %v, want a refusal on %q", tc.page, err, tc.field)
		}
	}
}

// TestPruneKeepsTheRetentionSetting holds that spans started before
// trace_retention_days ago are pruned, the rest kept, and that 0 keeps
// every span.
func TestPruneKeepsTheRetentionSetting(t *testing.T) {
	w := setup(t)
	ctx := context.Background()
	w.span(t, "old", start)
	w.span(t, "edge", start.Add(24*time.Hour))
	w.span(t, "new", start.Add(30*24*time.Hour))
	w.clock.Set(start.Add(31 * 24 * time.Hour)) // the default keeps 30 days

	if n, err := w.svc.Prune(ctx); err != nil || n != 1 {
		t.Fatalf("prune at the default: %d, %v; want the one older than 30 days", n, err)
	}
	if _, err := w.settings.Put(ctx, admin, settings.KeyTraceRetentionDays, "0"); err != nil {
		t.Fatal(err)
	}
	w.clock.Advance(365 * 24 * time.Hour)
	if n, err := w.svc.Prune(ctx); err != nil || n != 0 {
		t.Fatalf("prune with retention 0: %d, %v; want none", n, err)
	}
	if _, err := w.settings.Put(ctx, admin, settings.KeyTraceRetentionDays, "1"); err != nil {
		t.Fatal(err)
	}
	if n, err := w.svc.Prune(ctx); err != nil || n != 2 {
		t.Fatalf("prune at 1 day, a year on: %d, %v", n, err)
	}
	if left, _ := w.svc.List(ctx, ann, w.session.ID, true, ports.SpanPage{}); len(left) != 0 {
		t.Fatalf("left after pruning: %v", ids(left))
	}
}
