package models_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/models"
	"github.com/agents-server/agents-server/ports"
	"github.com/agents-server/agents-server/ports/porttest"
)

// progress records a pass's progress reports as "phase: detail".
type progress []string

func (p *progress) report(phase, detail string) { *p = append(*p, phase+": "+detail) }

func TestFoldSummarizesThePrefixUnderACheckpoint(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := t.Context()
	ep := f.endpoint(t)
	for _, c := range []struct {
		name                   string
		compaction             domain.AgentCompaction
		wantModel, wantPrompts string
	}{
		{name: "the agent's model and the default prompt", compaction: domain.AgentCompaction{Window: 2},
			wantModel: "m", wantPrompts: "You compress a conversation"},
		{name: "its own model and prompt", compaction: domain.AgentCompaction{Window: 2, Model: "small", Prompt: "Be brief."},
			wantModel: "small", wantPrompts: "Be brief."},
	} {
		a := f.agent(t, domain.AgentSpec{Compaction: c.compaction})
		s := f.session(t, a.ID, exchange(3)...)
		f.llm.Queue(porttest.Reply{Text: "they asked a, b and c"})
		var p progress
		var traced []string
		got, err := f.svc.Fold(ctx, models.FoldRequest{SessionID: s.ID, RunID: "run-1", Agent: a, Endpoint: ep, Force: true,
			Progress: p.report, Trace: func(model string, entries int) func(string, error) {
				traced = append(traced, model, string(rune('0'+entries)))
				return func(summary string, err error) { traced = append(traced, summary, errText(err)) }
			}})
		if err != nil || !got.Done || got.Before <= got.After || got.After <= 0 {
			t.Fatalf("%s: fold = %+v, %v", c.name, got, err)
		}
		reqs := f.llm.Requests()
		call := reqs[len(reqs)-1]
		if call.Model != c.wantModel || !strings.HasPrefix(call.Instructions, c.wantPrompts) || call.ConversationID != s.ID ||
			call.Endpoint.APIKey != "sk-p" {
			t.Fatalf("%s: summary call = %+v", c.name, call)
		}
		// The folded prefix (the first two exchanges) is the one input message.
		in := porttest.InputText(call)
		if !strings.HasPrefix(in, models.CompactPrefix) || !strings.Contains(in, "question b") || strings.Contains(in, "question c") {
			t.Fatalf("%s: summarizer input = %q", c.name, in)
		}
		if !slices.Equal(traced, []string{c.wantModel, "4", "they asked a, b and c", ""}) {
			t.Fatalf("%s: traced %q", c.name, traced)
		}
		if len(p) != 2 || p[0] != "started: " || !strings.HasPrefix(p[1], "finished: ~") {
			t.Fatalf("%s: progress %q", c.name, p)
		}
		// What the model sees now: the kept exchange and the checkpoint.
		hist, err := f.sessions.History(ctx, s.ID)
		if err != nil || len(hist) != 3 {
			t.Fatalf("%s: history = %+v, %v", c.name, hist, err)
		}
		cp := hist[2]
		if cp.Kind != domain.KindCompaction || cp.RunID != "run-1" || cp.Checkpoint.Summary != "they asked a, b and c" ||
			len(cp.Checkpoint.ExcludedIDs) != 4 || cp.Display == nil || cp.Display.Extra["folded"] != "4" {
			t.Fatalf("%s: checkpoint = %+v", c.name, cp)
		}
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestFoldFoldsNothingUnlessDueAndReportsTheSummarysFailure(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := t.Context()
	ep := f.endpoint(t)
	fold := func(a domain.Agent, s domain.Session, force bool) (models.Folded, progress, error) {
		var p progress
		got, err := f.svc.Fold(ctx, models.FoldRequest{SessionID: s.ID, Agent: a, Endpoint: ep, Force: force, Progress: p.report})
		return got, p, err
	}

	// Under the (default) threshold an unforced pass asks nothing.
	a := f.agent(t, domain.AgentSpec{Compaction: domain.AgentCompaction{Window: 2}})
	s := f.session(t, a.ID, exchange(3)...)
	if got, p, err := fold(a, s, false); err != nil || got.Done || len(p) != 0 || len(f.llm.Requests()) != 0 {
		t.Fatalf("below the threshold: %+v, %q, %v (%d calls)", got, p, err, len(f.llm.Requests()))
	}
	// Past a threshold of one token it folds.
	low := f.agent(t, domain.AgentSpec{Compaction: domain.AgentCompaction{Window: 2, ThresholdTokens: 1}})
	f.llm.Queue(porttest.Reply{Text: "summary"})
	if got, _, err := fold(low, s, false); err != nil || !got.Done {
		t.Fatalf("past the threshold: %+v, %v", got, err)
	}
	// A history within the kept window has nothing to fold, forced or not.
	short := f.session(t, a.ID, exchange(1)...)
	if got, p, err := fold(a, short, true); err != nil || got.Done || len(p) != 0 || len(f.llm.Requests()) != 1 {
		t.Fatalf("a short history: %+v, %q, %v", got, p, err)
	}
	// A session that is gone fails with the store's not_found.
	if _, _, err := fold(a, domain.Session{ID: "gone"}, false); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("a gone session: %v", err)
	}

	// The progress says why, in the vendor's words or the reason the answer
	// was unusable.
	for _, c := range []struct {
		name   string
		reply  porttest.Reply
		detail string
		says   string
	}{
		{"the model fails", porttest.Fail(ports.ModelUnavailable, "down"), "failed: ", "down"},
		{"the model says nothing", porttest.Reply{Reasoning: "hmm"}, "failed: ", "the compaction model returned no summary"},
	} {
		s := f.session(t, a.ID, exchange(3)...)
		f.llm.Queue(c.reply)
		got, p, err := fold(a, s, true)
		if err == nil || got.Done || len(p) != 2 || !strings.HasPrefix(p[1], "finished: "+c.detail) || !strings.Contains(p[1], c.says) ||
			!strings.Contains(err.Error(), c.says) {
			t.Fatalf("%s: %+v, %q, %v", c.name, got, p, err)
		}
		// Nothing was folded.
		if hist, err := f.sessions.History(ctx, s.ID); err != nil || len(hist) != 6 {
			t.Fatalf("%s: history has %d entries, %v", c.name, len(hist), err)
		}
	}
}

func TestFoldLosingToAnotherPassFoldsNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := t.Context()
	ep := f.endpoint(t)
	a := f.agent(t, domain.AgentSpec{Compaction: domain.AgentCompaction{Window: 2}})
	s := f.session(t, a.ID, exchange(3)...)
	hold := make(chan struct{})
	f.llm.Queue(porttest.Reply{Text: "first", Hold: hold}, porttest.Reply{Text: "second"})
	type result struct {
		got models.Folded
		p   progress
		err error
	}
	slow := make(chan result, 1)
	go func() {
		var r result
		r.got, r.err = f.svc.Fold(ctx, models.FoldRequest{SessionID: s.ID, Agent: a, Endpoint: ep, Force: true, Progress: r.p.report})
		slow <- r
	}()
	// The slow pass planned and is in its summary call: another folds first.
	waitCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := f.llm.Await(waitCtx, 1, nil); err != nil {
		t.Fatal(err)
	}
	if got, err := f.svc.Fold(ctx, models.FoldRequest{SessionID: s.ID, Agent: a, Endpoint: ep, Force: true,
		Progress: func(string, string) {}}); err != nil || !got.Done {
		t.Fatalf("the fast pass: %+v, %v", got, err)
	}
	close(hold)
	r := <-slow
	if r.err != nil || r.got.Done || len(r.p) != 2 || r.p[1] != "finished: another compaction got there first" {
		t.Fatalf("the slow pass: %+v, %q, %v", r.got, r.p, r.err)
	}
	hist, err := f.sessions.History(ctx, s.ID)
	if err != nil || len(hist) != 3 || hist[2].Checkpoint == nil || hist[2].Checkpoint.Summary != "second" {
		t.Fatalf("history = %+v, %v", hist, err)
	}
}

func TestCompactFoldsASessionOfTheCallersOnRequest(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := t.Context()
	on := domain.AgentCompaction{Enabled: true, Window: 2}
	a := f.agent(t, domain.AgentSpec{Compaction: on})
	s := f.session(t, a.ID, exchange(3)...)

	// Forced past the (default) threshold, the session's own agent folds it.
	f.llm.Queue(porttest.Reply{Text: "summary"})
	if done, err := f.svc.Compact(ctx, f.user, s.ID); err != nil || !done {
		t.Fatalf("compact: %v, %v", done, err)
	}
	// Again: what is left is within the window, so nothing folds.
	if done, err := f.svc.Compact(ctx, f.user, s.ID); err != nil || done {
		t.Fatalf("compact again: %v, %v", done, err)
	}

	off := f.agent(t, domain.AgentSpec{Name: "quiet"})
	noProvider := f.agent(t, domain.AgentSpec{ProviderID: "none", Compaction: on})
	gone := f.agent(t, domain.AgentSpec{Compaction: on})
	goneSession := f.session(t, gone.ID, exchange(3)...)
	if err := f.config.InConfigTx(ctx, func(tx ports.ConfigTx) error { return tx.DeleteAgent(ctx, gone.ID) }); err != nil {
		t.Fatal(err)
	}
	busy := f.session(t, a.ID, exchange(3)...)
	release, err := f.hub.Hold(busy.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	failing := f.session(t, a.ID, exchange(3)...)

	for _, c := range []struct {
		name  string
		who   domain.Principal
		id    string
		reply *porttest.Reply
		code  errs.Code
		says  string
	}{
		{name: "another member's session", who: f.other, id: s.ID, code: errs.NotFound},
		{name: "no session", who: f.user, id: "nope", code: errs.NotFound},
		{name: "a session without an agent", who: f.user, id: f.session(t, "", exchange(3)...).ID, code: errs.Validation,
			says: "the session has no agent"},
		{name: "its agent deleted", who: f.user, id: goneSession.ID, code: errs.Validation, says: "no longer exists"},
		{name: "compaction off", who: f.user, id: f.session(t, off.ID, exchange(3)...).ID, code: errs.Validation,
			says: `compaction is off for agent "quiet"`},
		{name: "no provider", who: f.user, id: f.session(t, noProvider.ID, exchange(3)...).ID, code: errs.Validation,
			says: "names no provider"},
		{name: "a run holds the session", who: f.user, id: busy.ID, code: errs.Conflict},
		{name: "the model fails", who: f.user, id: failing.ID, reply: ptr(porttest.Fail(ports.ModelRateLimited, "slow down")),
			code: errs.Unavailable, says: "the compaction model failed"},
	} {
		before := len(f.llm.Requests())
		if c.reply != nil {
			f.llm.Queue(*c.reply)
		}
		done, err := f.svc.Compact(ctx, c.who, c.id)
		if done || errs.CodeOf(err) != c.code || !strings.Contains(errs.MessageOf(err), c.says) {
			t.Errorf("%s: %v, %v; want %s saying %q", c.name, done, err, c.code, c.says)
		}
		if sent := len(f.llm.Requests()) - before; (sent == 1) != (c.reply != nil) {
			t.Errorf("%s: %d model calls", c.name, sent)
		}
	}
	// The model's failure keeps the vendor's error under the code.
	f.llm.Queue(porttest.Fail(ports.ModelAuth, "bad key"))
	_, err = f.svc.Compact(ctx, f.user, failing.ID)
	var me *ports.ModelError
	if !errors.As(err, &me) || me.Kind != ports.ModelAuth {
		t.Fatalf("the model's failure: %v", err)
	}
}

func ptr[T any](v T) *T { return &v }
