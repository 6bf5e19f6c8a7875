package tools_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/agents-server/agents-server/core/tools"
)

// pinnedSchemas are the built-in tools' parameter schemas as they were
// written by hand before they were derived from argument structs: what a
// model has always been sent. A derived schema must say the same.
var pinnedSchemas = map[string]string{
	"todo_write":    `{"type":"object","properties":{"todos":{"type":"array","items":{"type":"object","properties":{"content":{"type":"string"},"status":{"type":"string","enum":["pending","in_progress","completed"]}},"required":["content","status"],"additionalProperties":false}}},"required":["todos"],"additionalProperties":false}`,
	"submit_plan":   `{"type":"object","properties":{"plan":{"type":"string","description":"The plan, in Markdown: the steps, the files or systems each one touches, and how you will check the result"}},"required":["plan"],"additionalProperties":false}`,
	"read_skill":    `{"type":"object","properties":{"name":{"type":"string","description":"The skill's name as the index gives it"}},"required":["name"],"additionalProperties":false}`,
	"get_workflow":  `{"type":"object","properties":{"name":{"type":"string"}},"required":["name"],"additionalProperties":false}`,
	"save_workflow": `{"type":"object","properties":{"name":{"type":"string"},"description":{"type":"string","description":"What the workflow is for: requests are matched against it"},"steps":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"},"agent":{"type":"string","description":"The agent that runs the step, by name"},"prompt":{"type":"string"},"gate":{"type":"boolean"},"gate_pass":{"type":"string"},"gate_fail":{"type":"string"},"pause_before":{"type":"boolean","description":"Wait for a person's approval before the step"},"compact_before":{"type":"boolean"},"on_success":{"type":"string"},"on_failure":{"type":"string"}},"required":["name","agent","prompt"],"additionalProperties":false}},"budget":{"type":"object","properties":{"max_steps":{"type":"integer"},"max_tokens":{"type":"integer"},"max_minutes":{"type":"integer"},"max_laps":{"type":"integer"}},"additionalProperties":false}},"required":["name","description","steps"],"additionalProperties":false}`,
	"spawn_task":    `{"type":"object","properties":{"prompt":{"type":"string","description":"The whole brief: what to do, what to report back"},"label":{"type":"string","description":"A few words naming the task, shown in the task list"},"agent":{"type":"string","description":"The agent to run it: one you can hand off to, by name; omit for yourself"},"workflow":{"type":"string","description":"A workflow to start instead, by name (the prompt is then its brief); omit agent with it"}},"required":["prompt"],"additionalProperties":false}`,
	"task_status":   `{"type":"object","properties":{"task_id":{"type":"string"}},"additionalProperties":false}`,
	"task_retry":    `{"type":"object","properties":{"task_id":{"type":"string"}},"required":["task_id"],"additionalProperties":false}`,
	"task_stop":     `{"type":"object","properties":{"task_id":{"type":"string"}},"required":["task_id"],"additionalProperties":false}`,
	"exec_command":  `{"type":"object","properties":{"cmd":{"type":"string","description":"The shell command"},"workdir":{"type":["string","null"],"description":"Working directory (default /workspace; relative paths are under /workspace)"},"session_id":{"type":["string","null"],"description":"Name of a persistent shell to run in (created on first use)"},"timeout_seconds":{"type":["integer","null"],"description":"Give up after this many seconds (default 600, at most 3600)"}},"required":["cmd"],"additionalProperties":false}`,
	"read_file":     `{"type":"object","properties":{"path":{"type":"string"},"offset":{"type":["integer","null"],"description":"First line to return, 1-based (default 1)"},"limit":{"type":["integer","null"],"description":"How many lines to return (default: all that fit)"}},"required":["path"],"additionalProperties":false}`,
	"list_files":    `{"type":"object","properties":{"path":{"type":["string","null"],"description":"Directory to list (default /workspace)"},"depth":{"type":["integer","null"],"description":"How many levels deep (default 2, at most 10)"}},"additionalProperties":false}`,
	"write_file":    `{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["path","content"],"additionalProperties":false}`,
	"edit_file":     `{"type":"object","properties":{"path":{"type":"string"},"old_string":{"type":"string"},"new_string":{"type":"string"},"replace_all":{"type":["boolean","null"]}},"required":["path","old_string","new_string"],"additionalProperties":false}`,
	"apply_patch":   `{"type":"object","properties":{"input":{"type":"string","description":"The whole patch, from *** Begin Patch to *** End Patch"}},"required":["input"],"additionalProperties":false}`,
}

// TestBuiltinSchemasSayWhatTheyAlwaysSaid holds every built-in tool's
// schema to its pinned text, compared as JSON Schema rather than as
// bytes: the same types (a type list as a set), enums, descriptions,
// required fields (as a set) and additionalProperties, property by
// property.
func TestBuiltinSchemasSayWhatTheyAlwaysSaid(t *testing.T) {
	all := append([]tools.Spec{tools.TodoWrite, tools.SubmitPlan, tools.ReadSkill, tools.GetWorkflow, tools.SaveWorkflow}, tools.Tasks...)
	all = append(all, tools.Sandbox...)
	if len(all) != len(pinnedSchemas) {
		t.Errorf("%d built-in tools, %d pinned schemas", len(all), len(pinnedSchemas))
	}
	for _, s := range all {
		pinned, ok := pinnedSchemas[s.Name]
		if !ok {
			t.Errorf("%s has no pinned schema", s.Name)
			continue
		}
		got, want := normalSchema(t, s.Parameters), normalSchema(t, json.RawMessage(pinned))
		if !reflect.DeepEqual(got, want) {
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(want)
			t.Errorf("%s's schema changed:\n got %s\nwant %s", s.Name, g, w)
		}
	}
}

// normalSchema decodes a schema with its sets sorted: "type" lists and
// "required" say the same in any order.
func normalSchema(t *testing.T, raw json.RawMessage) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("not JSON: %v: %s", err, raw)
	}
	return normalize(v)
}

func normalize(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = normalize(e)
			if list, ok := x[k].([]any); ok && (k == "type" || k == "required") {
				slices.SortFunc(list, func(a, b any) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
			}
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = normalize(e)
		}
		return x
	}
	return v
}
