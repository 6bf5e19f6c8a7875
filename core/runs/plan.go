package runs

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/transcript"
)

// submitPlan answers an approved submit_plan (it is always gated while
// planning): the session leaves its planning phase, for this run and the
// next, and the model is told to carry the plan out. Outside planning there
// is nothing to submit.
func (s *Service) submitPlan(ctx context.Context, rc *runCtx, call domain.Item) (transcript.Result, error) {
	r := transcript.Result{CallID: call.CallID, Name: call.Name}
	var args struct {
		Plan string `json:"plan"`
	}
	switch {
	case !rc.planning:
		r.IsError, r.Output = true, "Error: this session is not in planning mode, so there is no plan to submit. Go ahead with the work."
	case json.Unmarshal([]byte(call.Arguments), &args) != nil || strings.TrimSpace(args.Plan) == "":
		r.IsError, r.Output = true, `Error: submit_plan takes {"plan": "<the plan in Markdown>"}.`
	default:
		if err := s.d.Sessions.LeavePlanning(context.WithoutCancel(ctx), rc.lr.run.SessionID); err != nil {
			return r, err
		}
		r.Output = "The person approved the plan. Planning mode is over and every tool is available: carry the plan out now."
		r.Display = &domain.Display{Kind: "plan", Title: "Plan approved", Summary: firstLine(args.Plan), Renderer: "plan",
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
