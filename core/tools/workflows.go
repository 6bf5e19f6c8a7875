package tools

// OriginWorkflows marks the workflow authoring tools, which an agent gets
// on its chat runs only with behavior.workflow_authoring.
const OriginWorkflows = "workflows"

// GetWorkflow reads a workflow definition by name, steps and agents by
// name.
var GetWorkflow = Spec{
	Name:        "get_workflow",
	Description: "Read a workflow definition by name: its description, steps (agents and edges by name) and budget.",
	Parameters:  parametersOf[GetWorkflowArgs](),
	Origin:      OriginWorkflows,
	ReadOnly:    true,
}

// GetWorkflowArgs are get_workflow's arguments.
type GetWorkflowArgs struct {
	Name string `json:"name"`
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
	Parameters: parametersOf[SaveWorkflowArgs](),
	Origin:     OriginWorkflows,
	AlwaysAsks: true,
}

// SaveWorkflowArgs are save_workflow's arguments: a definition by names
// (core/workflows reads them, strictly).
type SaveWorkflowArgs struct {
	Name        string             `json:"name"`
	Description string             `json:"description" jsonschema:"What the workflow is for: requests are matched against it"`
	Steps       []SaveWorkflowStep `json:"steps"`
	Budget      SaveWorkflowBudget `json:"budget,omitzero"`
}

// SaveWorkflowStep is one step of a saved workflow.
type SaveWorkflowStep struct {
	Name          string `json:"name"`
	Agent         string `json:"agent" jsonschema:"The agent that runs the step, by name"`
	Prompt        string `json:"prompt"`
	Gate          bool   `json:"gate,omitempty"`
	GatePass      string `json:"gate_pass,omitempty"`
	GateFail      string `json:"gate_fail,omitempty"`
	PauseBefore   bool   `json:"pause_before,omitempty" jsonschema:"Wait for a person's approval before the step"`
	CompactBefore bool   `json:"compact_before,omitempty"`
	OnSuccess     string `json:"on_success,omitempty"`
	OnFailure     string `json:"on_failure,omitempty"`
}

// SaveWorkflowBudget bounds a saved workflow's execution.
type SaveWorkflowBudget struct {
	MaxSteps   int `json:"max_steps,omitempty"`
	MaxTokens  int `json:"max_tokens,omitempty"`
	MaxMinutes int `json:"max_minutes,omitempty"`
	MaxLaps    int `json:"max_laps,omitempty"`
}
