package runs

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/agents-server/agents-server/core/agents"
	"github.com/agents-server/agents-server/core/attachments"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/models"
	"github.com/agents-server/agents-server/core/sandboxtools"
	"github.com/agents-server/agents-server/core/sessions"
	"github.com/agents-server/agents-server/core/traces"
	"github.com/agents-server/agents-server/core/transcript"
	"github.com/agents-server/agents-server/ports"
)

// outcome is how a run ended.
type outcome struct {
	status  domain.RunStatus
	event   domain.Event
	output  string
	code    string
	msg     string
	paused  bool   // the run waits for a decision: no final event, the stream stays open
	lost    bool   // another replica's failover ended the run: nothing more is written or said
	pending string // the first call a paused run waits on
	partial string // the text a cancelled model call had streamed
	// turn is the last turn, for the end's transaction: one a cancel
	// stopped among its tool calls (the model's items and every call's
	// outcome, known or not), or a final answer nothing slow follows.
	turn []domain.Entry
	// profile is the context profile no turn filed yet: the end files it.
	profile heldProfile
	// spans are the loop's last spans: the end stores them.
	spans traces.Batch
}

// runCtx is one run's loop state.
type runCtx struct {
	lr         *liveRun
	tr         *traces.Recorder
	agent      *agents.Built
	agentSpan  *traces.OpenSpan
	planning   bool
	background bool   // a task's run: nobody reads it live, and it cannot spawn
	raceInput  string // what the non-blocking input guardrails check during the first call
	toolChoice string
	partial    strings.Builder         // the text the model call in flight has streamed
	checkpoint checkpoint              // when partial was last recorded
	ws         *sandboxtools.Workspace // the project's tree; nil without a project
	cleanups   []func()                // run by cleanUp, last first
	images     *attachments.Inliner    // reads each image once per run
	approved   map[string]bool         // the resumed turn's calls a person approved
	noted      map[string]bool         // the once-a-run notices that went out (settings dropped, a budget nearing)
	profile    heldProfile             // the context profile, until a session write files it
}

// onCleanUp has cleanUp run f when the run's loop ends.
func (rc *runCtx) onCleanUp(f func()) { rc.cleanups = append(rc.cleanups, f) }

// cleanUp closes what setUp opened, in reverse order.
func (rc *runCtx) cleanUp() {
	for i := len(rc.cleanups) - 1; i >= 0; i-- {
		rc.cleanups[i]()
	}
}

func (rc *runCtx) parentSpan() string {
	if rc.agentSpan == nil {
		return ""
	}
	return rc.agentSpan.ID()
}

func (s *Service) publish(lr *liveRun, typ string, payload any) {
	s.d.Hub.Publish(lr.run.ID, domain.NewEvent(typ, payload))
}

// execute runs the loop and records how it ended: the run stops taking
// commands, then the note and the run row are written, then the final
// event goes out, then the session slot is freed.
func (s *Service) execute(lr *liveRun) {
	defer s.wg.Done()
	_ = growStack(0)
	out := s.loop(lr)
	// The outcome is decided: from here a cancel or an injection is told
	// the run has ended (or paused), never accepted and then ignored.
	s.mu.Lock()
	delete(s.live, lr.run.ID)
	s.ending[lr.run.ID] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.ending, lr.run.ID)
		s.mu.Unlock()
	}()
	if out.lost {
		s.letGo(lr)
		return
	}
	if out.paused {
		out.spans.Alone()
		// No turn was recorded before the pause: the profile on its own.
		if p := out.profile.profile; p != nil {
			if err := s.d.Sessions.SaveContextProfile(context.WithoutCancel(lr.ctx), lr.run.SessionID, lr.run.ID, p); err != nil {
				s.d.Log.Warn("storing a run's context profile failed", "run_id", lr.run.ID, "err", err)
			}
		}
		// The pause is recorded; the session is free for new work (which
		// would supersede it), the stream stays open for the decision.
		// A task's status says it waits before anyone can decide (a
		// decision waits for the release below), so a resume's "working"
		// always comes after this "input_required".
		listeners(s.d.Listeners).paused(lr.run, out.pending)
		s.d.Hub.Release(lr.run.SessionID, lr.run.ID)
		lr.cancel()
		return
	}
	run := lr.run
	now := s.d.Clock.Now()
	run.Status, run.UpdatedAt, run.EndedAt = out.status, now, &now
	run.ErrorCode, run.ErrorMessage, run.FinalOutput = out.code, out.msg, out.output
	if info, ok := s.d.Hub.Info(run.ID); ok {
		// The end's spans are announced once stored, one event each, then
		// the final event.
		run.LastSeq = info.LastSeq + int64(out.spans.Len()) + 1
	}
	// The row and the session must say how the run ended even if the root
	// context is gone.
	notes := out.turn
	if out.partial != "" {
		// What the person saw stream stays, for them and for the model's
		// next turn, marked as cut short.
		notes = append(notes, transcript.CutShort(run.ID, out.partial, "The answer was cut short."))
	}
	if note, ok := transcript.NoteFor(run.ID, out.status, out.code, out.msg, out.event); ok {
		notes = append(notes, note)
	}
	// A deleted session took the run row with it: nothing is left to record.
	also := listeners(s.d.Listeners).Ending(context.WithoutCancel(lr.ctx), run, lr.taskSession == nil || *lr.taskSession)
	also = out.profile.with(context.WithoutCancel(lr.ctx), run.ID, also)
	endRun := func(also func(ports.SessionTx) error) error {
		ctx := context.WithoutCancel(lr.ctx)
		return s.d.Sessions.EndRun(ctx, run, notes, s.held(ctx, run.ID, nil), also)
	}
	switch s.recordEnd(run.ID, out.spans, endRun, also) {
	case endStopped:
		return // the server stops with the end unwritten: its restart ends the run
	case endTakenOver:
		s.letGo(lr)
		return
	}
	s.d.Hub.Publish(run.ID, out.event)
	s.d.Hub.Release(run.SessionID, run.ID)
	lr.cancel()
	listeners(s.d.Listeners).Ended(run)
}

// growStack grows a run's new goroutine's stack, once and while it is
// shallow, to what a run reaches (the model SDK's reflective encoding,
// SQLite): doubling it on the way copied an ever deeper stack four times.
//
//go:noinline
func growStack(i int) byte {
	var pad [64 << 10]byte // kept: indexed by what the compiler cannot see
	pad[i] = 1
	return pad[i/2]
}

// endRetryMax bounds the wait between two tries of a run's end.
const endRetryMax = 10 * time.Second

// How recording a run's end went.
type endRecord int

const (
	endWritten   endRecord = iota // written (or the run's row went with its session)
	endStopped                    // the server stopped first
	endTakenOver                  // another replica's failover ended the run (the fence)
)

// recordEnd writes a run's end (its spans in the same transaction when
// they fit) and, while the store fails, writes it again until it answers:
// until the end is written the run is not over anywhere — its final event
// waits, its conversation stays busy, its row says running — so no view
// contradicts another, and once the store is back every replica agrees.
// A run whose row went with its session has nothing to record. Only a
// stopping server gives up (its restart's sweep ends the run from its
// row), and the fence ends the tries when another replica took the run.
func (s *Service) recordEnd(runID string, spans traces.Batch, endRun func(also func(ports.SessionTx) error) error,
	also func(ports.SessionTx) error) endRecord {
	err := spans.In(endRun, also)
	for wait := time.Second; err != nil && !errs.Is(err, errs.NotFound); wait = min(2*wait, endRetryMax) {
		if errors.Is(err, errTakenOver) {
			return endTakenOver
		}
		s.d.Log.Error("recording a run's end failed; writing it again once the store answers", "run_id", runID, "err", err, "in", wait)
		select {
		case <-s.root.Done():
			return endStopped
		case <-time.After(wait):
		}
		err = endRun(also)
	}
	return endWritten
}

func (s *Service) failed(lr *liveRun, code, msg string) outcome {
	return outcome{status: domain.RunError, code: code, msg: msg,
		event: domain.NewEvent(domain.EventError, domain.ErrorPayload{RunID: lr.run.ID, Code: code, Message: msg})}
}

func (s *Service) cancelled(lr *liveRun, reason string) outcome {
	return outcome{status: domain.RunCancelled, code: reason,
		event: domain.NewEvent(domain.EventCancelled, domain.CancelledPayload{RunID: lr.run.ID, Reason: reason})}
}

// fail turns an error into the run's ending: a cancelled context is a
// cancellation, never a configuration or store error.
func (s *Service) fail(rc *runCtx, err error) outcome {
	lr := rc.lr
	if lr.ctx.Err() != nil {
		reason := "stopped"
		if why := lr.stopWhy.Load(); why != nil {
			reason = *why
		}
		if s.root.Err() != nil {
			reason = domain.CancelServerShutdown
		}
		out := s.cancelled(lr, reason)
		out.partial = rc.partial.String()
		return out
	}
	if errors.Is(err, errTakenOver) {
		return outcome{lost: true}
	}
	if errs.Is(err, errs.BudgetExceeded) {
		return s.failed(lr, domain.CodeBudgetExceeded, errs.MessageOf(err))
	}
	var ce *domain.ConfigError
	var me *ports.ModelError
	var trip *agents.GuardTrip
	var be *behaviorError
	switch {
	case errors.As(err, &trip):
		return outcome{status: domain.RunError, code: domain.CodeGuardrail, msg: trip.Error(),
			event: domain.NewEvent(domain.EventError, domain.ErrorPayload{RunID: lr.run.ID, Code: domain.CodeGuardrail,
				Message: trip.Error(), Guardrail: trip.Name, Stage: trip.Stage})}
	case errors.As(err, &be):
		return s.failed(lr, domain.CodeModelBehavior, be.msg)
	case errors.As(err, &ce):
		return s.failed(lr, domain.CodeConfigError, ce.Msg)
	case errors.As(err, &me):
		code, msg := models.Failure(me, rc.agent != nil && rc.agent.Agent.Compaction.Enabled)
		return s.failed(lr, code, msg)
	}
	s.d.Log.Error("run failed", "run_id", lr.run.ID, "err", err)
	return s.failed(lr, domain.CodePersistError, errs.MessageOf(err))
}

// loop drives the agent: model call, tool calls, turn recorded, again —
// until a final output, a limit, a cancellation or an error.
func (s *Service) loop(lr *liveRun) (out outcome) {
	rc := &runCtx{lr: lr, tr: s.newRecorder(lr), planning: lr.planning, raceInput: lr.run.Input, noted: map[string]bool{}}
	// After the cleanups (which finish the agent's span): what the end
	// writes in its transaction, before execute publishes the final event.
	defer func() { out.profile, out.spans = rc.profile, rc.tr.HandOver() }()
	defer rc.cleanUp()
	first, err := s.setUp(rc)
	if err != nil {
		return s.fail(rc, err)
	}
	history := lr.history
	if lr.history = nil; history == nil {
		if history, err = s.d.Sessions.History(lr.ctx, lr.run.SessionID); err != nil {
			return s.fail(rc, err)
		}
	}
	t := &turnState{input: sessions.ModelInput(history), resumed: lr.resume}
	for t.turn = first; ; t.turn++ {
		if out, done := s.step(rc, t); done {
			return out
		}
	}
}

// setUp readies a run for its first turn: the agent built and equipped
// with its project's workspace, its context profile made (held for the
// run's next session write), its span
// opened, the blocking input guardrails passed, the title started. It
// returns the turn to start at (a resumed run goes on from its pause).
// What it opens is closed by rc.cleanUp.
func (s *Service) setUp(rc *runCtx) (int, error) {
	lr, ctx := rc.lr, rc.lr.ctx
	agentID, first := lr.run.AgentConfigID, 1
	if lr.resume != nil {
		agentID, first, rc.raceInput, lr.model = lr.resume.state.AgentConfigID, lr.resume.state.Turn, "", lr.resume.state.Model
		lr.injected = lr.resume.state.Injected
		lr.mu.Lock()
		for _, q := range lr.resume.state.Queued {
			lr.queue = append(lr.queue, injection{queue: q.Queue, input: q.Input})
		}
		lr.mu.Unlock()
	}
	if lr.taskSession == nil {
		sess, err := s.d.Sessions.Find(ctx, lr.run.SessionID)
		if err != nil {
			return 0, err
		}
		lr.taskSession = new(sess.IsTaskSession())
	}
	if rc.background = *lr.taskSession; rc.background {
		rc.planning = false
	}
	var err error
	if a := lr.agent; a != nil && a.ID == agentID {
		// Start read the agent moments ago: it is not read again.
		rc.agent, err = s.builder.BuildFrom(ctx, *a)
	} else {
		rc.agent, err = s.builder.Build(ctx, agentID, lr.model)
	}
	if err != nil {
		return 0, err
	}
	if lr.run.ProjectID != "" && s.d.Sandboxes != nil {
		rc.ws = sandboxtools.New(s.d.Sandboxes, lr.run.ProjectID)
		rc.onCleanUp(rc.ws.Teardown)
	}
	if err := s.equip(ctx, rc, rc.agent); err != nil {
		return 0, err
	}
	rc.toolChoice = rc.agent.Agent.ModelSettings.ToolChoice
	if lr.resume != nil {
		rc.toolChoice = lr.resume.state.ToolChoice
	}
	rc.profile = heldProfile{profile: rc.agent.Profile(), at: s.d.Clock.Now()}
	s.startAgent(rc)
	rc.onCleanUp(func() { rc.agentSpan.Finish(nil) })
	// Blocking input guardrails gate every model call — the title's too: a
	// trip costs no tokens. The others race the first call. A resumed run's
	// input passed them before its pause.
	if lr.resume == nil {
		if err := rc.agent.Guard(domain.StageInput, lr.run.Input, true, rc.tr, rc.parentSpan()); err != nil {
			return 0, err
		}
	}
	if lr.titleIt {
		title := s.titleSession(rc)
		rc.onCleanUp(func() { waitTitle(lr, title) })
	}
	return first, nil
}

// turnState is where the loop stands between turns.
type turnState struct {
	turn    int
	input   []json.RawMessage // what the next model call is sent
	resumed *resumeData       // the paused turn to finish first, once
}

// step runs one turn: the model's (or the paused turn's decided calls),
// its tools, its entries and events. done says the run ended with out.
func (s *Service) step(rc *runCtx, t *turnState) (out outcome, done bool) {
	lr, ctx := rc.lr, rc.lr.ctx
	var resp ports.ModelResponse
	var calls []domain.Item
	rejected := map[string]string{}
	modelTurn := t.resumed == nil
	if t.resumed != nil {
		// The paused turn: its model items are already recorded (and in
		// the history); its calls run now, as decided.
		rc.approved = t.resumed.decided.Approved()
		calls, rejected, t.resumed = t.resumed.state.Calls, t.resumed.decided.Rejections(), nil
	} else {
		if lr.graceful.Load() {
			return s.cancelled(lr, "stopped"), true
		}
		more, err := s.consume(rc, domain.QueueSteer, domain.QueueNextTurn)
		if err != nil {
			return s.fail(rc, err), true
		}
		t.input = append(t.input, more...)
		if t.turn > rc.agent.MaxTurns() {
			return s.maxTurns(ctx, rc), true
		}
		// The turn boundary: a history past the threshold folds first (and
		// a workflow step that asks for it folds before its first turn).
		first := t.turn == 1 && lr.compactFirst
		lr.compactFirst = false
		if first && !rc.agent.Agent.Compaction.Enabled {
			s.d.Log.Info("a workflow step asked to compact first, but its agent has compaction off", "run_id", lr.run.ID,
				"agent", rc.agent.Agent.Name)
		}
		if _, err := s.compactTurn(rc, t, first); err != nil {
			return s.fail(rc, err), true
		}
		if s.stopIfFenced(lr) {
			return s.fail(rc, context.Canceled), true
		}
		if resp, err = s.generateFitting(rc, t); err != nil {
			return s.fail(rc, err), true
		}
		calls = s.announce(rc, resp.Output)
		if gated := s.gates(rc, calls); anyTrue(gated) {
			// The turn's spans are stored before its pause is announced.
			rc.tr.Flush()
			return s.pause(ctx, rc, t.turn, resp, calls, gated), true
		}
		t.input = append(t.input, resp.Output...)
	}
	if err := s.recordFlight(rc, modelTurn, resp, calls, rejected); err != nil {
		return s.fail(rc, err), true
	}
	if len(calls) > 0 && s.stopIfFenced(lr) {
		return s.fail(rc, context.Canceled), true
	}
	results, handoff, err := s.runTools(ctx, rc, calls, rejected)
	if err != nil {
		out := s.fail(rc, err)
		if out.status == domain.RunCancelled && results != nil {
			out.turn = s.stoppedTurn(rc, modelTurn, resp, results)
		}
		return out, true
	}
	if s.lastTurn(rc, modelTurn, calls, resp) {
		out := s.finalize(ctx, rc, models.FinalText(resp.Output), "")
		out.turn = transcript.Record(lr.run.ID, true, resp, nil)
		return out, true
	}
	if err := s.recordTurn(rc, modelTurn, resp, results); err != nil {
		out := s.fail(rc, err)
		if out.partial == "" && modelTurn {
			// The answer the store did not take goes with the run's end,
			// which is written once the store answers.
			out.partial = models.FinalText(resp.Output)
		}
		return out, true
	}
	for _, r := range results {
		t.input = append(t.input, domain.FunctionCallOutput(r.CallID, r.Output))
	}
	if handoff != nil {
		if err := s.handOff(rc, *handoff); err != nil {
			return s.fail(rc, err), true
		}
		if rc.agent.Agent.Behavior.HandoffInputFilter == domain.HandoffRemoveAllTools {
			t.input = sessions.WithoutTools(t.input)
		}
		return outcome{}, false
	}
	for _, r := range results {
		if rc.agent.StopsAt(r.Name) {
			return s.finalize(ctx, rc, r.Output, ""), true
		}
	}
	if len(calls) > 0 {
		rc.toolChoice = rc.agent.ChoiceAfterTools(rc.toolChoice)
		return outcome{}, false
	}
	// A final answer. Follow-up input opens a new exchange in this run.
	if more, err := s.consume(rc, domain.QueueSteer, domain.QueueNextTurn, domain.QueueFollowUp); err != nil {
		return s.fail(rc, err), true
	} else if len(more) > 0 && !lr.graceful.Load() {
		t.input = append(t.input, more...)
		t.turn = 0
		return outcome{}, false
	}
	return s.finalize(ctx, rc, models.FinalText(resp.Output), resp.Refusal), true
}

// lastTurn says a model turn's answer ends the run with nothing slow or
// written before its end (no calls, input waiting, refusal or schema
// miss): its entries go in the end's transaction, one write less.
func (s *Service) lastTurn(rc *runCtx, modelTurn bool, calls []domain.Item, resp ports.ModelResponse) bool {
	rc.lr.mu.Lock()
	waiting := len(rc.lr.queue) > 0
	rc.lr.mu.Unlock()
	return modelTurn && len(calls) == 0 && !waiting && resp.Refusal == "" &&
		(rc.agent.Schema == nil || rc.agent.Schema.Check(models.FinalText(resp.Output)) == nil)
}

// recordTurn appends a turn's entries and announces its tool results. A
// turn the model completed is recorded even if a cancel arrives now (a
// resumed turn's model items were recorded at its pause).
func (s *Service) recordTurn(rc *runCtx, modelTurn bool, resp ports.ModelResponse, results []transcript.Result) error {
	lr := rc.lr
	entries := transcript.Record(lr.run.ID, modelTurn, resp, results)
	ctx := context.WithoutCancel(lr.ctx)
	appendTurn := func(also func(ports.SessionTx) error) error {
		_, err := s.d.Sessions.AppendWith(ctx, lr.run.SessionID, entries, s.held(ctx, lr.run.ID, also))
		return err
	}
	// The turn's spans, and the profile if no turn filed it yet, go in the
	// turn's transaction.
	if err := rc.tr.Take().In(appendTurn, rc.profile.with(ctx, lr.run.ID, nil)); err != nil {
		return err
	}
	rc.profile = heldProfile{}
	if len(results) > 0 {
		// The calls are recorded: nothing is in flight. Should this write
		// fail, a restart finds their outputs in the conversation and
		// records nothing twice.
		if err := s.d.Runs.RecordCallsInFlight(context.WithoutCancel(lr.ctx), lr.run.ID, ""); err != nil {
			s.d.Log.Warn("clearing a run's calls in flight failed", "run_id", lr.run.ID, "err", err)
		}
	}
	for _, r := range results {
		p := domain.ToolResultPayload{RunID: lr.run.ID, ToolCallID: r.CallID, Output: r.Output, IsError: r.IsError}
		if r.Display != nil {
			p.Title, p.Summary, p.Renderer, p.Extra = r.Display.Title, r.Display.Summary, r.Display.Renderer, r.Display.Extra
		}
		s.publish(lr, domain.EventToolResult, p)
	}
	return nil
}

// waitTitle holds a run's end for its title — unless the run was cancelled:
// an owner's stop answers at once, and the title lands on the session
// anyway; a stop because the session or owner is going away (liveRun.stop)
// cancels the title call too, and waits for it to let go.
func waitTitle(lr *liveRun, done <-chan struct{}) {
	select {
	case <-done:
	case <-lr.ctx.Done():
		if lr.gone.Err() != nil {
			<-done // stopped with the run: wait until the call has let go
		}
	}
}

// startAgent opens the span of an agent's stretch and announces it.
func (s *Service) startAgent(rc *runCtx) {
	a := rc.agent.Agent
	rc.agentSpan = rc.tr.Span(domain.SpanAgent, a.Name, "").Meta("agent_config_id", a.ID).Meta("model", a.Model)
	s.publish(rc.lr, domain.EventAgentStart, domain.AgentStartPayload{RunID: rc.lr.run.ID, AgentName: a.Name, AgentConfigID: a.ID})
}

// handOff passes the run to another agent.
func (s *Service) handOff(rc *runCtx, to domain.Agent) error {
	from := rc.agent.Agent
	rc.tr.Span(domain.SpanHandoff, from.Name+" → "+to.Name, rc.parentSpan()).Meta("from", from.Name).Meta("to", to.Name).Zero(nil)
	s.publish(rc.lr, domain.EventHandoff, domain.HandoffPayload{RunID: rc.lr.run.ID, From: from.Name, To: to.Name, FromID: from.ID, ToID: to.ID})
	next, err := s.builder.Build(rc.lr.ctx, to.ID, "")
	if err != nil {
		return err
	}
	if err := s.equip(rc.lr.ctx, rc, next); err != nil {
		return err
	}
	rc.agentSpan.Finish(nil)
	rc.agent, rc.toolChoice = next, next.Agent.ModelSettings.ToolChoice
	s.startAgent(rc)
	return nil
}

// delta streams a fragment to watchers; deltas are never stored one by one.
// A fenced replica streams nothing more: a process waking from a stop
// finds buffered deltas of a run another replica may have taken over.
func (s *Service) delta(lr *liveRun, d ports.ModelDelta) {
	if s.stopIfFenced(lr) {
		return
	}
	switch d.Kind {
	case ports.DeltaText:
		s.publish(lr, domain.EventStep, domain.DeltaPayload{RunID: lr.run.ID, Delta: d.Text})
	case ports.DeltaReasoning:
		s.publish(lr, domain.EventReasoning, domain.DeltaPayload{RunID: lr.run.ID, Delta: d.Text})
	}
}

// announce publishes the turn's completed items — authoritative over their
// deltas — and returns its function calls, each marked with whether it
// waits for a person.
func (s *Service) announce(rc *runCtx, output []json.RawMessage) []domain.Item {
	lr := rc.lr
	var calls []domain.Item
	for _, raw := range output {
		it := domain.ParseItem(raw)
		switch it.Kind() {
		case domain.ItemMessage:
			s.publish(lr, domain.EventMessage, domain.TextPayload{RunID: lr.run.ID, Text: it.Text()})
		case domain.ItemReasoning:
			s.publish(lr, domain.EventReasoningItem, domain.TextPayload{RunID: lr.run.ID, Text: it.ReasoningText()})
		case domain.ItemFunctionCall:
			calls = append(calls, it)
		}
	}
	for i, gated := range s.gates(rc, calls) {
		c := calls[i]
		s.publish(lr, domain.EventToolCall, domain.ToolCallPayload{RunID: lr.run.ID, ToolCallID: c.CallID, ToolName: c.Name,
			Arguments: c.Arguments, NeedsApproval: gated})
	}
	return calls
}

// consume takes the queued injections of the given queues: each passes the
// blocking input guardrails, is recorded as a user message, and is returned
// as model input.
func (s *Service) consume(rc *runCtx, queues ...domain.QueueMode) ([]json.RawMessage, error) {
	lr := rc.lr
	lr.mu.Lock()
	var take []injection
	keep := lr.queue[:0]
	for _, in := range lr.queue {
		if slices.Contains(queues, in.queue) {
			take = append(take, in)
		} else {
			keep = append(keep, in)
		}
	}
	lr.queue = keep
	lr.mu.Unlock()
	var out []json.RawMessage
	for _, in := range take {
		if err := rc.agent.Guard(domain.StageInput, in.input, true, rc.tr, rc.parentSpan()); err != nil {
			return nil, err
		}
		e := userEntry(in.input, lr.run.ID)
		if _, err := s.d.Sessions.Append(context.WithoutCancel(lr.ctx), lr.run.SessionID, []domain.Entry{e}); err != nil {
			return nil, err
		}
		out = append(out, e.Item)
		s.publish(lr, domain.EventInjected, domain.InjectedPayload{RunID: lr.run.ID, Input: in.input, Index: lr.injected})
		lr.injected++
	}
	return out, nil
}

// newRecorder is the recorder of lr's spans, publishing each stored span
// on the run's stream.
func (s *Service) newRecorder(lr *liveRun) *traces.Recorder {
	return traces.NewRecorder(lr.ctx, s.d.Settings, traces.RecorderDeps{Store: s.d.Traces, Observer: s.d.Observer,
		Publish: func(p traces.SpanPayload) { s.publish(lr, domain.EventTraceSpan, p) }, IDs: s.d.IDs, Clock: s.d.Clock, Log: s.d.Log},
		lr.run.SessionID, lr.run.ID)
}
