package httpapi

import (
	"fmt"
	"reflect"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// The API document's words about types that live in core: core carries
// json tags only, and what a field means to a client is written here, at
// the edge that publishes it.

// fieldDocs describe the fields of core types, by type and JSON name.
var fieldDocs = map[reflect.Type]map[string]string{
	reflect.TypeFor[domain.AgentSpec](): {
		"avatar":         "A picture from the UI's catalog, /avatars/<name>.svg; empty renders an initial",
		"description":    "What the agent is for, in a sentence; never sent to the model",
		"provider_id":    "The provider whose endpoint and credential the agent uses; empty fails the run's pre-flight",
		"context_window": "Declared context window in tokens; 0 = unknown",
		"tools":          "Built-in tool names the agent may use",
		"skills":         "Skill ids: null = every visible skill, [] = none",
		"handoffs":       "Ids of agents this one may hand the conversation to",
	},
	reflect.TypeFor[domain.AgentBehavior](): {
		"max_turns":               "Model turns per run; 0 = the default (10)",
		"handoff_description":     "What other agents are told this one is for when they may hand off to it",
		"stop_at_tools":           "Comma-separated tool names: the run ends after a turn that called any of them",
		"handoff_input_filter":    "What the next agent sees of the history on a handoff",
		"max_tool_concurrency":    "Tool calls run at once; 0 = the default",
		"tool_not_found_behavior": "Empty feeds an unknown tool name back to the model; error ends the run",
		"workflow_authoring":      "Gives chat runs get_workflow / save_workflow",
		"subagents":               "Background task tools on chat runs; absent = on",
	},
	reflect.TypeFor[domain.DeltaPayload](): {
		"first_seq": "On a replay only: this one event stands for the fragments first_seq…seq, merged",
	},
	reflect.TypeFor[domain.ToolProgressPayload](): {
		"first_seq": "On a replay only: this one event stands for the progress first_seq…seq, merged",
	},
	reflect.TypeFor[domain.AgentResilience](): {
		"fallback_models": "Tried in order when the primary model keeps failing",
	},
	reflect.TypeFor[domain.AgentGuardrails](): {
		"guardrails":    "Guardrail names; each carries the stages it inspects",
		"output_schema": "A JSON Schema (object) the final output must match",
	},
	reflect.TypeFor[domain.AgentSession](): {
		"prompt_id":     "An OpenAI stored prompt",
		"history_limit": "Recent items sent per turn; 0 = all",
	},
	reflect.TypeFor[domain.AgentApproval](): {
		"approve_tools": `["*"] or tool names whose calls wait for a person's decision`,
	},
	reflect.TypeFor[domain.AgentCompaction](): {
		"compaction_threshold_tokens": "Fold when the history passes this many tokens; 0 = 50000",
		"compaction_window":           "Recent entries kept intact; 0 = 10",
	},
	reflect.TypeFor[domain.TaskInfo](): {
		"run_id":           "The current attempt's run: events route by it, and a retry replaces it",
		"attempt":          "1 for the original run, one more per retry",
		"queued":           "Waiting behind the conversation's live-task cap (max_tasks_per_session)",
		"tool_call_id":     "The spawn_task call that started it",
		"child_session_id": "The hidden session its attempts run on: read its messages for the transcript",
		"pending_call_id":  "The call a paused (input_required) task waits on",
		"state":            "A workflow execution's state",
	},
	reflect.TypeFor[domain.WorkflowSpec](): {
		"name":        "Unique, whatever its case, among globals and among the owner's privates",
		"description": "What the workflow is for: an agent matches a request against it when spawn_task lists the workflows",
		"steps":       "In order: success falls through to the next step unless on_success says otherwise",
	},
	reflect.TypeFor[domain.WorkflowStep](): {
		"id":             "Stable and server-assigned: omit it for a new step, send it back to keep a step",
		"agent":          "The id of the agent that runs the step",
		"prompt":         "Starts the step's turn (the brief leads the first step's)",
		"gate":           "The step checks: its verdict (the last non-empty line, or a structured passed/verdict) picks the edge",
		"gate_pass":      "The pass sentinel; empty = PASS",
		"gate_fail":      "The fail sentinel; empty = FAIL",
		"pause_before":   "Hold before the step until a person approves it from the conversation that asked",
		"compact_before": "Fold the conversation into a summary before the step (with its agent's compaction settings)",
		"on_success":     "A step id (or name), end, or empty for the next step",
		"on_failure":     "A step id (or name), end, or empty to fail the execution; an earlier step makes a loop",
	},
	reflect.TypeFor[domain.WorkflowBudget](): {
		"max_steps":   "Step launches per execution, retries included; 0 = no bound (at most 50 anyway)",
		"max_tokens":  "Input plus output tokens of every model call of the execution; 0 = no bound",
		"max_minutes": "The step runs' own time (waits for a person are free); 0 = no bound",
		"max_laps":    "Times one backward edge may be taken; 0 = 3",
	},
	reflect.TypeFor[domain.DiffLine](): {
		"op": "= an unchanged line, - a line of the stored definition that goes, + a line of the proposed one",
	},
	reflect.TypeFor[domain.WorkflowPreview](): {
		"definition": "The proposed definition, drawn as text",
		"replaces":   "The save replaces the caller's workflow of that name (diff holds the change)",
	},
	reflect.TypeFor[domain.RunStartedPayload](): {
		"source":  "Who wrote the input: absent for a person, task_notification for the background results a wake-up run reads",
		"task_id": "Present on a background task's run: the task it is an attempt of",
	},
	reflect.TypeFor[domain.ModelSettings](): {
		"tool_choice": fmt.Sprintf("%s, %s, %s, or a tool name", domain.ToolChoiceAuto, domain.ToolChoiceRequired, domain.ToolChoiceNone),
	},
}

// docsOf is fieldDocs for a struct type, with those of the structs it
// embeds (their fields are its own on the wire).
func docsOf(t reflect.Type) map[string]string {
	if t.Kind() != reflect.Struct {
		return nil
	}
	out := map[string]string{}
	for i := range t.NumField() {
		if f := t.Field(i); f.Anonymous && f.Tag.Get("json") == "" {
			for k, v := range docsOf(f.Type) {
				out[k] = v
			}
		}
	}
	for k, v := range fieldDocs[t] {
		out[k] = v
	}
	return out
}

// enumer is a core enum type: its Values are the one list of what it may be.
type enumer interface{ Values() []string }

// wireEnums name the core enums a view's plain string field carries, for
// its `enum:"<name>"` tag: the values come from core, never from the tag.
var wireEnums = map[string]enumer{
	"role":            domain.Role(""),
	"scope":           domain.Scope(""),
	"guardrail_stage": domain.GuardrailStage(""),
	"guardrail_mode":  domain.GuardrailMode(""),
	"setting_kind":    domain.SettingKind(""),
	"run_status":      domain.RunStatus(""),
	"token_kind":      domain.TokenKind(""),
	"error_code":      errs.Code(""),
	"sandbox_state":   ports.SandboxState(""),
	"sandbox_type":    sandboxTypes{},
	"mcp_auth_mode":   domain.MCPAuthMode(""),
	"mcp_transport":   domain.MCPTransport(""),
	"mcp_status":      domain.MCPStatus(""),
	"actor_kind":      domain.ActorKind(""),
	"audit_outcome":   domain.AuditOutcome(""),
	"usage_kind":      domain.UsageKind(""),
	"usage_group":     usageGroups{},
	"budget_scope":    domain.BudgetScope(""),
	"budget_period":   domain.BudgetPeriod(""),
	"budget_unit":     domain.BudgetUnit(""),
}

// usageGroups lists what a usage report groups by.
type usageGroups struct{}

func (usageGroups) Values() []string {
	out := make([]string, len(ports.UsageGroups))
	for i, g := range ports.UsageGroups {
		out[i] = string(g)
	}
	return out
}

// sandboxTypes lists the sandbox types of the type table.
type sandboxTypes struct{}

func (sandboxTypes) Values() []string { return domain.SandboxTypeNames() }

// enumValues resolves an enum tag or a core enum type to its values.
func enumValues(tag string, t reflect.Type) ([]string, error) {
	if tag != "" {
		e, ok := wireEnums[tag]
		if !ok {
			return nil, fmt.Errorf("enum tag %q names no enum of wireEnums", tag)
		}
		return e.Values(), nil
	}
	if t.Kind() == reflect.String && t.Implements(reflect.TypeFor[enumer]()) {
		return reflect.Zero(t).Interface().(enumer).Values(), nil
	}
	return nil, nil
}
