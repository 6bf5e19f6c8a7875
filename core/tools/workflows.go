package tools

import "encoding/json"

// OriginWorkflows marks the workflow authoring tools, which an agent gets
// on its chat runs only with behavior.workflow_authoring.
const OriginWorkflows = "workflows"

// GetWorkflow reads a workflow definition by name, steps and agents by
// name.
var GetWorkflow = Spec{
	Name:        "get_workflow",
	Description: "Read a workflow definition by name: its description, steps (agents and edges by name) and budget.",
	Parameters:  json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"],"additionalProperties":false}`),
	Origin:      OriginWorkflows,
}

// SaveWorkflow creates or replaces (by name) one of the person's
// workflows; every save waits for the person's approval.
var SaveWorkflow = Spec{
	Name: "save_workflow",
	Description: "Create a workflow, or replace the one with this name: a fixed sequence of steps, each run by a named agent " +
		"on one conversation. Edges (on_success, on_failure) name a step or end; empty on_success goes to the next step, " +
		"empty on_failure fails the workflow; naming an earlier step makes a loop (bounded by budget.max_laps, default 3). " +
		"A gate step ends its answer with PASS or FAIL (or its own gate_pass / gate_fail words), which picks the edge. " +
		"The person reviews and approves every save before it happens.",
	Parameters: json.RawMessage(`{"type":"object","properties":{` +
		`"name":{"type":"string"},"description":{"type":"string","description":"What the workflow is for: requests are matched against it"},` +
		`"steps":{"type":"array","items":{"type":"object","properties":{` +
		`"name":{"type":"string"},"agent":{"type":"string","description":"The agent that runs the step, by name"},` +
		`"prompt":{"type":"string"},"gate":{"type":"boolean"},"gate_pass":{"type":"string"},"gate_fail":{"type":"string"},` +
		`"pause_before":{"type":"boolean","description":"Wait for a person's approval before the step"},` +
		`"compact_before":{"type":"boolean"},"on_success":{"type":"string"},"on_failure":{"type":"string"}},` +
		`"required":["name","agent","prompt"],"additionalProperties":false}},` +
		`"budget":{"type":"object","properties":{"max_steps":{"type":"integer"},"max_tokens":{"type":"integer"},` +
		`"max_minutes":{"type":"integer"},"max_laps":{"type":"integer"}},"additionalProperties":false}},` +
		`"required":["name","description","steps"],"additionalProperties":false}`),
	Origin: OriginWorkflows,
}
