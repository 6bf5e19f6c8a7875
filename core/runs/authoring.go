package runs

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/tools"
)

// Authoring is the workflow store as the authoring tools use it — by
// name, never by id, and only the run owner's own workflows written
// (invariant 39). Every save is gated behind the person's approval here.
type Authoring interface {
	// GetNamed reads a definition the owner may use, as JSON by names.
	GetNamed(ctx context.Context, ownerID, name string) (string, error)
	// CheckSave says whether save_workflow's arguments could be saved:
	// validation when they cannot, another error for a fault.
	CheckSave(ctx context.Context, ownerID, args string) error
	// SaveNamed saves approved arguments and says what it did.
	SaveNamed(ctx context.Context, ownerID, args string) (string, error)
	// Preview draws the proposed definition and diffs it against the one
	// it would replace, for the approval card.
	Preview(ctx context.Context, ownerID, args string) (*domain.WorkflowPreview, error)
	// AgentNames are the agents the owner may put in a step.
	AgentNames(ctx context.Context, ownerID string) []string
}

// authors says whether a run's agent gets the authoring tools: opted in
// with behavior.workflow_authoring, on a chat run only.
func (s *Service) authors(rc *runCtx, a domain.Agent) bool {
	return s.d.Authoring != nil && !rc.background && a.Behavior.WorkflowAuthoring
}

// equipAuthoring gives an opted-in agent get_workflow and save_workflow,
// the latter's description listing the agents on offer.
func (s *Service) equipAuthoring(rc *runCtx, b *builtAgent) {
	if !s.authors(rc, b.agent) {
		return
	}
	save := tools.SaveWorkflow
	if names := s.d.Authoring.AgentNames(rc.lr.ctx, rc.lr.run.OwnerID); len(names) > 0 {
		save.Description += " The agents on offer: " + strings.Join(names, ", ") + "."
	}
	b.specs = append(b.specs, tools.GetWorkflow, save)
}

// savesUnasked reports whether a save_workflow call needs no decision
// because it cannot be saved: it is refused at once, with the reasons,
// instead of asking a person to approve what would fail. A store fault
// still asks.
func (s *Service) savesUnasked(rc *runCtx, c domain.Item) bool {
	if c.Name != tools.SaveWorkflow.Name || s.d.Authoring == nil {
		return false
	}
	return errs.Is(s.d.Authoring.CheckSave(rc.lr.ctx, rc.lr.run.OwnerID, c.Arguments), errs.Validation)
}

// authoringTool answers get_workflow, and save_workflow — saving only a
// call the person approved.
func (s *Service) authoringTool(ctx context.Context, rc *runCtx, call domain.Item) toolResult {
	r := toolResult{callID: call.CallID, name: call.Name}
	owner := rc.lr.run.OwnerID
	var err error
	switch {
	case call.Name == tools.GetWorkflow.Name:
		var args struct {
			Name string `json:"name"`
		}
		if err = json.Unmarshal([]byte(call.Arguments), &args); err == nil {
			r.output, err = s.d.Authoring.GetNamed(ctx, owner, args.Name)
		}
	case rc.approved[call.CallID]:
		r.output, err = s.d.Authoring.SaveNamed(ctx, owner, call.Arguments)
		if err == nil {
			r.display = &domain.Display{Kind: "workflow_saved", Title: "Workflow saved", Summary: r.output}
		}
	default:
		if err = s.d.Authoring.CheckSave(ctx, owner, call.Arguments); err == nil {
			err = errs.E(errs.Conflict, "the save was not approved")
		}
	}
	if err != nil {
		r.isError, r.output = true, "Error: "+errs.MessageOf(err)
		if f := errs.FieldsOf(err); len(f) > 0 {
			b, _ := json.Marshal(f)
			r.output += " " + string(b)
		}
	}
	return r
}

// withPreviews adds to each save_workflow approval what its card shows.
func (s *Service) withPreviews(ctx context.Context, list []domain.Approval) []domain.Approval {
	if s.d.Authoring == nil {
		return list
	}
	for i, a := range list {
		if a.ToolName == tools.SaveWorkflow.Name {
			p, err := s.d.Authoring.Preview(ctx, a.OwnerID, a.Arguments)
			if err != nil {
				s.d.Log.Warn("drawing a workflow save's preview failed", "approval_id", a.ID, "err", err)
				continue
			}
			list[i].Preview = p
		}
	}
	return list
}
