package sandboxtools

import (
	"context"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/sandboxes"
	"github.com/agents-server/agents-server/core/tools"
)

// NewToolset returns the sandbox tools as a run's toolset: a run on a
// project gets them, and the project's sandbox prompt after its agent's
// instructions and memories; a run with no project gets neither. The run
// engine opens the run's Workspace (once a run, so a handoff keeps its
// shells) and hands it over in the request.
func NewToolset(svc *sandboxes.Service) tools.Toolset { return toolset{svc} }

type toolset struct{ svc *sandboxes.Service }

// Offer gives a run on a project the sandbox tools and its prompt.
func (ts toolset) Offer(ctx context.Context, r tools.Request) (tools.Offer, error) {
	w, ok := r.Workspace.(*Workspace)
	if !ok || w == nil {
		return tools.Offer{}, nil
	}
	prompt, err := ts.svc.Prompt(ctx, w.ProjectID())
	if errs.Is(err, errs.NotFound) {
		return tools.Offer{}, &tools.ConfigError{Msg: "the session's project no longer exists"}
	}
	if err != nil {
		return tools.Offer{}, err
	}
	return tools.Offer{Specs: tools.Sandbox, Instructions: prompt, Layer: "sandbox_prompt", State: w}, nil
}

// Call runs one sandbox tool call in the run's workspace, streaming a
// command's output through rc.Progress.
func (toolset) Call(ctx context.Context, rc tools.RunCall, call domain.Item) tools.Answer {
	progress := rc.Progress
	if progress == nil {
		progress = func(string) {}
	}
	res := rc.State.(*Workspace).Run(ctx, call, progress)
	return tools.Answer{Output: res.Output, IsError: res.IsError, Display: res.Display}
}
