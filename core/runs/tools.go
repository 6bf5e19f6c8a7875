package runs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/tools"
)

// toolResult is one answered call.
type toolResult struct {
	callID, name, output string
	isError              bool
	display              *domain.Display
	cutOff               bool // a cancel decided it: the call did not finish
}

// allowedInPlanning lists tools a planning session may still use: reading
// and thinking, nothing that changes the world or the plan's scope.
var allowedInPlanning = []string{"read_file", "list_files", "task_status", "get_workflow", "read_skill"}

// runTools answers a turn's calls, at most max_tool_concurrency at once. A
// transfer tool hands the run to its target (the first one wins). Each call
// passes the tool_input guardrails before it runs and the tool_output ones
// before the model reads its result; a trip ends the run. A cancel returns
// ctx's error with what became of each call (see stoppedTurn).
func (s *Service) runTools(ctx context.Context, rc *runCtx, calls []domain.Item, rejected map[string]string) ([]toolResult, *domain.Agent, error) {
	results := make([]toolResult, len(calls))
	var handoff *domain.Agent
	limit := rc.agent.agent.Behavior.MaxToolConcurrency
	if limit <= 0 {
		limit = 4
	}
	sem := make(chan struct{}, limit)
	var wg sync.WaitGroup
	errs := make([]error, len(calls))
	leavePlanning := false
	for i, call := range calls {
		if reason, no := rejected[call.CallID]; no {
			results[i] = rejectedResult(call, reason)
			continue
		}
		if err := s.checkStage(rc, domain.StageToolInput, call.Arguments, false); err != nil {
			return nil, nil, err
		}
		if call.Name == tools.SubmitPlan.Name {
			// Answered here, not beside the others: its approval changes the
			// phase the rest of the run works in.
			var err error
			if results[i], err = s.runTool(ctx, rc, call); err != nil {
				return nil, nil, err
			}
			leavePlanning = leavePlanning || (rc.planning && !results[i].isError)
			continue
		}
		if target, ok := rc.agent.handoffs[call.Name]; ok && !rc.planning {
			if handoff == nil {
				t := target
				handoff = &t
				results[i] = toolResult{callID: call.CallID, name: call.Name, output: fmt.Sprintf(`{"assistant": %q}`, target.Name),
					display: &domain.Display{Kind: "handoff", Title: "Handed off to " + target.Name}}
			} else {
				results[i] = toolResult{callID: call.CallID, name: call.Name, isError: true, output: "Only one handoff per turn: this one was not taken."}
			}
			continue
		}
		if !s.knows(rc, call.Name) && rc.agent.agent.Behavior.ToolNotFoundBehavior == "error" {
			return nil, nil, &behaviorError{fmt.Sprintf("the model called %q, a tool this agent does not have", call.Name)}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			if ctx.Err() != nil {
				results[i] = toolResult{callID: call.CallID, name: call.Name, output: "The run was stopped before this call ran.",
					isError: true, cutOff: true, display: &domain.Display{Kind: "stopped", Title: call.Name + " not run", Summary: "Stopped before it ran"}}
				return
			}
			if results[i], errs[i] = s.runTool(ctx, rc, call); errs[i] != nil && ctx.Err() != nil {
				results[i] = toolResult{callID: call.CallID, name: call.Name, output: stoppedOutcome, isError: true, cutOff: true,
					display: &domain.Display{Kind: "interrupted", Title: call.Name + " stopped", Summary: "Result unknown"}}
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
		if err := s.checkStage(rc, domain.StageToolOutput, r.output, false); err != nil {
			return nil, nil, err
		}
	}
	return results, handoff, nil
}

// behaviorError ends a run for the model's behavior (code model_behavior).
type behaviorError struct{ msg string }

func (e *behaviorError) Error() string { return e.msg }

func (s *Service) knows(rc *runCtx, name string) bool {
	_, ok := offered(rc, name)
	return ok
}

// offered is the spec of the tool called name that the run offers.
func offered(rc *runCtx, name string) (tools.Spec, bool) {
	i := slices.IndexFunc(rc.agent.specs, func(sp tools.Spec) bool { return sp.Name == name })
	if i < 0 {
		return tools.Spec{}, false
	}
	return rc.agent.specs[i], true
}

// errUnknownTool fails the span of a call of a tool the run did not offer:
// the call failed, whatever the model makes of the answer.
var errUnknownTool = errors.New("the model called a tool this run does not offer")

// runTool executes one call as a function span, which carries the tool's
// origin (unknown for a name the run did not offer). Planning refuses every
// tool that is not read-only, with a message the model can act on, rather
// than hiding it.
func (s *Service) runTool(ctx context.Context, rc *runCtx, call domain.Item) (toolResult, error) {
	spec, known := offered(rc, call.Name)
	if !known {
		spec.Origin = tools.OriginUnknown
	}
	sp := rc.tr.span(domain.SpanFunction, call.Name, rc.parentSpan()).meta("tool", call.Name).meta("call_id", call.CallID).
		meta("origin", spec.Origin).set("arguments", call.Arguments, true)
	r := toolResult{callID: call.CallID, name: call.Name}
	switch {
	case !known:
		r.isError = true
		r.output = fmt.Sprintf("Error: there is no tool named %q. Call only the tools you were given.", call.Name)
	case call.Name == tools.SubmitPlan.Name:
		var err error
		if r, err = s.submitPlan(ctx, rc, call); err != nil {
			sp.finish(err)
			return r, err
		}
	case rc.planning && !slices.Contains(allowedInPlanning, call.Name):
		r.isError = true
		r.output = fmt.Sprintf("Refused: this session is in planning mode, where %s is not available. Work out the plan, "+
			"then present it with submit_plan; the person's approval ends planning mode.", call.Name)
		r.display = &domain.Display{Kind: "refused", Title: call.Name + " refused while planning"}
	case call.Name == tools.TodoWrite.Name:
		r = todoWrite(call)
	case tools.IsTaskVerb(call.Name) && s.d.Tasks != nil:
		r = s.callTask(ctx, rc, call)
	case (call.Name == tools.GetWorkflow.Name || call.Name == tools.SaveWorkflow.Name) && s.d.Authoring != nil:
		r = s.authoringTool(ctx, rc, call)
	case call.Name == tools.ReadSkill.Name:
		r = readSkill(rc, call)
	case s.d.Natives[call.Name].Run != nil:
		r = s.callNative(ctx, rc, call)
	case rc.agent.mcp[call.Name].Name != "":
		t := rc.agent.mcp[call.Name]
		sp.meta("mcp_server", t.Server)
		r = s.callMCP(ctx, t, call)
	case rc.ws != nil && slices.ContainsFunc(tools.Sandbox, func(sp tools.Spec) bool { return sp.Name == call.Name }):
		res := rc.ws.Run(ctx, call, func(delta string) {
			s.publish(rc.lr, domain.EventToolProgress, domain.ToolProgressPayload{RunID: rc.lr.run.ID, CallID: call.CallID,
				ToolName: call.Name, Delta: delta, Renderer: "terminal"})
		})
		r = toolResult{callID: call.CallID, name: call.Name, output: res.Output, isError: res.IsError, display: res.Display}
	}
	sp.meta("is_error", r.isError).set("output", r.output, true)
	if !known {
		sp.finish(errUnknownTool)
	} else {
		sp.finish(nil)
	}
	return r, ctx.Err()
}

type todo struct {
	Content string `json:"content"`
	Status  string `json:"status"`
}

// todoWrite keeps the model's checklist: the list travels in the call and
// its card, so a reload shows what streamed.
func todoWrite(call domain.Item) toolResult {
	r := toolResult{callID: call.CallID, name: call.Name}
	var args struct {
		Todos []todo `json:"todos"`
	}
	dec := json.NewDecoder(strings.NewReader(call.Arguments))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&args); err != nil {
		r.isError, r.output = true, "Error: todo_write takes {\"todos\": [{\"content\": …, \"status\": \"pending|in_progress|completed\"}]}: "+err.Error()
		return r
	}
	done := 0
	for _, t := range args.Todos {
		switch t.Status {
		case "completed":
			done++
		case "pending", "in_progress":
		default:
			r.isError, r.output = true, fmt.Sprintf("Error: status %q is not pending, in_progress or completed", t.Status)
			return r
		}
	}
	list, _ := json.Marshal(args.Todos)
	r.output = fmt.Sprintf("Checklist saved: %d of %d done.", done, len(args.Todos))
	r.display = &domain.Display{Kind: "todo", Title: "Checklist", Summary: fmt.Sprintf("%d/%d done", done, len(args.Todos)),
		Renderer: "todo", Extra: map[string]string{"todos": string(list)}}
	return r
}

// callNative answers a call of one of the embedding program's Go tools. A
// panic in the program's function fails the call, not the process.
func (s *Service) callNative(ctx context.Context, rc *runCtx, call domain.Item) (r toolResult) {
	r = toolResult{callID: call.CallID, name: call.Name}
	run := rc.lr.run
	defer func() {
		if p := recover(); p != nil {
			s.d.Log.Error("a Go tool panicked", "tool", call.Name, "panic", p)
			r.isError, r.output = true, fmt.Sprintf("Error: the tool %s failed: %v", call.Name, p)
		}
	}()
	out, err := s.d.Natives[call.Name].Run(ctx, tools.Call{CallID: call.CallID, Arguments: call.Arguments,
		RunID: run.ID, SessionID: run.SessionID, AgentID: rc.agent.agent.ID, UserID: run.OwnerID})
	if err != nil {
		r.isError, r.output = true, "Error: "+err.Error()
		return r
	}
	r.output = out
	return r
}
