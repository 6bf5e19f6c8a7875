package sessions_test

import (
	"context"
	"strings"
	"testing"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/sessions"
	"github.com/agents-server/agents-server/ports"
)

func TestForkCopiesAndRewrites(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	agent := f.agent(t, "a", domain.ScopePrivate, ann.User.ID, 0)
	s, err := f.svc.Create(ctx, ann, "source", agent)
	if err != nil {
		t.Fatal(err)
	}
	plan := true
	f.beginRun(t, s.ID, "r0", agent, &plan)
	e := f.appendAll(t, s.ID, userMsg("one", "r1"), toolCall("c1", "r1"), reply("two", "r1", nil), userMsg("three", "r2"))
	f.appendAll(t, s.ID, update(e[2].ID, "", "folded"))
	for _, sp := range []domain.Span{{ID: "sp1", SessionID: s.ID, RunID: "r1", Kind: "run", StartedAt: t0},
		{ID: "sp2", SessionID: s.ID, RunID: "elsewhere", Kind: "run", StartedAt: t0}} {
		if err := f.traces.SaveSpan(ctx, sp); err != nil {
			t.Fatal(err)
		}
	}

	whole, err := f.svc.Fork(ctx, ann, s.ID, sessions.ForkRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if whole.ID == s.ID || whole.Name != "source (fork)" || whole.AgentConfigID != agent || !whole.Planning || whole.LastSeq != 5 {
		t.Fatalf("fork = %+v", whole)
	}
	src, _ := f.svc.Messages(ctx, ann, s.ID, sessionsPage(0, ""))
	got, _ := f.svc.Messages(ctx, ann, whole.ID, sessionsPage(0, ""))
	if len(got) != 4 {
		t.Fatalf("the fork lists %d entries", len(got))
	}
	srcIDs := map[string]bool{}
	for _, m := range src {
		srcIDs[m.Meta.ID], srcIDs[m.Meta.RowID] = true, true
	}
	for i, m := range got {
		if srcIDs[m.Meta.ID] || srcIDs[m.Meta.RowID] || srcIDs[m.Parent] || !m.OnPath {
			t.Errorf("fork entry %d points into the source or is off the path: %+v", i, m.Meta)
		}
		if i > 0 && m.Parent != got[i-1].Meta.ID {
			t.Errorf("fork entry %d's parent %q, want %q", i, m.Parent, got[i-1].Meta.ID)
		}
	}
	if title(t, got[2]) != "folded" {
		t.Error("the update's target was not rewritten")
	}
	// The source's tip is its update entry: the fork's is that copy.
	source, _ := f.svc.Get(ctx, ann, s.ID)
	if sess, _ := f.svc.Get(ctx, ann, whole.ID); sess.Totals != source.Totals || sess.TipID == "" || srcIDs[sess.TipID] {
		t.Errorf("fork state = %+v", sess)
	}
	// The spans of the runs that wrote the copy come along.
	copied := 0
	for _, sp := range f.traces.Spans() {
		if sp.SessionID == whole.ID {
			copied++
			if sp.RunID != "r1" {
				t.Errorf("copied a span of run %s", sp.RunID)
			}
		}
	}
	if copied != 1 {
		t.Errorf("%d spans copied, want 1", copied)
	}

	count := func(id string) int {
		l, _ := f.svc.Messages(ctx, ann, id, sessionsPage(0, ""))
		return len(l)
	}
	incl, err := f.svc.Fork(ctx, ann, s.ID, sessions.ForkRequest{MessageID: e[2].ID, Label: " upto "})
	if err != nil || incl.Name != "upto" || count(incl.ID) != 3 {
		t.Fatalf("inclusive fork = %+v, %v", incl, err)
	}
	excl, err := f.svc.Fork(ctx, ann, s.ID, sessions.ForkRequest{MessageID: e[2].ID, Exclusive: true})
	if err != nil || count(excl.ID) != 2 {
		t.Fatalf("exclusive fork = %+v, %v", excl, err)
	}
	first, err := f.svc.Fork(ctx, ann, s.ID, sessions.ForkRequest{MessageID: e[0].ID, Exclusive: true})
	if err != nil || count(first.ID) != 0 || first.TipID != "" {
		t.Fatalf("an exclusive fork at the first entry = %+v, %v; want empty", first, err)
	}
	// A fork continues where its boundary was.
	next := f.appendAll(t, incl.ID, userMsg("next", "r9"))[0]
	if m, _ := f.svc.Messages(ctx, ann, incl.ID, sessionsPage(0, "")); m[3].Meta.ID != next.ID || m[3].Parent != m[2].Meta.ID {
		t.Errorf("append after a fork: %+v", m[3].Meta)
	}
	if count(s.ID) != 4 {
		t.Error("the source changed")
	}
}

func TestForkRefusalsAndNames(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	s := f.session(t, ann, "")
	e := f.appendAll(t, s.ID, userMsg("one", "r1"))
	if _, err := f.svc.Branch(ctx, ann, s.ID, e[0].ID); err != nil {
		t.Fatal(err)
	}
	leaf, _ := f.svc.Get(ctx, ann, s.ID)
	for _, c := range []struct {
		name  string
		who   domain.Principal
		req   sessions.ForkRequest
		code  errs.Code
		field string
	}{
		{"a long label", ann, sessions.ForkRequest{Label: strings.Repeat("x", domain.MaxSessionName+1)}, errs.Validation, "label"},
		{"a missing entry", ann, sessions.ForkRequest{MessageID: "nope"}, errs.Validation, "message_id"},
		{"a branch marker", ann, sessions.ForkRequest{MessageID: leaf.TipID}, errs.Validation, "message_id"},
		{"another person's session", bob, sessions.ForkRequest{}, errs.NotFound, ""},
		{"an admin", admin, sessions.ForkRequest{}, errs.NotFound, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := f.svc.Fork(ctx, c.who, s.ID, c.req)
			wantErr(t, err, c.code, c.field)
		})
	}
	_, err := f.svc.Fork(ctx, ann, "missing", sessions.ForkRequest{})
	wantErr(t, err, errs.NotFound, "")

	// An unnamed source forks as "Fork <time>"; a long name is cut.
	if fk, _ := f.svc.Fork(ctx, ann, s.ID, sessions.ForkRequest{}); fk.Name != "Fork "+t0.Format("2006-01-02 15:04") {
		t.Errorf("unnamed fork = %q", fk.Name)
	}
	long := f.session(t, ann, strings.Repeat("n", domain.MaxSessionName))
	if fk, _ := f.svc.Fork(ctx, ann, long.ID, sessions.ForkRequest{}); len([]rune(fk.Name)) != domain.MaxSessionName {
		t.Errorf("a long name forks as %d runes", len([]rune(fk.Name)))
	}
	// Compacted entries stay compacted in the copy.
	err = f.store.WriteSession(ctx, s.ID, func(tx ports.SessionTx) error {
		c := domain.Entry{ID: "folded", RowID: "row-folded", ParentID: leaf.TipID, Kind: domain.KindItem, Seq: 3, Compacted: true,
			Item: domain.TextMessage("user", "input_text", "old"), CreatedAt: t0}
		return tx.InsertEntries(ctx, []domain.Entry{c}, []domain.EntryMeta{domain.MetaOf(c, e[0].ID)})
	})
	if err != nil {
		t.Fatal(err)
	}
	fk, _ := f.svc.Fork(ctx, ann, s.ID, sessions.ForkRequest{MessageID: "folded"})
	if l, _ := f.svc.Messages(ctx, ann, fk.ID, sessionsPage(0, "")); len(l) != 2 || !l[1].Meta.Compacted {
		t.Errorf("fork of a compacted entry = %+v", l)
	}
}
