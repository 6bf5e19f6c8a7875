package sessions_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

func TestCreateChecksNameAndAgent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	f.agent(t, "annsPrivate", domain.ScopePrivate, ann.User.ID, 0)
	f.agent(t, "shared", domain.ScopeGlobal, bob.User.ID, 0)
	for _, c := range []struct {
		name    string
		who     domain.Principal
		session string
		agent   string
		code    errs.Code
		field   string
	}{
		{"a name too long", ann, strings.Repeat("x", domain.MaxSessionName+1), "", errs.Validation, "name"},
		{"a name of two lines", ann, "a\nb", "", errs.Validation, "name"},
		{"a missing agent", ann, "ok", "nope", errs.Validation, "agent_config_id"},
		{"another person's private agent", bob, "ok", "annsPrivate", errs.Validation, "agent_config_id"},
		{"the owner's private agent", ann, "ok", "annsPrivate", "", ""},
		{"a global agent", ann, "ok", "shared", "", ""},
		{"any agent, for an admin", admin, "ok", "annsPrivate", "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := f.svc.Create(ctx, c.who, c.session, c.agent)
			if c.code != "" {
				wantErr(t, err, c.code, c.field)
				return
			}
			if err != nil || s.OwnerID != c.who.User.ID || s.AgentConfigID != c.agent || s.ID == "" || !s.CreatedAt.Equal(t0) {
				t.Fatalf("created %+v, %v", s, err)
			}
		})
	}
	// The name is trimmed; exactly MaxSessionName runes is fine.
	s, err := f.svc.Create(ctx, ann, "  "+strings.Repeat("é", domain.MaxSessionName)+" ", "")
	if err != nil || s.Name != strings.Repeat("é", domain.MaxSessionName) {
		t.Errorf("create = %q, %v", s.Name, err)
	}
}

func TestListGetPatchDelete(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	old := f.session(t, ann, "old")
	f.clock.Advance(time.Minute)
	newer := f.session(t, ann, "newer")
	theirs := f.session(t, bob, "bob's")
	hidden := "hidden"
	if err := f.store.CreateSession(ctx, domain.Session{ID: hidden, OwnerID: ann.User.ID, Hidden: true, CreatedAt: t0, UpdatedAt: t0}); err != nil {
		t.Fatal(err)
	}

	names := func(list []domain.Session) string {
		var out []string
		for _, s := range list {
			out = append(out, s.Name)
		}
		return strings.Join(out, ",")
	}
	if list, _ := f.svc.List(ctx, ann, false); names(list) != "newer,old" {
		t.Errorf("ann lists %q: newest first, hidden left out", names(list))
	}
	_, err := f.svc.List(ctx, ann, true)
	wantErr(t, err, errs.Forbidden, "")
	if list, _ := f.svc.List(ctx, admin, true); len(list) != 3 {
		t.Errorf("admin lists %q", names(list))
	}

	// Content is the owner's alone: admins included, others read absent.
	if _, err := f.svc.Get(ctx, ann, old.ID); err != nil {
		t.Error(err)
	}
	for _, p := range []domain.Principal{bob, admin} {
		_, err := f.svc.Get(ctx, p, old.ID)
		wantErr(t, err, errs.NotFound, "")
		_, err = f.svc.Patch(ctx, p, old.ID, nil, nil)
		wantErr(t, err, errs.NotFound, "")
		// An invalid name tells a stranger nothing either.
		invalid := "two\nlines"
		_, err = f.svc.Patch(ctx, p, old.ID, &invalid, nil)
		wantErr(t, err, errs.NotFound, "")
	}
	_, err = f.svc.Get(ctx, ann, "missing")
	wantErr(t, err, errs.NotFound, "")

	// Patch: nil leaves a field; pinning floats a session to the top.
	bad := "two\nlines"
	_, err = f.svc.Patch(ctx, ann, old.ID, &bad, nil)
	wantErr(t, err, errs.Validation, "name")
	pinned, renamed := true, "  renamed "
	f.clock.Advance(time.Minute)
	got, err := f.svc.Patch(ctx, ann, old.ID, nil, &pinned)
	if err != nil || !got.Pinned || got.Name != "old" || !got.UpdatedAt.Equal(f.clock.Now()) {
		t.Fatalf("pin = %+v, %v", got, err)
	}
	if got, err = f.svc.Patch(ctx, ann, old.ID, &renamed, nil); err != nil || got.Name != "renamed" || !got.Pinned {
		t.Fatalf("rename = %+v, %v", got, err)
	}
	if list, _ := f.svc.List(ctx, ann, false); names(list) != "renamed,newer" {
		t.Errorf("after pinning ann lists %q", names(list))
	}

	// Delete: the owner or an admin; others read absent.
	wantErr(t, f.svc.CheckDelete(ctx, bob, newer.ID), errs.NotFound, "")
	wantErr(t, f.svc.Delete(ctx, bob, newer.ID), errs.NotFound, "")
	wantErr(t, f.svc.Delete(ctx, ann, "missing"), errs.NotFound, "")
	if err := f.svc.CheckDelete(ctx, admin, newer.ID); err != nil {
		t.Error(err)
	}
	if err := f.svc.Delete(ctx, admin, theirs.ID); err != nil {
		t.Error(err)
	}
	if err := f.svc.Delete(ctx, ann, newer.ID); err != nil {
		t.Error(err)
	}
	_, err = f.svc.Get(ctx, ann, newer.ID)
	wantErr(t, err, errs.NotFound, "")
}

func TestAppendBuildsTheTreeInOneTransaction(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	s := f.session(t, ann, "")
	usage := &domain.Usage{InputTokens: 100, OutputTokens: 10, TotalTokens: 110}
	first := f.appendAll(t, s.ID, userMsg("hi", "r1"), reply("hello", "r1", usage))
	f.clock.Advance(time.Second)
	given := domain.Entry{ID: "chosen", Kind: domain.KindAnnotation, Text: "note", CreatedAt: t0.Add(-time.Hour)}
	second := f.appendAll(t, s.ID, given, userMsg("more", "r2"))

	all := append(first, second...)
	for i, e := range all {
		if e.Seq != int64(i+1) || e.RowID == "" || e.ID == "" {
			t.Errorf("entry %d: seq %d row %q id %q", i, e.Seq, e.RowID, e.ID)
		}
		if i > 0 && e.ParentID != all[i-1].ID {
			t.Errorf("entry %d's parent is %q, want the previous entry", i, e.ParentID)
		}
	}
	if all[0].ParentID != "" || second[0].ID != "chosen" || !second[0].CreatedAt.Equal(t0.Add(-time.Hour)) || !second[1].CreatedAt.Equal(f.clock.Now()) {
		t.Errorf("ids and times: %+v", second)
	}
	sess, _ := f.svc.Get(ctx, ann, s.ID)
	if sess.TipID != second[1].ID || sess.LastSeq != 4 || !sess.UpdatedAt.Equal(f.clock.Now()) {
		t.Errorf("state = tip %s seq %d at %v", sess.TipID, sess.LastSeq, sess.UpdatedAt)
	}
	tot := sess.Totals
	if tot.SessionInputTokens != 100 || tot.AnchorSeq != 2 || tot.AnchorUsage != *usage ||
		tot.CharsAfterAnchor != int64(len(second[1].Item)) || tot.ActiveChars != int64(len(all[0].Item)+len(all[1].Item)+len(all[3].Item)) {
		t.Errorf("totals = %+v", tot)
	}
	if out, err := f.svc.Append(ctx, s.ID, nil); err != nil || len(out) != 0 {
		t.Errorf("an empty append = %v, %v", out, err)
	}

	// Nothing of a failed append stays: an entry without a kind, or an also
	// that fails.
	_, err := f.svc.Append(ctx, s.ID, []domain.Entry{userMsg("lost", ""), {Text: "no kind"}})
	wantErr(t, err, errs.Internal, "")
	boom := errors.New("boom")
	_, err = f.svc.AppendWith(ctx, s.ID, []domain.Entry{userMsg("lost too", "")}, func(ports.SessionTx) error { return boom })
	if !errors.Is(err, boom) {
		t.Fatalf("also's error: %v", err)
	}
	if _, err := f.svc.AppendWith(ctx, s.ID, nil, func(ports.SessionTx) error { return boom }); !errors.Is(err, boom) {
		t.Errorf("also without entries did not run: %v", err)
	}
	if after, _ := f.svc.Get(ctx, ann, s.ID); after.LastSeq != 4 || after.TipID != sess.TipID {
		t.Errorf("failed appends moved the session to %d / %s", after.LastSeq, after.TipID)
	}
	_, err = f.svc.Append(ctx, "missing", []domain.Entry{userMsg("x", "")})
	wantErr(t, err, errs.NotFound, "")
}

func TestPauseIsFiledWithItsEntries(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	s := f.session(t, ann, "")
	run := domain.Run{ID: "r1", SessionID: s.ID, OwnerID: ann.User.ID, Status: domain.RunRunning, CreatedAt: t0, UpdatedAt: t0}
	if err := f.runs.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	approval := domain.Approval{ID: "a1", SessionID: s.ID, RunID: "r1", OwnerID: ann.User.ID, ToolCallID: "c1", ToolName: "t", CreatedAt: t0}
	_, err := f.svc.AppendWith(ctx, s.ID, []domain.Entry{toolCall("c1", "r1")}, func(tx ports.SessionTx) error {
		return tx.FileApprovals(ctx, []domain.Approval{approval}, run, domain.PauseState{Turn: 1})
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := f.runs.FindRun(ctx, "r1"); got.Status != domain.RunInterrupted {
		t.Errorf("run status = %s", got.Status)
	}
	// Ending the pause: one caller wins.
	now := t0
	ended := run
	ended.Status, ended.EndedAt = domain.RunCancelled, &now
	for i, want := range []bool{true, false} {
		var won bool
		if _, err := f.svc.AppendWith(ctx, s.ID, nil, func(tx ports.SessionTx) (err error) {
			won, err = tx.EndPause(ctx, ended)
			return err
		}); err != nil || won != want {
			t.Errorf("end %d: won %v, %v", i, won, err)
		}
	}
}

func TestBranchMovesTheActivePath(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	s := f.session(t, ann, "")
	u := f.appendAll(t, s.ID, userMsg("what is 2+2?", "r1"))[0]
	a1 := f.appendAll(t, s.ID, reply("5", "r1", &domain.Usage{InputTokens: 7, TotalTokens: 7}))[0]

	_, err := f.svc.Branch(ctx, bob, s.ID, u.ID)
	wantErr(t, err, errs.NotFound, "")
	_, err = f.svc.Branch(ctx, ann, "missing", u.ID)
	wantErr(t, err, errs.NotFound, "")
	_, err = f.svc.Branch(ctx, ann, s.ID, "nope")
	wantErr(t, err, errs.Validation, "entry_id")

	f.clock.Advance(time.Second)
	got, err := f.svc.Branch(ctx, ann, s.ID, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.LastSeq != 3 || got.TipID == a1.ID || !got.UpdatedAt.Equal(f.clock.Now()) {
		t.Fatalf("after branch = %+v", got)
	}
	// The totals follow the new branch: the answer left the context, its
	// call still counts for the session.
	if got.Totals.ActiveChars != int64(len(u.Item)) || got.Totals.AnchorSeq != 0 || got.Totals.SessionInputTokens != 7 {
		t.Errorf("totals after branch = %+v", got.Totals)
	}
	// The leaf is not a place to continue from.
	_, err = f.svc.Branch(ctx, ann, s.ID, got.TipID)
	wantErr(t, err, errs.Validation, "entry_id")

	a2 := f.appendAll(t, s.ID, reply("4", "r2", nil))[0]
	if a2.ParentID != got.TipID {
		t.Errorf("the next append continues from %q, want the leaf", a2.ParentID)
	}
	list, err := f.svc.Messages(ctx, ann, s.ID, sessionsPage(0, ""))
	if err != nil {
		t.Fatal(err)
	}
	on := map[string]bool{}
	for _, l := range list {
		on[l.Meta.ID] = l.OnPath
	}
	if len(list) != 3 || !on[u.ID] || on[a1.ID] || !on[a2.ID] {
		t.Errorf("listed %v", on)
	}
}
