package tools_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/agents-server/agents-server/core/tools"
)

// builtins is every tool the workbench offers itself, with the origin it
// must carry.
func builtins() map[string][]tools.Spec {
	return map[string][]tools.Spec{
		tools.OriginChecklist: {tools.TodoWrite},
		tools.OriginPlan:      {tools.SubmitPlan},
		tools.OriginSandbox:   tools.Sandbox,
		tools.OriginSkills:    {tools.ReadSkill},
		tools.OriginTasks:     tools.Tasks,
		tools.OriginWorkflows: {tools.GetWorkflow, tools.SaveWorkflow},
		tools.OriginBuiltin:   tools.Selectable,
	}
}

// TestEveryBuiltinToolIsAWellFormedSchema holds what a model API needs of
// each built-in tool: a unique name fit for every API, a description, and
// parameters that are a closed JSON Schema object whose required fields
// are among its properties — and that each is a built-in by its name.
func TestEveryBuiltinToolIsAWellFormedSchema(t *testing.T) {
	seen := map[string]bool{}
	for origin, group := range builtins() {
		for _, s := range group {
			if s.Origin != origin {
				t.Errorf("%s has origin %q, want %q", s.Name, s.Origin, origin)
			}
			if seen[s.Name] {
				t.Errorf("%s is offered twice", s.Name)
			}
			seen[s.Name] = true
			if !tools.IsBuiltin(s.Name) {
				t.Errorf("%s is not reported built-in", s.Name)
			}
			if strings.TrimSpace(s.Description) == "" {
				t.Errorf("%s has no description", s.Name)
			}
			// A native tool of the name would be refused only as reserved:
			// the name itself is one every API takes.
			if _, err := tools.NewNatives([]tools.Native{{Spec: tools.Spec{Name: s.Name}, Run: echo}}); err == nil ||
				!strings.Contains(err.Error(), "workbench's own tools") {
				t.Errorf("a native tool named %s: %v", s.Name, err)
			}
			checkSchema(t, s.Name, s.Parameters)
		}
	}
	if tools.IsBuiltin("fetch") || tools.IsBuiltin("") {
		t.Error("a name the workbench does not offer is reported built-in")
	}
}

func checkSchema(t *testing.T, name string, raw json.RawMessage) {
	t.Helper()
	var schema struct {
		Type                 string                     `json:"type"`
		Properties           map[string]json.RawMessage `json:"properties"`
		Required             []string                   `json:"required"`
		AdditionalProperties *bool                      `json:"additionalProperties"`
	}
	if err := json.Unmarshal(raw, &schema); err != nil {
		t.Errorf("%s: parameters are not JSON: %v", name, err)
		return
	}
	if schema.Type != "object" || schema.Properties == nil {
		t.Errorf("%s: parameters are not an object schema: %s", name, raw)
	}
	if schema.AdditionalProperties == nil || *schema.AdditionalProperties {
		t.Errorf("%s: parameters take properties they do not name", name)
	}
	for _, r := range schema.Required {
		if _, ok := schema.Properties[r]; !ok {
			t.Errorf("%s: requires %q, which it does not define", name, r)
		}
	}
}

func echo(_ context.Context, c tools.Call) (string, error) { return c.Arguments, nil }

// TestANativeToolIsCheckedBeforeItIsOffered holds NewNatives' refusals —
// a name no model API takes or that reads as an MCP tool, a duplicate, a
// tool without a function — and that an accepted tool is marked native
// and runs.
func TestANativeToolIsCheckedBeforeItIsOffered(t *testing.T) {
	for _, tc := range []struct {
		name string
		list []tools.Native
		says string
	}{
		{"an empty name", []tools.Native{{Spec: tools.Spec{Name: ""}, Run: echo}}, "use 1-64 letters"},
		{"a leading digit", []tools.Native{{Spec: tools.Spec{Name: "1st"}, Run: echo}}, "use 1-64 letters"},
		{"a dot", []tools.Native{{Spec: tools.Spec{Name: "web.search"}, Run: echo}}, "use 1-64 letters"},
		{"65 characters", []tools.Native{{Spec: tools.Spec{Name: "a" + strings.Repeat("b", 64)}, Run: echo}}, "use 1-64 letters"},
		{"an MCP-looking name", []tools.Native{{Spec: tools.Spec{Name: "srv__tool"}, Run: echo}}, `without "__"`},
		{"twice", []tools.Native{{Spec: tools.Spec{Name: "lookup"}, Run: echo}, {Spec: tools.Spec{Name: "lookup"}, Run: echo}}, "registered twice"},
		{"no function", []tools.Native{{Spec: tools.Spec{Name: "lookup"}}}, "has no function"},
	} {
		if _, err := tools.NewNatives(tc.list); err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: %v, want it to say %q", tc.name, err, tc.says)
		}
	}

	natives, err := tools.NewNatives([]tools.Native{
		{Spec: tools.Spec{Name: "lookup", Origin: tools.OriginMCP}, Run: echo},
		{Spec: tools.Spec{Name: "Z" + strings.Repeat("-", 63)}, Run: echo},
	})
	if err != nil || len(natives) != 2 {
		t.Fatalf("two good tools: %v, %v", natives, err)
	}
	n, ok := natives.Lookup("lookup")
	if !ok || n.Spec.Origin != tools.OriginNative {
		t.Fatalf("lookup: %+v, %v; want it marked native whatever it claimed", n.Spec, ok)
	}
	if out, err := n.Run(context.Background(), tools.Call{Arguments: `{"q":1}`}); err != nil || out != `{"q":1}` {
		t.Fatalf("the tool ran: %q, %v", out, err)
	}
	if _, ok := natives.Lookup("missing"); ok {
		t.Fatal("a tool never registered was found")
	}
	if tools.IsBuiltin("lookup") {
		t.Fatal("a native tool is reported built-in")
	}
}

// TestAHandoffToolNamesItsTarget holds the handoff tool's shape: the
// name given, a description naming the target (and what it is for), and
// no arguments.
func TestAHandoffToolNamesItsTarget(t *testing.T) {
	plain := tools.Handoff("transfer_to_billing", "Billing", "")
	if plain.Name != "transfer_to_billing" || plain.Description != "Hand the conversation to Billing." || plain.Origin != tools.OriginHandoff {
		t.Fatalf("handoff %+v", plain)
	}
	described := tools.Handoff("transfer_to_billing", "Billing", "Invoices and refunds.")
	if described.Description != "Hand the conversation to Billing. Invoices and refunds." {
		t.Fatalf("described handoff: %q", described.Description)
	}
	checkSchema(t, plain.Name, plain.Parameters)
	var schema struct{ Properties map[string]any }
	json.Unmarshal(plain.Parameters, &schema)
	if len(schema.Properties) != 0 {
		t.Fatalf("a handoff takes arguments: %s", plain.Parameters)
	}
}

// TestTheTaskVerbsAreKnownByName holds IsTaskVerb and that an unknown
// selectable name is refused by Lookup.
func TestTheTaskVerbsAreKnownByName(t *testing.T) {
	for _, s := range tools.Tasks {
		if !tools.IsTaskVerb(s.Name) {
			t.Errorf("%s is not a task verb", s.Name)
		}
	}
	for _, name := range []string{tools.TodoWrite.Name, tools.ExecCommand, "spawn", ""} {
		if tools.IsTaskVerb(name) {
			t.Errorf("%q is taken for a task verb", name)
		}
	}
	if _, ok := tools.Lookup("no_such_tool"); ok {
		t.Fatal("an unknown selectable tool was found")
	}
	for _, s := range tools.Selectable {
		if got, ok := tools.Lookup(s.Name); !ok || got.Name != s.Name {
			t.Errorf("the selectable %s is not found", s.Name)
		}
	}
}

// TestTheBuiltinToolsTraits pins which built-in tools planning allows
// (what runs' allow-list named before it became a trait), which always
// ask, and which stream.
func TestTheBuiltinToolsTraits(t *testing.T) {
	var readOnly, asks, streams []string
	for _, group := range builtins() {
		for _, s := range group {
			if s.ReadOnly {
				readOnly = append(readOnly, s.Name)
			}
			if s.AlwaysAsks {
				asks = append(asks, s.Name)
			}
			if s.Streams {
				streams = append(streams, s.Name)
			}
		}
	}
	slices.Sort(readOnly)
	if want := []string{"get_workflow", "list_files", "read_file", "read_skill", "task_status"}; !slices.Equal(readOnly, want) {
		t.Errorf("planning allows %v, want %v", readOnly, want)
	}
	if !slices.Equal(asks, []string{"save_workflow"}) {
		t.Errorf("always asking: %v", asks)
	}
	if !slices.Equal(streams, []string{"exec_command"}) {
		t.Errorf("streaming: %v", streams)
	}
}
