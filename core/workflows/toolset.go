package workflows

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/tools"
)

// Toolset is workflow authoring as a run's toolset: get_workflow and
// save_workflow, by name, never by id, and only the run owner's own
// workflows written (invariant 39). Every save waits for the person's
// approval (tools.Asker), its card showing a preview (tools.Previewer).
func (s *Service) Toolset() tools.Toolset { return toolset{s} }

type toolset struct{ s *Service }

// Offer gives an opted-in agent (behavior.workflow_authoring) the
// authoring tools on a chat run, save_workflow's description listing the
// agents on offer.
func (ts toolset) Offer(ctx context.Context, r tools.Request) (tools.Offer, error) {
	if r.Background || !r.Agent.Behavior.WorkflowAuthoring {
		return tools.Offer{}, nil
	}
	save := tools.SaveWorkflow
	if names := ts.s.AgentNames(ctx, r.Run.OwnerID); len(names) > 0 {
		save.Description += " The agents on offer: " + strings.Join(names, ", ") + "."
	}
	return tools.Offer{Specs: []tools.Spec{tools.GetWorkflow, save}}, nil
}

// Refuses says a save_workflow call cannot be saved: it is refused at once,
// with the reasons, instead of asking a person to approve what would fail.
// A store fault still asks.
func (ts toolset) Refuses(ctx context.Context, rc tools.RunCall, call domain.Item) bool {
	return call.Name == tools.SaveWorkflow.Name &&
		errs.Is(ts.s.CheckSave(ctx, rc.Run.OwnerID, call.Arguments), errs.Validation)
}

// Preview draws a pending save's definition and diffs it against the one
// it would replace.
func (ts toolset) Preview(ctx context.Context, a *domain.Approval) error {
	if a.ToolName != tools.SaveWorkflow.Name {
		return nil
	}
	p, err := ts.s.Preview(ctx, a.OwnerID, a.Arguments)
	if err != nil {
		return err
	}
	a.Preview = p
	return nil
}

// Call answers get_workflow, and save_workflow — saving only a call the
// person approved.
func (ts toolset) Call(ctx context.Context, rc tools.RunCall, call domain.Item) tools.Answer {
	var r tools.Answer
	owner := rc.Run.OwnerID
	var err error
	switch {
	case call.Name == tools.GetWorkflow.Name:
		var args tools.GetWorkflowArgs
		if err = json.Unmarshal([]byte(call.Arguments), &args); err == nil {
			r.Output, err = ts.s.GetNamed(ctx, owner, args.Name)
		}
	case rc.Approved:
		r.Output, err = ts.s.SaveNamed(ctx, owner, call.Arguments)
		if err == nil {
			r.Display = &domain.Display{Kind: "workflow_saved", Title: "Workflow saved", Summary: r.Output}
		}
	default:
		if err = ts.s.CheckSave(ctx, owner, call.Arguments); err == nil {
			err = errs.E(errs.Conflict, "the save was not approved")
		}
	}
	if err != nil {
		r.IsError, r.Output = true, "Error: "+errs.MessageOf(err)
		if f := errs.FieldsOf(err); len(f) > 0 {
			b, _ := json.Marshal(f)
			r.Output += " " + string(b)
		}
	}
	return r
}
