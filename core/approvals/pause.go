package approvals

import (
	"time"

	"github.com/agents-server/agents-server/core/domain"
)

// Rows are the approvals a pause files: one per gated call of the turn,
// each id from newID.
func Rows(run domain.Run, calls []domain.Item, gated []bool, now time.Time, newID func() string) []domain.Approval {
	var out []domain.Approval
	for i, c := range calls {
		if gated[i] {
			out = append(out, domain.Approval{ID: newID(), SessionID: run.SessionID, RunID: run.ID,
				OwnerID: run.OwnerID, ToolCallID: c.CallID, ToolName: c.Name, Arguments: c.Arguments, CreatedAt: now})
		}
	}
	return out
}

// Decided is a resumed turn's decisions.
type Decided []domain.Approval

// Approved is the set of calls a person approved.
func (d Decided) Approved() map[string]bool {
	out := map[string]bool{}
	for _, a := range d {
		if a.Status == domain.ApprovalApproved {
			out[a.ToolCallID] = true
		}
	}
	return out
}

// Rejections maps the rejected calls to their reasons.
func (d Decided) Rejections() map[string]string {
	out := map[string]string{}
	for _, a := range d {
		if a.Status != domain.ApprovalApproved {
			out[a.ToolCallID] = a.Reason
		}
	}
	return out
}

// notRunWhy says why an ended pause's calls did not run, by its reason.
var notRunWhy = map[string]string{"superseded": "a new message arrived before a decision", "stopped": "the run was cancelled",
	"expired": "the approval expired"}

// NotRun records each of an ended pause's waiting calls as not run, for
// reason, so the history stays well-formed for the next model call.
func NotRun(runID string, calls []domain.Item, reason string) []domain.Entry {
	why := notRunWhy[reason]
	var entries []domain.Entry
	for _, c := range calls {
		entries = append(entries, domain.Entry{Kind: domain.KindItem, Source: domain.SourceTool, RunID: runID,
			Item:    domain.FunctionCallOutput(c.CallID, "Not run: "+why+"."),
			Display: &domain.Display{Kind: "not_run", Title: c.Name + " not run", Summary: why}})
	}
	return entries
}
