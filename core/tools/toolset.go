package tools

import (
	"context"
	"fmt"

	"github.com/agents-server/agents-server/core/domain"
)

// Toolset is one origin of tools — the built-ins, a project's sandbox,
// the task verbs, workflow authoring, skills, MCP, the program's Go tools.
// The run engine asks each registered toolset what an agent gets on a run
// and hands it the calls of the tools it offered; a new origin is one more
// toolset in the workbench's wiring, and nothing in the run engine.
type Toolset interface {
	// Offer says what the agent gets on the run r describes: nothing (an
	// empty Offer) is an answer. An error ends the run; a ConfigError
	// ends it as config_error.
	Offer(ctx context.Context, r Request) (Offer, error)
	// Call answers one call of a tool this toolset offered on the run.
	// A failure the model can act on is an Answer with IsError set; Call
	// has no error of its own.
	Call(ctx context.Context, rc RunCall, call domain.Item) Answer
}

// Request is what a toolset is told when a run equips an agent: whose
// run, which agent, and what the run brings.
type Request struct {
	Run   domain.Run
	Agent domain.Agent
	// Background marks a task's run: nobody reads it live.
	Background bool
	// Workspace is the run's project tree; nil without a project.
	Workspace Workspace
}

// Workspace is a run's project tree as the run engine holds it (a
// *sandboxtools.Workspace): opened once per run, so a handoff keeps its
// shells.
type Workspace interface {
	ProjectID() string
}

// Offer is what a toolset gives one agent on one run.
type Offer struct {
	// Specs are the tools, in the order the model sees them, with their
	// traits.
	Specs []Spec
	// Selected says the agent chose these tools by name (its tools list):
	// they come before its handoffs, and what the run brings after.
	Selected bool
	// Instructions are added to the agent's instructions, after what came
	// before (blank: nothing); Layer, when set, names them in the context
	// profile.
	Instructions string
	Layer        string
	// Unavailable are the selected tools the run goes without, and why:
	// the run traces them and tells the person.
	Unavailable []Unavailable
	// State is what the toolset keeps for this agent on this run; each
	// call gets it back in RunCall.State.
	State any
}

// Unavailable is a server a selected tool comes from that cannot serve
// the run.
type Unavailable struct {
	Server string
	Tools  []string
	Reason string
}

// RunCall is the run a call is made on, as a toolset answers it.
type RunCall struct {
	Run   domain.Run
	Agent domain.Agent // the agent that called (after any handoff)
	// Approved says a person approved this very call.
	Approved bool
	// Triggered says a trigger started the run, so what it starts keeps
	// its exec grants to itself.
	Triggered bool
	// State is what the toolset's Offer kept for the agent.
	State any
	// Progress streams a Streams tool's output as it comes (terminal
	// text).
	Progress func(delta string)
}

// Answer is what a tool answered: the model reads Output, people see
// Display.
type Answer struct {
	Output  string
	IsError bool
	Display *domain.Display
}

// Failed is the answer that reports err to the model.
func Failed(format string, args ...any) Answer {
	return Answer{IsError: true, Output: fmt.Sprintf(format, args...)}
}

// Asker is a toolset with tools that always wait for a person's decision
// (Spec.AlwaysAsks), whatever the agent's approve_tools says — except a
// call it would refuse anyway, which the model hears at once instead of a
// person approving what would fail.
type Asker interface {
	Refuses(ctx context.Context, rc RunCall, call domain.Item) bool
}

// Previewer is a toolset whose pending approvals show a preview of what
// the call would do.
type Previewer interface {
	// Preview adds what a's card shows; it leaves an approval of another
	// toolset's tool as it is.
	Preview(ctx context.Context, a *domain.Approval) error
}

// ConfigError is an Offer failure caused by configuration: the run ends
// with code config_error and its message.
type ConfigError = domain.ConfigError
