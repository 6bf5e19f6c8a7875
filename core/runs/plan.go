package runs

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/tools"
)

// rejectedResult answers a call the person turned down. A rejected plan
// keeps the session planning, and says so.
func rejectedResult(call domain.Item, reason string) toolResult {
	out := "The person rejected this call; it did not run."
	if call.Name == tools.SubmitPlan.Name {
		out = "The person did not accept the plan; planning mode goes on. Revise the plan and submit it again."
	}
	if reason != "" {
		out += " Their reason: " + reason
	}
	return toolResult{callID: call.CallID, name: call.Name, output: out,
		display: &domain.Display{Kind: "rejected", Title: call.Name + " rejected", Summary: reason}}
}

// submitPlan answers an approved submit_plan (it is always gated while
// planning): the session leaves its planning phase, for this run and the
// next, and the model is told to carry the plan out. Outside planning there
// is nothing to submit.
func (s *Service) submitPlan(ctx context.Context, rc *runCtx, call domain.Item) (toolResult, error) {
	r := toolResult{callID: call.CallID, name: call.Name}
	var args struct {
		Plan string `json:"plan"`
	}
	switch {
	case !rc.planning:
		r.isError, r.output = true, "Error: this session is not in planning mode, so there is no plan to submit. Go ahead with the work."
	case json.Unmarshal([]byte(call.Arguments), &args) != nil || strings.TrimSpace(args.Plan) == "":
		r.isError, r.output = true, `Error: submit_plan takes {"plan": "<the plan in Markdown>"}.`
	default:
		if err := s.d.Sessions.LeavePlanning(context.WithoutCancel(ctx), rc.lr.run.SessionID); err != nil {
			return r, err
		}
		r.output = "The person approved the plan. Planning mode is over and every tool is available: carry the plan out now."
		r.display = &domain.Display{Kind: "plan", Title: "Plan approved", Summary: firstLine(args.Plan), Renderer: "plan",
			Extra: map[string]string{"plan": args.Plan}}
	}
	return r, nil
}

// firstLine is a text's first non-empty line, for a card's summary.
func firstLine(s string) string {
	for _, line := range strings.Split(s, "\n") {
		if line = strings.TrimSpace(strings.TrimLeft(line, "#*- ")); line != "" {
			return line
		}
	}
	return ""
}
