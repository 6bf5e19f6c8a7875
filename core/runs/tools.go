package runs

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/tools"
	"github.com/agents-server/agents-server/core/transcript"
)

// runTools answers a turn's calls, at most max_tool_concurrency at once. A
// transfer tool hands the run to its target (the first one wins). Each call
// passes the tool_input guardrails before it runs and the tool_output ones
// before the model reads its result; a trip ends the run. A cancel returns
// ctx's error with what became of each call (see stoppedTurn).
func (s *Service) runTools(ctx context.Context, rc *runCtx, calls []domain.Item, rejected map[string]string) ([]transcript.Result, *domain.Agent, error) {
	results := make([]transcript.Result, len(calls))
	var handoff *domain.Agent
	limit := rc.agent.Agent.Behavior.MaxToolConcurrency
	if limit <= 0 {
		limit = 4
	}
	sem := make(chan struct{}, limit)
	var wg sync.WaitGroup
	errs, leavePlanning := make([]error, len(calls)), false
	for i, call := range calls {
		if reason, no := rejected[call.CallID]; no {
			results[i] = transcript.Rejected(call, reason)
			continue
		}
		if err := rc.agent.Guard(domain.StageToolInput, call.Arguments, false, rc.tr, rc.parentSpan()); err != nil {
			return nil, nil, err
		}
		if call.Name == tools.SubmitPlan.Name {
			// Answered here, not beside the others: its approval changes the
			// phase the rest of the run works in.
			var err error
			if results[i], err = s.runTool(ctx, rc, call); err != nil {
				return nil, nil, err
			}
			leavePlanning = leavePlanning || (rc.planning && !results[i].IsError)
			continue
		}
		if target, ok := rc.agent.Handoffs[call.Name]; ok && !rc.planning {
			if handoff == nil {
				t := target
				handoff = &t
				results[i] = transcript.Result{CallID: call.CallID, Name: call.Name, Output: fmt.Sprintf(`{"assistant": %q}`, target.Name),
					Display: &domain.Display{Kind: "handoff", Title: "Handed off to " + target.Name}}
			} else {
				results[i] = transcript.Result{CallID: call.CallID, Name: call.Name, IsError: true, Output: "Only one handoff per turn: this one was not taken."}
			}
			continue
		}
		if !s.knows(rc, call.Name) && rc.agent.Agent.Behavior.ToolNotFoundBehavior == "error" {
			return nil, nil, &behaviorError{fmt.Sprintf("the model called %q, a tool this agent does not have", call.Name)}
		}
		select { // slots are taken in the model's order, whatever the scheduling
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			results[i] = transcript.NotRun(call)
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if results[i], errs[i] = s.runTool(ctx, rc, call); errs[i] != nil && ctx.Err() != nil {
				results[i] = transcript.Stopped(call)
			}
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		return results, nil, ctx.Err()
	}
	if leavePlanning {
		rc.planning = false
	}
	for i, r := range results {
		if errs[i] != nil {
			return nil, nil, errs[i]
		}
		if err := rc.agent.Guard(domain.StageToolOutput, r.Output, false, rc.tr, rc.parentSpan()); err != nil {
			return nil, nil, err
		}
	}
	return results, handoff, nil
}

// behaviorError ends a run for the model's behavior (code model_behavior).
type behaviorError struct{ msg string }

func (e *behaviorError) Error() string { return e.msg }

func (s *Service) knows(rc *runCtx, name string) bool {
	_, ok := rc.agent.Offered(name)
	return ok
}

// errUnknownTool fails the span of a call of a tool the run did not offer:
// the call failed, whatever the model makes of the answer.
var errUnknownTool = errors.New("the model called a tool this run does not offer")

// runTool executes one call as a function span, which carries the tool's
// origin (unknown for a name the run did not offer). Planning refuses every
// tool that is not read-only, with a message the model can act on, rather
// than hiding it.
func (s *Service) runTool(ctx context.Context, rc *runCtx, call domain.Item) (transcript.Result, error) {
	spec, known := rc.agent.Offered(call.Name)
	if !known {
		spec.Origin = tools.OriginUnknown
	}
	sp := rc.tr.Span(domain.SpanFunction, call.Name, rc.parentSpan()).Meta("tool", call.Name).Meta("call_id", call.CallID).
		Meta("origin", spec.Origin).Set("arguments", call.Arguments, true)
	r := transcript.Result{CallID: call.CallID, Name: call.Name}
	switch {
	case !known:
		r.IsError = true
		r.Output = fmt.Sprintf("Error: there is no tool named %q. Call only the tools you were given.", call.Name)
	case call.Name == tools.SubmitPlan.Name:
		var err error
		if r, err = s.submitPlan(ctx, rc, call); err != nil {
			sp.Finish(err)
			return r, err
		}
	case rc.planning && !spec.ReadOnly:
		r.IsError = true
		r.Output = fmt.Sprintf("Refused: this session is in planning mode, where %s is not available. Work out the plan, "+
			"then present it with submit_plan; the person's approval ends planning mode.", call.Name)
		r.Display = &domain.Display{Kind: "refused", Title: call.Name + " refused while planning"}
	default:
		if spec.Server != "" {
			sp.Meta("mcp_server", spec.Server)
		}
		r = s.callToolset(ctx, rc, spec, call)
	}
	sp.Meta("is_error", r.IsError).Set("output", r.Output, true)
	if !known {
		sp.Finish(errUnknownTool)
	} else {
		sp.Finish(nil)
	}
	return r, ctx.Err()
}

// callToolset hands a call to the toolset that offered the tool (a
// handoff, answered by runTools, has none). A panic in a toolset — in a
// program's Go tool, say — fails the call, not the process.
func (s *Service) callToolset(ctx context.Context, rc *runCtx, spec tools.Spec, call domain.Item) (r transcript.Result) {
	r = transcript.Result{CallID: call.CallID, Name: call.Name}
	i, ok := rc.agent.Owner[call.Name]
	if !ok {
		return r
	}
	defer func() {
		if p := recover(); p != nil {
			s.d.Log.Error("a tool panicked", "tool", call.Name, "origin", spec.Origin, "panic", p)
			r.IsError, r.Output = true, fmt.Sprintf("Error: the tool %s failed: %v", call.Name, p)
		}
	}()
	on := s.runCall(rc, i, call)
	if spec.Streams {
		on.Progress = func(delta string) {
			s.publish(rc.lr, domain.EventToolProgress, domain.ToolProgressPayload{RunID: rc.lr.run.ID, CallID: call.CallID,
				ToolName: call.Name, Delta: delta, Renderer: "terminal"})
		}
	}
	a := s.d.Toolsets[i].Call(ctx, on, call)
	r.Output, r.IsError, r.Display = a.Output, a.IsError, a.Display
	return r
}

// runCall is the run a call of toolset i's is made on.
func (s *Service) runCall(rc *runCtx, i int, call domain.Item) tools.RunCall {
	return tools.RunCall{Run: rc.lr.run, Agent: rc.agent.Agent, Approved: rc.approved[call.CallID],
		Triggered: s.trust.IsTriggered(rc.lr.run.ID), State: rc.agent.States[i]}
}
