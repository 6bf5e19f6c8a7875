package porttest_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
	"github.com/agents-server/agents-server/ports/porttest"
)

// epoch is when the stored rows of these tests happen.
var epoch = time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC)

// The promises of the run, approval, config and trace fakes that the
// runner's tests lean on: one winner of every compare-and-set, nothing
// left by a failed transaction.

func pausedRun(t *testing.T, s *porttest.RunStore, calls ...string) domain.Run {
	t.Helper()
	ctx := context.Background()
	r := domain.Run{ID: "run-" + calls[0], SessionID: "s", OwnerID: "u", Status: domain.RunRunning, CreatedAt: epoch}
	if err := s.CreateRun(ctx, r); err != nil {
		t.Fatal(err)
	}
	var approvals []domain.Approval
	for _, c := range calls {
		approvals = append(approvals, domain.Approval{ID: "a-" + c, SessionID: "s", RunID: r.ID, OwnerID: "u", ToolCallID: c, CreatedAt: epoch})
	}
	r.LastSeq = 7
	if err := s.FileApprovals(ctx, approvals, r, domain.PauseState{Turn: 3, Calls: []domain.Item{{CallID: calls[0]}}}); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestRunStoreCompareAndSets(t *testing.T) {
	ctx := context.Background()
	s := &porttest.RunStore{}
	r := pausedRun(t, s, "c1", "c2")
	if err := s.FileApprovals(ctx, nil, r, domain.PauseState{}); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("pausing a paused run: %v", err)
	}
	if got, _ := s.FindRun(ctx, r.ID); got.Status != domain.RunInterrupted || got.LastSeq != 7 {
		t.Fatalf("paused row = %+v", got)
	}

	// Two deciders of one approval: one wins.
	var wg sync.WaitGroup
	results := make([]error, 8)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, results[i] = s.DecideApproval(ctx, "a-c1", domain.ApprovalApproved, "", "", epoch, 0)
		}()
	}
	wg.Wait()
	won := 0
	for _, err := range results {
		switch {
		case err == nil:
			won++
		case errs.CodeOf(err) != errs.NotFound:
			t.Fatalf("a losing decision: %v", err)
		}
	}
	if won != 1 {
		t.Fatalf("%d decisions won", won)
	}
	all, err := s.DecideApproval(ctx, "a-c2", domain.ApprovalRejected, "once", "no", epoch, 0)
	if err != nil || len(all) != 2 || all[1].Status != domain.ApprovalRejected || all[1].Reason != "no" || all[1].DecidedAt == nil {
		t.Fatalf("decide = %+v, %v", all, err)
	}

	// Two resumers: one wins, and takes the state and the decisions along.
	type resumed struct {
		state   domain.PauseState
		decided []domain.Approval
		ok      bool
	}
	got := make([]resumed, 8)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, st, dec, ok, err := s.ResumeRun(ctx, r.ID, "", epoch)
			if err != nil {
				t.Error(err)
			}
			got[i] = resumed{st, dec, ok}
		}()
	}
	wg.Wait()
	won = 0
	for _, g := range got {
		if g.ok {
			won++
			if g.state.Turn != 3 || len(g.decided) != 2 {
				t.Fatalf("the winner got %+v", g)
			}
		}
	}
	if left := s.Approvals(); won != 1 || len(left) != 0 {
		t.Fatalf("%d resumes won, %d approvals left", won, len(left))
	}

	// Ending a pause: one winner, the approvals go with it.
	p := pausedRun(t, s, "c3")
	p.Status, p.ErrorCode = domain.RunCancelled, "stopped"
	if ok, err := s.EndPause(ctx, p); !ok || err != nil {
		t.Fatalf("end = %v, %v", ok, err)
	}
	if ok, err := s.EndPause(ctx, p); ok || err != nil {
		t.Fatalf("a second end = %v, %v", ok, err)
	}
	if _, _, _, ok, _ := s.ResumeRun(ctx, p.ID, "", epoch); ok {
		t.Fatal("an ended pause resumed")
	}
	if got, _ := s.FindRun(ctx, p.ID); got.Status != domain.RunCancelled || got.ErrorCode != "stopped" || len(s.Approvals()) != 0 {
		t.Fatalf("ended row = %+v", got)
	}
}

func TestRunStoreRefusals(t *testing.T) {
	ctx := context.Background()
	s := &porttest.RunStore{}
	r := pausedRun(t, s, "c1")
	if err := s.CreateRun(ctx, r); errs.CodeOf(err) != errs.Conflict {
		t.Fatalf("a taken id: %v", err)
	}
	if err := s.UpdateRun(ctx, domain.Run{ID: "nope"}); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("update a missing run: %v", err)
	}
	if _, err := s.PauseState(ctx, "nope"); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("state of a missing run: %v", err)
	}
	// A call filed twice is a conflict, and nothing of the failed filing stays.
	other := domain.Run{ID: "r2", SessionID: "s", Status: domain.RunRunning}
	if err := s.CreateRun(ctx, other); err != nil {
		t.Fatal(err)
	}
	dup := []domain.Approval{{ID: "x1", RunID: "r2", ToolCallID: "k"}, {ID: "x2", RunID: "r2", ToolCallID: "k"}}
	if err := s.FileApprovals(ctx, dup, other, domain.PauseState{}); errs.CodeOf(err) != errs.Conflict {
		t.Fatalf("a call filed twice: %v", err)
	}
	if got, _ := s.FindRun(ctx, "r2"); got.Status != domain.RunRunning || len(s.Approvals()) != 1 {
		t.Fatalf("a failed filing left %+v, %d approvals", got, len(s.Approvals()))
	}
	cancelled, stop := context.WithCancel(ctx)
	stop()
	if _, err := s.FindRun(cancelled, r.ID); !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled context: %v", err)
	}
	failed, err := s.FailOrphanedRuns(ctx, ports.Orphans{Self: "me", AliveSince: epoch, Code: "server_restarted", Message: "gone", At: epoch})
	if err != nil || len(failed) != 1 || failed[0].ID != "r2" {
		t.Fatalf("failed %+v, %v", failed, err)
	}
	if got, _ := s.FindRun(ctx, "r2"); got.Status != domain.RunError || got.EndedAt == nil {
		t.Fatalf("failed row = %+v", got)
	}
}

func TestConfigStoreTransactions(t *testing.T) {
	ctx := context.Background()
	s := &porttest.ConfigStore{}
	own := domain.Ownership{Scope: domain.ScopePrivate, OwnerID: "u"}
	agent := domain.Agent{ID: "a1", Ownership: own, AgentSpec: domain.AgentSpec{Name: "Helper", Tools: []string{"x"}}}
	boom := errors.New("boom")
	err := s.InConfigTx(ctx, func(tx ports.ConfigTx) error {
		if err := tx.InsertAgent(ctx, agent); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatal(err)
	}
	if _, err := s.FindAgent(ctx, "a1"); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("a rolled back insert is visible: %v", err)
	}
	err = s.InConfigTx(ctx, func(tx ports.ConfigTx) error {
		return errors.Join(tx.InsertAgent(ctx, agent),
			tx.InsertMemory(ctx, domain.Memory{ID: "m1", AgentID: "a1", Key: "k"}),
			tx.InsertGuardrail(ctx, domain.Guardrail{ID: "g1", Name: "Strict"}))
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		fn   func(tx ports.ConfigTx) error
		code errs.Code
	}{
		{"an agent name taken in one owner's privates, but for case", func(tx ports.ConfigTx) error {
			return tx.InsertAgent(ctx, domain.Agent{ID: "a2", Ownership: own, AgentSpec: domain.AgentSpec{Name: "helper"}})
		}, errs.Conflict},
		{"a guardrail name taken", func(tx ports.ConfigTx) error {
			return tx.InsertGuardrail(ctx, domain.Guardrail{ID: "g2", Name: "STRICT"})
		}, errs.Conflict},
		{"a memory key taken in its scope", func(tx ports.ConfigTx) error {
			return tx.InsertMemory(ctx, domain.Memory{ID: "m2", AgentID: "a1", Key: "K"})
		}, errs.Conflict},
		{"a memory of no agent", func(tx ports.ConfigTx) error {
			return tx.InsertMemory(ctx, domain.Memory{ID: "m3", AgentID: "nope", Key: "k"})
		}, errs.Conflict},
		{"an update of nothing", func(tx ports.ConfigTx) error {
			return tx.UpdateProvider(ctx, domain.Provider{ID: "nope"})
		}, errs.NotFound},
	} {
		if err := s.InConfigTx(ctx, c.fn); errs.CodeOf(err) != c.code {
			t.Errorf("%s: %v, want %s", c.name, err, c.code)
		}
	}
	// Another owner may use the name; a returned agent is a copy.
	if err := s.InConfigTx(ctx, func(tx ports.ConfigTx) error {
		return tx.InsertAgent(ctx, domain.Agent{ID: "a3", Ownership: domain.Ownership{Scope: domain.ScopePrivate, OwnerID: "v"},
			AgentSpec: domain.AgentSpec{Name: "Helper"}})
	}); err != nil {
		t.Fatal(err)
	}
	a, _ := s.FindAgent(ctx, "a1")
	a.Tools[0] = "changed"
	if again, _ := s.FindAgent(ctx, "a1"); again.Tools[0] != "x" {
		t.Fatal("a caller changed a stored agent")
	}
	if g, err := s.FindGuardrailByName(ctx, "strict"); err != nil || g.ID != "g1" {
		t.Fatalf("by name: %+v, %v", g, err)
	}
	// Deleting an agent takes its memories along.
	if err := s.InConfigTx(ctx, func(tx ports.ConfigTx) error { return tx.DeleteAgent(ctx, "a1") }); err != nil {
		t.Fatal(err)
	}
	if n, _ := s.CountMemories(ctx, "a1"); n != 0 {
		t.Fatalf("%d memories outlived their agent", n)
	}
}

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

func TestLLMScripts(t *testing.T) {
	ctx := context.Background()
	m := &porttest.LLM{}
	m.Route(porttest.ForModel("b"), porttest.Reply{Text: "from b"})
	m.Queue(porttest.Reply{Reasoning: "hm", Text: "two words", Calls: []porttest.Call{{Name: "f"}}},
		porttest.Fail(ports.ModelRateLimited, "slow"))
	var deltas []ports.ModelDelta
	resp, err := m.Generate(ctx, ports.ModelRequest{Model: "a"}, func(d ports.ModelDelta) { deltas = append(deltas, d) })
	if err != nil || len(resp.Output) != 3 || len(deltas) != 4 || deltas[3].Kind != ports.DeltaArguments || deltas[3].Text != "{}" {
		t.Fatalf("resp %+v, deltas %+v, %v", resp, deltas, err)
	}
	if resp, err := m.Generate(ctx, ports.ModelRequest{Model: "b"}, nil); err != nil || resp.Model != "b" {
		t.Fatalf("routed: %+v, %v", resp, err)
	}
	_, err = m.Generate(ctx, ports.ModelRequest{Model: "a", Endpoint: ports.ProviderEndpoint{Name: "p"}}, nil)
	var me *ports.ModelError
	if !errors.As(err, &me) || me.Kind != ports.ModelRateLimited || me.Status != 429 || me.Provider != "p" {
		t.Fatalf("scripted failure: %v", err)
	}
	if _, err := m.Generate(ctx, ports.ModelRequest{Model: "a"}, nil); !errors.As(err, &me) || me.Kind != ports.ModelInvalid {
		t.Fatalf("an unscripted call: %v", err)
	}
	m.Queue(porttest.Reply{Block: true})
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error)
	go func() {
		_, err := m.Generate(cctx, ports.ModelRequest{Model: "a"}, nil)
		done <- err
	}()
	if _, err := m.Await(ctx, 5, nil); err != nil {
		t.Fatal(err)
	}
	if m.Open() != 1 {
		t.Fatalf("%d calls open", m.Open())
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) || m.Open() != 0 {
		t.Fatalf("a blocked call: %v (%d open)", err, m.Open())
	}
	if n := len(m.Requests()); n != 5 {
		t.Fatalf("%d requests recorded", n)
	}
}

// The fake counts live runs as the stores do: running, or paused with
// every call decided; the decision that would resume past the cap is
// refused with nothing recorded.
func TestRunStoreCountsLiveRuns(t *testing.T) {
	ctx := context.Background()
	s := &porttest.RunStore{}
	count := func() int {
		t.Helper()
		n, err := s.CountLiveRuns(ctx, "u")
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	r := pausedRun(t, s, "c1", "c2")
	if err := s.CreateRun(ctx, domain.Run{ID: "busy", SessionID: "s2", OwnerID: "u", Status: domain.RunRunning}); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateRun(ctx, domain.Run{ID: "theirs", SessionID: "s3", OwnerID: "v", Status: domain.RunRunning}); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 1 {
		t.Fatalf("%d live with one running and one waiting", n)
	}
	if _, err := s.DecideApproval(ctx, "a-c1", domain.ApprovalApproved, "", "", epoch, 1); err != nil {
		t.Fatalf("a decision that resumes nothing: %v", err)
	}
	if _, err := s.DecideApproval(ctx, "a-c2", domain.ApprovalApproved, "", "", epoch, 1); errs.CodeOf(err) != errs.RateLimited {
		t.Fatalf("a resume past the cap: %v", err)
	}
	if a, _ := s.FindApproval(ctx, "a-c2"); a.Status != domain.ApprovalPending {
		t.Fatalf("the refused decision was recorded: %+v", a)
	}
	if _, err := s.DecideApproval(ctx, "a-c2", domain.ApprovalApproved, "", "", epoch, 2); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 2 {
		t.Fatalf("%d live once %s resumes", n, r.ID)
	}
}
