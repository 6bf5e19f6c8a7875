package tools

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/agents-server/agents-server/core/domain"
)

// OriginNative marks a tool the program embedding the workbench wrote in
// Go and registered when it opened the workbench.
const OriginNative = "native"

// Native is a tool implemented in the embedding program: its spec, as the
// model sees it, and the function that answers a call. It passes the same
// approval gate, guardrails and traces as every tool.
type Native struct {
	Spec Spec
	// Run answers one call. The text it returns is what the model reads; an
	// error is shown to the model as a failed call ("Error: …"), so a tool
	// reports a bad argument by returning one.
	Run func(ctx context.Context, call Call) (string, error)
}

// Call is one call of a native tool: the arguments as the model sent them
// (a JSON object) and where the call comes from.
type Call struct {
	CallID    string
	Arguments string
	RunID     string
	SessionID string
	AgentID   string
	UserID    string // the run's owner
}

// Natives is the set of native tools of one workbench, by name. Agents opt
// into them through their tools list, as into the built-in ones.
type Natives map[string]Native

// nativeName is what a native tool may be called: what every model API
// accepts as a function name, and never the "__" that marks an MCP tool.
var nativeName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]{0,63}$`)

// reserved are the tools the workbench offers itself; a native tool may not
// take one of their names.
func reserved() []string {
	names := []string{TodoWrite.Name, SubmitPlan.Name, GetWorkflow.Name, SaveWorkflow.Name, ReadSkill.Name}
	for _, group := range [][]Spec{Selectable, Sandbox, Tasks} {
		for _, s := range group {
			names = append(names, s.Name)
		}
	}
	return names
}

// IsBuiltin reports whether name is one of the tools the workbench offers
// itself: a fixed set of names, unlike an MCP server's tools or a program's,
// which people and programs choose (so metrics label by it, and by their
// origin instead).
func IsBuiltin(name string) bool { return slices.Contains(reserved(), name) }

// NewNatives checks a program's tools and indexes them: a name must be
// usable by every model API, unique, and not one of the workbench's own
// tools; the run function must be set.
func NewNatives(list []Native) (Natives, error) {
	out := make(Natives, len(list))
	taken := reserved()
	for _, n := range list {
		name := n.Spec.Name
		switch {
		case !nativeName.MatchString(name) || strings.Contains(name, "__"):
			return nil, fmt.Errorf("tool name %q: use 1-64 letters, digits, _ or -, starting with a letter, without \"__\"", name)
		case slices.Contains(taken, name):
			return nil, fmt.Errorf("tool name %q is one of the workbench's own tools", name)
		case out[name].Run != nil:
			return nil, fmt.Errorf("tool %q is registered twice", name)
		case n.Run == nil:
			return nil, fmt.Errorf("tool %q has no function", name)
		}
		n.Spec.Origin = OriginNative
		out[name] = n
	}
	return out, nil
}

// Lookup returns the native tool of that name.
func (n Natives) Lookup(name string) (Native, bool) {
	t, ok := n[name]
	return t, ok
}

// Offer gives an agent the program's tools its tools list names, in its
// order.
func (n Natives) Offer(_ context.Context, r Request) (Offer, error) {
	o := Offer{Selected: true}
	for _, name := range r.Agent.Tools {
		if t, ok := n[name]; ok {
			o.Specs = append(o.Specs, t.Spec)
		}
	}
	return o, nil
}

// Call answers a call of one of the program's tools. (A panic in the
// program's function fails the call, not the process: the run engine
// recovers it, as it does for every toolset.)
func (n Natives) Call(ctx context.Context, rc RunCall, call domain.Item) Answer {
	out, err := n[call.Name].Run(ctx, Call{CallID: call.CallID, Arguments: call.Arguments,
		RunID: rc.Run.ID, SessionID: rc.Run.SessionID, AgentID: rc.Agent.ID, UserID: rc.Run.OwnerID})
	if err != nil {
		return Answer{IsError: true, Output: "Error: " + err.Error()}
	}
	return Answer{Output: out}
}
