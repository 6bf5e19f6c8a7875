package runs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/sessions"
	"github.com/agents-server/agents-server/ports"
)

// outcome is how a run ended.
type outcome struct {
	status domain.RunStatus
	event  domain.Event
	output string
	code   string
	msg    string
}

func (s *Service) publish(lr *liveRun, typ string, payload any) {
	s.d.Hub.Publish(lr.run.ID, domain.NewEvent(typ, payload))
}

// execute runs the loop and records how it ended: the run row first, then
// the final event, then the session slot is freed.
func (s *Service) execute(lr *liveRun) {
	defer s.wg.Done()
	out := s.loop(lr)
	run := lr.run
	now := s.d.Clock.Now()
	run.Status, run.UpdatedAt, run.EndedAt = out.status, now, &now
	run.ErrorCode, run.ErrorMessage, run.FinalOutput = out.code, out.msg, out.output
	if info, ok := s.d.Hub.Info(run.ID); ok {
		run.LastSeq = info.LastSeq + 1 // the final event below
	}
	// The row must say how the run ended even if the root context is gone.
	if err := s.d.Runs.UpdateRun(context.WithoutCancel(lr.ctx), run); err != nil {
		s.d.Log.Error("recording a run's end failed", "run_id", run.ID, "err", err)
	}
	s.d.Hub.Publish(run.ID, out.event)
	s.mu.Lock()
	delete(s.live, run.ID)
	s.mu.Unlock()
	s.d.Hub.Release(run.SessionID, run.ID)
	lr.cancel()
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
func (s *Service) fail(lr *liveRun, err error) outcome {
	if lr.ctx.Err() != nil {
		reason := "stopped"
		if s.root.Err() != nil {
			reason = "server_shutdown"
		}
		return s.cancelled(lr, reason)
	}
	var ce *configError
	var me *ports.ModelError
	switch {
	case errors.As(err, &ce):
		return s.failed(lr, domain.CodeConfigError, ce.msg)
	case errors.As(err, &me):
		code := domain.CodeModelError
		if me.Kind == ports.ModelAuth {
			code = domain.CodeConfigError
		}
		return s.failed(lr, code, me.Error())
	}
	s.d.Log.Error("run failed", "run_id", lr.run.ID, "err", err)
	return s.failed(lr, domain.CodePersistError, errs.MessageOf(err))
}

// loop drives the agent: model call, tool calls, turn recorded, again —
// until a final output, a limit, a cancellation or an error.
func (s *Service) loop(lr *liveRun) outcome {
	ctx := lr.ctx
	agent, err := s.build(ctx, lr.run.AgentConfigID)
	if err != nil {
		return s.fail(lr, err)
	}
	history, err := s.d.Sessions.History(ctx, lr.run.SessionID)
	if err != nil {
		return s.fail(lr, err)
	}
	input := sessions.ModelInput(history)
	s.publish(lr, domain.EventAgentStart, domain.AgentStartPayload{RunID: lr.run.ID, AgentName: agent.agent.Name, AgentConfigID: agent.agent.ID})
	for turn := 1; ; turn++ {
		if lr.graceful.Load() {
			return s.cancelled(lr, "stopped")
		}
		more, err := s.consume(lr, domain.QueueSteer, domain.QueueNextTurn)
		if err != nil {
			return s.fail(lr, err)
		}
		input = append(input, more...)
		if turn > agent.maxTurns() {
			return s.failed(lr, domain.CodeMaxTurnsExceeded, fmt.Sprintf("the agent used all %d turns without a final answer", agent.maxTurns()))
		}
		resp, err := s.d.LLM.Generate(ctx, s.request(agent, input), func(d ports.ModelDelta) { s.delta(lr, d) })
		if err != nil {
			return s.fail(lr, err)
		}
		calls := s.announce(lr, resp.Output)
		results, handoff, stop := s.runTools(ctx, lr, agent, calls)
		if stop != nil {
			return *stop
		}
		entries := turnEntries(lr.run.ID, resp, results)
		// A turn the model completed is recorded even if a cancel arrives now.
		if _, err := s.d.Sessions.Append(context.WithoutCancel(ctx), lr.run.SessionID, entries); err != nil {
			return s.fail(lr, err)
		}
		for _, r := range results {
			s.publish(lr, domain.EventToolResult, domain.ToolResultPayload{RunID: lr.run.ID, ToolCallID: r.callID,
				Output: r.output, Title: r.title, IsError: r.isError})
		}
		input = append(input, resp.Output...)
		for _, r := range results {
			input = append(input, domain.FunctionCallOutput(r.callID, r.output))
		}
		if handoff != nil {
			s.publish(lr, domain.EventHandoff, domain.HandoffPayload{RunID: lr.run.ID, From: agent.agent.Name, To: handoff.Name,
				FromID: agent.agent.ID, ToID: handoff.ID})
			if agent, err = s.build(ctx, handoff.ID); err != nil {
				return s.fail(lr, err)
			}
			s.publish(lr, domain.EventAgentStart, domain.AgentStartPayload{RunID: lr.run.ID, AgentName: agent.agent.Name, AgentConfigID: agent.agent.ID})
			continue
		}
		if len(calls) > 0 {
			continue
		}
		// A final answer. Follow-up input opens a new exchange in this run.
		more, err = s.consume(lr, domain.QueueSteer, domain.QueueNextTurn, domain.QueueFollowUp)
		if err != nil {
			return s.fail(lr, err)
		}
		if len(more) > 0 && !lr.graceful.Load() {
			input = append(input, more...)
			turn = 0
			continue
		}
		text := finalText(resp.Output)
		return outcome{status: domain.RunCompleted, output: text,
			event: domain.NewEvent(domain.EventOutput, domain.OutputPayload{RunID: lr.run.ID, FinalOutput: text})}
	}
}

func (s *Service) request(agent *builtAgent, input []json.RawMessage) ports.ModelRequest {
	a := agent.agent
	return ports.ModelRequest{Endpoint: agent.endpoint, Model: a.Model, Instructions: agent.instructions, Input: input,
		Tools: agent.tools, ToolChoice: a.ModelSettings.ToolChoice, Settings: a.ModelSettings,
		OutputSchema: a.Guardrails.OutputSchema, PromptID: a.Session.PromptID, PromptVersion: a.Session.PromptVersion}
}

// delta streams a fragment to watchers; deltas are never stored one by one.
func (s *Service) delta(lr *liveRun, d ports.ModelDelta) {
	switch d.Kind {
	case ports.DeltaText:
		s.publish(lr, domain.EventStep, domain.DeltaPayload{RunID: lr.run.ID, Delta: d.Text})
	case ports.DeltaReasoning:
		s.publish(lr, domain.EventReasoning, domain.DeltaPayload{RunID: lr.run.ID, Delta: d.Text})
	}
}

// announce publishes the turn's completed items — authoritative over their
// deltas — and returns its function calls.
func (s *Service) announce(lr *liveRun, output []json.RawMessage) []domain.Item {
	var calls []domain.Item
	for _, raw := range output {
		it := domain.ParseItem(raw)
		switch it.Kind() {
		case "message":
			s.publish(lr, domain.EventMessage, domain.TextPayload{RunID: lr.run.ID, Text: it.Text()})
		case "reasoning":
			s.publish(lr, domain.EventReasoningItem, domain.TextPayload{RunID: lr.run.ID, Text: it.ReasoningText()})
		case "function_call":
			calls = append(calls, it)
			s.publish(lr, domain.EventToolCall, domain.ToolCallPayload{RunID: lr.run.ID, ToolCallID: it.CallID, ToolName: it.Name, Arguments: it.Arguments})
		}
	}
	return calls
}

// consume takes the queued injections of the given queues, records them as
// user messages, and returns them as model input.
func (s *Service) consume(lr *liveRun, queues ...string) ([]json.RawMessage, error) {
	lr.mu.Lock()
	var take []injection
	keep := lr.queue[:0]
	for _, in := range lr.queue {
		if contains(queues, in.queue) {
			take = append(take, in)
		} else {
			keep = append(keep, in)
		}
	}
	lr.queue = keep
	lr.mu.Unlock()
	var out []json.RawMessage
	for _, in := range take {
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

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// toolResult is one answered call.
type toolResult struct {
	callID, output, title string
	isError               bool
}

// runTools answers the turn's calls, at most max_tool_concurrency at once.
// A transfer tool hands the run to its target (the first one wins).
func (s *Service) runTools(ctx context.Context, lr *liveRun, agent *builtAgent, calls []domain.Item) ([]toolResult, *domain.Agent, *outcome) {
	results := make([]toolResult, len(calls))
	var handoff *domain.Agent
	limit := agent.agent.Behavior.MaxToolConcurrency
	if limit <= 0 {
		limit = 4
	}
	sem := make(chan struct{}, limit)
	var wg sync.WaitGroup
	for i, call := range calls {
		if target, ok := agent.handoffs[call.Name]; ok {
			if handoff == nil {
				t := target
				handoff = &t
				results[i] = toolResult{callID: call.CallID, output: fmt.Sprintf(`{"assistant": %q}`, target.Name), title: "Handed off to " + target.Name}
			} else {
				results[i] = toolResult{callID: call.CallID, output: "Only one handoff per turn: this one was not taken.", isError: true}
			}
			continue
		}
		if agent.agent.Behavior.ToolNotFoundBehavior == "error" {
			o := s.failed(lr, domain.CodeModelBehavior, fmt.Sprintf("the model called %q, a tool this agent does not have", call.Name))
			return nil, nil, &o
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			results[i] = toolResult{callID: call.CallID, isError: true,
				output: fmt.Sprintf("Error: there is no tool named %q. Call only the tools you were given.", call.Name)}
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		o := s.fail(lr, ctx.Err())
		return nil, nil, &o
	}
	return results, handoff, nil
}

// turnEntries are the entries a turn appends in one transaction: the model's
// output items (the call's usage on the last of them), then the tool outputs.
func turnEntries(runID string, resp ports.ModelResponse, results []toolResult) []domain.Entry {
	var out []domain.Entry
	for i, raw := range resp.Output {
		e := domain.Entry{Kind: domain.KindItem, Source: domain.SourceModel, RunID: runID, Item: raw}
		if i == len(resp.Output)-1 {
			u := resp.Usage
			e.Usage = &u
		}
		out = append(out, e)
	}
	if len(resp.Output) == 0 {
		// A call that produced nothing still cost something: keep its usage.
		u := resp.Usage
		out = append(out, domain.Entry{Kind: domain.KindAnnotation, RunID: runID, Usage: &u, Text: "The model returned no output."})
	}
	for _, r := range results {
		e := domain.Entry{Kind: domain.KindItem, Source: domain.SourceTool, RunID: runID, Item: domain.FunctionCallOutput(r.callID, r.output)}
		if r.title != "" || r.isError {
			e.Display = &domain.Display{Title: r.title}
			if r.isError {
				e.Display.Kind = "error"
			}
		}
		out = append(out, e)
	}
	return out
}

// finalText is the text of the turn's last assistant message.
func finalText(output []json.RawMessage) string {
	for i := len(output) - 1; i >= 0; i-- {
		if it := domain.ParseItem(output[i]); it.Type == "message" {
			return it.Text()
		}
	}
	return ""
}
