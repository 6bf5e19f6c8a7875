package sessions_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/sessions"
	"github.com/agents-server/agents-server/ports"
)

func TestHistoryIsTheActiveBranchTheModelSees(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	s := f.session(t, ann, "")
	u := f.appendAll(t, s.ID, userMsg("q", "r1"))[0]
	f.appendAll(t, s.ID, reply("abandoned", "r1", nil))
	if _, err := f.svc.Branch(ctx, ann, s.ID, u.ID); err != nil {
		t.Fatal(err)
	}
	kept := f.appendAll(t, s.ID, note("for people"), reply("kept", "r2", nil),
		domain.Entry{Kind: domain.KindCompaction, Checkpoint: &domain.Checkpoint{Summary: "so far"}},
		update(u.ID, "", "title"))
	// A compacted entry on the path is folded away.
	sess, _ := f.svc.Get(ctx, ann, s.ID)
	err := f.store.WriteSession(ctx, s.ID, func(tx ports.SessionTx) error {
		c := domain.Entry{ID: "gone", RowID: "row-gone", ParentID: sess.TipID, Kind: domain.KindItem, Seq: sess.LastSeq + 1,
			Compacted: true, Item: domain.TextMessage("user", "input_text", "folded"), CreatedAt: t0}
		if err := tx.InsertEntries(ctx, []domain.Entry{c}, []domain.EntryMeta{domain.MetaOf(c, "")}); err != nil {
			return err
		}
		return tx.SaveState(ctx, c.ID, c.Seq, sess.Totals, t0)
	})
	if err != nil {
		t.Fatal(err)
	}

	h, err := f.svc.History(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range h {
		got = append(got, e.ID)
	}
	want := []string{u.ID, kept[1].ID, kept[2].ID}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Fatalf("history = %v, want %v (path, model-visible, uncompacted)", got, want)
	}
	input := sessions.ModelInput(append(h, domain.Entry{Kind: domain.KindItem}, domain.Entry{Kind: domain.KindCompaction}))
	// The summary leads: it stands for what came before the kept entries.
	if len(input) != 3 || string(input[1]) != string(u.Item) {
		t.Fatalf("model input = %s", input)
	}
	var summary struct {
		Role    string `json:"role"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := json.Unmarshal(input[0], &summary); err != nil || summary.Role != "system" ||
		summary.Content[0].Text != "Summary of the earlier conversation:\nso far" {
		t.Errorf("the checkpoint became %s", input[0])
	}
	_, err = f.svc.History(ctx, "missing")
	wantErr(t, err, errs.NotFound, "")
}

func TestRunContextPlanningAndTitle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	s := f.session(t, ann, "")
	_, err := f.svc.BeginRun(ctx, f.run(s.ID, "r0", ""), nil, nil)
	wantErr(t, err, errs.Internal, "")
	plan := true
	f.clock.Advance(time.Minute)
	planning := f.beginRun(t, s.ID, "r1", "agent", &plan, userMsg("plan it", "r1"))
	got, _ := f.svc.Get(ctx, ann, s.ID)
	if !planning || got.AgentConfigID != "agent" || !got.Planning || !got.UpdatedAt.Equal(f.clock.Now()) || got.LastSeq != 1 {
		t.Fatalf("after a planning run began: %v, %+v", planning, got)
	}
	if r, err := f.runs.FindRun(ctx, "r1"); err != nil || r.Status != domain.RunRunning {
		t.Fatalf("run row = %+v, %v", r, err)
	}
	// r1 ends before the next run begins: a running run holds the session.
	done := f.run(s.ID, "r1", "agent")
	done.Status = domain.RunCompleted
	if err := f.runs.UpdateRun(ctx, done); err != nil {
		t.Fatal(err)
	}
	if planning = f.beginRun(t, s.ID, "r2", "other", nil); !planning {
		t.Error("a nil plan left planning")
	}
	if got, _ = f.svc.Get(ctx, ann, s.ID); !got.Planning || got.AgentConfigID != "other" {
		t.Errorf("a nil plan changed planning: %+v", got)
	}
	// A run that cannot be filed files nothing: no message, no agent change.
	off := false
	_, err = f.svc.BeginRun(ctx, f.run(s.ID, "r1", "third"), &off, []domain.Entry{userMsg("lost", "r1")})
	wantErr(t, err, errs.Conflict, "")
	if after, _ := f.svc.Get(ctx, ann, s.ID); after.LastSeq != got.LastSeq || after.AgentConfigID != "other" || !after.Planning {
		t.Errorf("a refused begin changed the session: %+v", after)
	}
	_, err = f.svc.BeginRun(ctx, f.run("missing", "r9", "agent"), nil, nil)
	wantErr(t, err, errs.NotFound, "")
	// The end: the note and the row's status together.
	ended := f.run(s.ID, "r1", "agent")
	ended.Status, ended.ErrorCode = domain.RunError, "upstream"
	if err := f.svc.EndRun(ctx, ended, []domain.Entry{note("Run failed")}, nil, nil); err != nil {
		t.Fatal(err)
	}
	if r, _ := f.runs.FindRun(ctx, "r1"); r.Status != domain.RunError || r.ErrorCode != "upstream" {
		t.Errorf("ended row = %+v", r)
	}
	if after, _ := f.svc.Get(ctx, ann, s.ID); after.LastSeq != got.LastSeq+1 {
		t.Errorf("the note was not filed: last seq %d, want %d", after.LastSeq, got.LastSeq+1)
	}
	missing := f.run(s.ID, "r-none", "agent")
	wantErr(t, f.svc.EndRun(ctx, missing, []domain.Entry{note("lost")}, nil, nil), errs.NotFound, "")
	if after, _ := f.svc.Get(ctx, ann, s.ID); after.LastSeq != got.LastSeq+1 {
		t.Error("an end that could not be filed kept its note")
	}
	if err := f.svc.LeavePlanning(ctx, s.ID); err != nil {
		t.Fatal(err)
	}
	if got, _ = f.svc.Get(ctx, ann, s.ID); got.Planning {
		t.Error("still planning")
	}
	wantErr(t, f.svc.LeavePlanning(ctx, "missing"), errs.NotFound, "")

	if set, err := f.svc.SetTitle(ctx, s.ID, "A title"); !set || err != nil {
		t.Fatalf("first title = %v, %v", set, err)
	}
	if set, _ := f.svc.SetTitle(ctx, s.ID, "Another"); set {
		t.Error("a second title overwrote the first")
	}
	if got, _ = f.svc.Get(ctx, ann, s.ID); got.Name != "A title" {
		t.Errorf("name = %q", got.Name)
	}
	_, err = f.svc.SetTitle(ctx, "missing", "x")
	wantErr(t, err, errs.NotFound, "")
}

func TestRunsJoinTheWalkWithTheRows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	s := f.session(t, ann, "")
	u := f.appendAll(t, s.ID, userMsg("what is 2+2?", "r1"))[0]
	f.clock.Advance(time.Second)
	f.appendAll(t, s.ID, reply("5", "r1", nil), reply("(sorry)", "r1", nil))
	f.clock.Advance(time.Second)
	if _, err := f.svc.Branch(ctx, ann, s.ID, u.ID); err != nil {
		t.Fatal(err)
	}
	// A regenerate: no input of its own, it answered the same question.
	f.appendAll(t, s.ID, reply("4", "r2", nil))
	ended := t0.Add(time.Minute)
	for _, r := range []domain.Run{
		{ID: "r1", SessionID: s.ID, OwnerID: ann.User.ID, Status: domain.RunCompleted, AgentConfigID: "a", CreatedAt: t0, UpdatedAt: t0, EndedAt: &ended},
		{ID: "r2", SessionID: s.ID, OwnerID: ann.User.ID, Status: domain.RunError, ErrorCode: "upstream", CreatedAt: t0.Add(2 * time.Second), UpdatedAt: t0},
		// A run that wrote nothing, started between the two.
		{ID: "r0", SessionID: s.ID, OwnerID: ann.User.ID, Status: domain.RunError, CreatedAt: t0.Add(time.Second), UpdatedAt: t0.Add(time.Second)},
	} {
		if err := f.runs.CreateRun(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	runs, err := f.svc.Runs(ctx, ann, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 3 || runs[0].RunID != "r1" || runs[1].RunID != "r0" || runs[2].RunID != "r2" {
		t.Fatalf("runs = %+v, want start order", runs)
	}
	r1, r0, r2 := runs[0], runs[1], runs[2]
	if r1.Question != "what is 2+2?" || r1.Entries != 3 || !r1.OnPath || r1.Status != domain.RunCompleted || r1.AgentConfigID != "a" ||
		r1.EndedAt == nil || !r1.StartedAt.Equal(t0) || !r1.LastAt.Equal(t0.Add(time.Second)) {
		t.Errorf("r1 = %+v", r1)
	}
	if r2.Question != "what is 2+2?" || r2.Entries != 1 || !r2.OnPath || r2.ErrorCode != "upstream" {
		t.Errorf("r2 (the regenerate) = %+v", r2)
	}
	if r0.Entries != 0 || r0.Question != "" || r0.OnPath || r0.Status != domain.RunError {
		t.Errorf("r0 (wrote nothing) = %+v", r0)
	}
	// Switching back puts r2 off the path.
	if _, err := f.svc.Branch(ctx, ann, s.ID, u.ID); err != nil {
		t.Fatal(err)
	}
	if runs, _ := f.svc.Runs(ctx, ann, s.ID); runs[2].OnPath || !runs[0].OnPath {
		t.Errorf("after branching to the question: %+v", runs)
	}
	_, err = f.svc.Runs(ctx, bob, s.ID)
	wantErr(t, err, errs.NotFound, "")

	// A run whose entries descend from no user message has no question.
	lone := f.session(t, ann, "")
	f.appendAll(t, lone.ID, note("system"), reply("unasked", "r9", nil))
	if runs, err := f.svc.Runs(ctx, ann, lone.ID); err != nil || len(runs) != 1 || runs[0].Question != "" || runs[0].Status != "" {
		t.Errorf("an unasked run = %+v, %v", runs, err)
	}
}
