package sessions_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/sessions"
)

func sessionsPage(limit int, before string) sessions.Page {
	return sessions.Page{Limit: limit, BeforeRowID: before}
}

func TestMessagesPagesFoldAndNeverComeUpShort(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	s := f.session(t, ann, "")
	for i := range 12 {
		e := f.appendAll(t, s.ID, userMsg(fmt.Sprintf("m%02d", i), "r"))[0]
		if i%3 == 0 {
			f.appendAll(t, s.ID, update(e.ID, "", fmt.Sprintf("t%02d", i)))
		}
	}
	// An update stored before its target (by call id) still folds.
	f.appendAll(t, s.ID, update("", "call_late", "late card"))
	call := f.appendAll(t, s.ID, toolCall("call_late", "r"))[0]

	all, err := f.svc.Messages(ctx, ann, s.ID, sessionsPage(0, ""))
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 13 || all[12].Meta.ID != call.ID {
		t.Fatalf("all: %v", ids(all))
	}
	if title(t, all[0]) != "t00" || title(t, all[1]) != "" || title(t, all[3]) != "t03" || title(t, all[12]) != "late card" {
		t.Errorf("folded titles: %q %q %q %q", title(t, all[0]), title(t, all[1]), title(t, all[3]), title(t, all[12]))
	}
	for i, l := range all {
		if !l.OnPath || l.Siblings != nil || (i > 0 && l.Parent != all[i-1].Meta.ID) {
			t.Errorf("entry %d: on_path %v, siblings %v, parent %q", i, l.OnPath, l.Siblings, l.Parent)
		}
	}

	// Pages of 5, backwards by the oldest row id, until the start.
	var seen []string
	cursor := ""
	for {
		page, err := f.svc.Messages(ctx, ann, s.ID, sessionsPage(5, cursor))
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		if want := min(5, 13-len(seen)); len(page) != want {
			t.Fatalf("a page of %d, want %d", len(page), want)
		}
		seen = append(ids(page), seen...)
		cursor = page[0].Meta.RowID
	}
	if !slices.Equal(seen, ids(all)) {
		t.Errorf("paging gave %v, want %v", seen, ids(all))
	}
	if p, _ := f.svc.Messages(ctx, ann, s.ID, sessionsPage(3, "")); title(t, p[2]) != "late card" || title(t, p[0]) != "" {
		t.Errorf("folding on the newest page: %q %q", title(t, p[0]), title(t, p[2]))
	}

	for _, limit := range []int{-1, sessions.MaxPageLimit + 1} {
		_, err := f.svc.Messages(ctx, ann, s.ID, sessionsPage(limit, ""))
		wantErr(t, err, errs.Validation, "limit")
	}
	other := f.session(t, ann, "other")
	_, err = f.svc.Messages(ctx, ann, other.ID, sessionsPage(0, all[3].Meta.RowID))
	wantErr(t, err, errs.Validation, "before_id")
	if got, err := f.svc.Messages(ctx, ann, other.ID, sessionsPage(0, "")); err != nil || got == nil || len(got) != 0 {
		t.Errorf("an empty session lists %v, %v", got, err)
	}
	for _, p := range []domain.Principal{bob, admin} {
		_, err := f.svc.Messages(ctx, p, s.ID, sessionsPage(0, ""))
		wantErr(t, err, errs.NotFound, "")
	}
	_, err = f.svc.Messages(ctx, ann, "missing", sessionsPage(0, ""))
	wantErr(t, err, errs.NotFound, "")
}

func TestSiblingsAndSwitching(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	s := f.session(t, ann, "")
	u := f.appendAll(t, s.ID, userMsg("what is 2+2?", "r1"))[0]
	a1 := f.appendAll(t, s.ID, reply("5", "r1", nil), note("(sorry)"))
	if _, err := f.svc.Branch(ctx, ann, s.ID, u.ID); err != nil {
		t.Fatal(err)
	}
	a2 := f.appendAll(t, s.ID, reply("4", "r2", nil))[0]

	byID := func(list []sessions.Listed) map[string]sessions.Listed {
		out := map[string]sessions.Listed{}
		for _, l := range list {
			out[l.Meta.ID] = l
		}
		return out
	}
	all, _ := f.svc.Messages(ctx, ann, s.ID, sessionsPage(0, ""))
	m := byID(all)
	if len(m) != 4 || m[a1[0].ID].OnPath || m[a1[1].ID].OnPath || !m[a2.ID].OnPath || !m[u.ID].OnPath {
		t.Fatalf("on_path after regenerate: %v", all)
	}
	sib := m[a2.ID].Siblings
	want := &domain.SiblingGroup{Heads: []string{a1[0].ID, a2.ID}, Tips: []string{a1[1].ID, a2.ID}}
	if sib == nil || !slices.Equal(sib.Heads, want.Heads) || !slices.Equal(sib.Tips, want.Tips) || m[a2.ID].SiblingIndex != 1 {
		t.Fatalf("siblings of the new answer = %+v (index %d), want %+v", sib, m[a2.ID].SiblingIndex, want)
	}
	if m[a1[0].ID].Siblings == nil || m[a1[0].ID].SiblingIndex != 0 || m[a1[1].ID].Siblings != nil || m[u.ID].Siblings != nil {
		t.Error("siblings on the wrong entries")
	}
	if m[a2.ID].Parent != u.ID {
		t.Errorf("the listed parent %q skips the branch marker", m[a2.ID].Parent)
	}
	// A page holding only the newest attempt still knows its older sibling.
	last, _ := f.svc.Messages(ctx, ann, s.ID, sessionsPage(1, ""))
	if len(last) != 1 || last[0].Siblings == nil || !slices.Equal(last[0].Siblings.Tips, want.Tips) {
		t.Fatalf("newest page = %+v", last)
	}

	// Switching back to attempt 1 by branching to its tip.
	if _, err := f.svc.Branch(ctx, ann, s.ID, sib.Tips[0]); err != nil {
		t.Fatal(err)
	}
	all, _ = f.svc.Messages(ctx, ann, s.ID, sessionsPage(0, ""))
	for _, l := range all {
		if l.OnPath != (l.Meta.ID != a2.ID) {
			t.Errorf("after switching, %s on_path = %v", l.Meta.ID, l.OnPath)
		}
	}
	// On the old attempt, the current tip is its own; the other resolves
	// through its subtree.
	if g := byID(all)[a2.ID].Siblings; g == nil || !slices.Equal(g.Tips, want.Tips) {
		t.Errorf("after switching, siblings = %+v", g)
	}

	// The attempt on the path points at where the conversation stands,
	// not at the newest entry of its subtree.
	older := f.appendAll(t, s.ID, userMsg("and 3+3?", "r3"))[0]
	if _, err := f.svc.Branch(ctx, ann, s.ID, a1[1].ID); err != nil {
		t.Fatal(err)
	}
	f.appendAll(t, s.ID, userMsg("and 4+4?", "r4"))
	if _, err := f.svc.Branch(ctx, ann, s.ID, older.ID); err != nil {
		t.Fatal(err)
	}
	all, _ = f.svc.Messages(ctx, ann, s.ID, sessionsPage(0, ""))
	if g := byID(all)[a1[0].ID].Siblings; g == nil || g.Tips[0] != older.ID || g.Tips[1] != a2.ID {
		t.Errorf("with a newer abandoned branch under the current attempt, siblings = %+v; want tips %s, %s", g, older.ID, a2.ID)
	}
}

func TestContextReport(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	agent := f.agent(t, "a", domain.ScopePrivate, ann.User.ID, 128000)
	s, err := f.svc.Create(ctx, ann, "", agent)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := f.svc.Context(ctx, ann, s.ID)
	if err != nil || rep.ContextWindow != 128000 || rep.InputTokens != 0 || rep.ConversationTokens != 0 || rep.Prompt != nil {
		t.Fatalf("empty = %+v, %v", rep, err)
	}
	u := f.appendAll(t, s.ID, userMsg("hello there", "r1"))[0]
	f.appendAll(t, s.ID, reply("hi", "r1", &domain.Usage{InputTokens: 40, CachedTokens: 8, CacheWriteTokens: 2, OutputTokens: 3, TotalTokens: 43}))
	if err := f.svc.SaveContextProfile(ctx, s.ID, "r1", json.RawMessage(`{"layers":1}`)); err != nil {
		t.Fatal(err)
	}
	rep, _ = f.svc.Context(ctx, ann, s.ID)
	if rep.InputTokens != 40 || rep.CachedTokens != 8 || rep.CacheWriteTokens != 2 || rep.SessionInputTokens != 40 ||
		rep.CompactionTokens != 43 || rep.ConversationTokens == 0 || string(rep.Prompt) != `{"layers":1}` {
		t.Errorf("report = %+v", rep)
	}
	// Back to the question: the answer's count no longer describes it.
	if _, err := f.svc.Branch(ctx, ann, s.ID, u.ID); err != nil {
		t.Fatal(err)
	}
	rep, _ = f.svc.Context(ctx, ann, s.ID)
	if rep.InputTokens != 0 || rep.SessionInputTokens != 40 || rep.ConversationTokens != (int64(len(u.Item))+3)/4 {
		t.Errorf("report after branching = %+v", rep)
	}
	_, err = f.svc.Context(ctx, admin, s.ID)
	wantErr(t, err, errs.NotFound, "")
	// A deleted agent leaves the window unknown, no error.
	f.beginRun(t, s.ID, "r-gone", "deleted-agent", nil)
	if gone, _ := f.svc.Get(ctx, ann, s.ID); gone.AgentConfigID != "deleted-agent" {
		t.Fatalf("run context = %+v", gone)
	}
	if rep, err := f.svc.Context(ctx, ann, s.ID); err != nil || rep.ContextWindow != 0 {
		t.Errorf("report with a missing agent = %+v, %v", rep, err)
	}
}
