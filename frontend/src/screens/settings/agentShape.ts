// The agent object the form edits: a new agent's defaults, the enums the
// document declares, and the knobs of model_settings (absent until set).
import type { Agent } from '../../lib/api'

export type AgentBody = Omit<Agent, 'id' | 'owner_id' | 'scope' | 'created_at' | 'updated_at'>

export const GROUPS = ['behavior', 'resilience', 'guardrails', 'session', 'approval', 'compaction', 'model_settings', 'tools', 'skills', 'handoffs', 'error_handlers'] as const

export const ENUMS: Record<string, string[]> = {
  handoff_input_filter: ['', 'remove_all_tools'],
  reasoning_item_id_policy: ['', 'preserve', 'omit'],
  tool_not_found_behavior: ['', 'error'],
  compaction_mode: ['', 'summary', 'reset', 'hybrid'],
  reasoning_effort: ['', 'minimal', 'low', 'medium', 'high'],
  reasoning_summary: ['', 'auto', 'concise', 'detailed'],
  verbosity: ['', 'low', 'medium', 'high'],
}

/** Fields edited as JSON (free-form values). */
export const JSON_FIELDS = new Set(['guardrails.output_schema', 'resilience.fallback_models', 'error_handlers'])

/** Nullable booleans: unset (the default), on or off. */
export const TRISTATE = new Set(['subagents', 'parallel_tool_calls'])

/** Help under a knob, in plain words: what it does and what its empty or zero value means. */
export const HINTS: Record<string, string> = {
  'behavior.max_turns': 'Model turns per run; 0 = the default (10)',
  'behavior.stop_at_tools': 'Comma-separated tool names: the run ends after a turn that called any of them',
  'behavior.max_tool_concurrency': 'Tool calls run at once; 0 = the default',
  'behavior.disable_tool_choice_reset': 'Normally a forced tool choice is lifted after a tool call, so the model can answer; tick to keep forcing it',
  'behavior.tool_not_found_behavior': 'default: tell the model the tool does not exist so it can correct itself; error: end the run',
  'behavior.reasoning_item_id_policy': 'Whether reasoning items keep their ids when sent back to the model',
  'behavior.workflow_authoring': 'Gives chat runs get_workflow and save_workflow (every save is approved first)',
  'behavior.handoff_description': 'Read by agents that may hand off to this one, so they know when to',
  'behavior.handoff_input_filter': 'remove_all_tools: the next agent sees the conversation without tool calls and results',
  'approval.approve_tools': '["*"] or tool names whose calls wait for your decision (comma-separated)',
  'compaction.compaction_enabled': 'Fold older history into a summary when it grows past the threshold (and when the model says the context overflowed)',
  'compaction.compaction_threshold_tokens': 'Fold when the history passes this many tokens; 0 = 50000',
  'compaction.compaction_window': 'Recent entries kept intact; 0 = 10',
  'compaction.compaction_model': 'The model that writes the summary; empty = this agent\'s model',
  'compaction.compaction_mode': 'summary (default) folds into a summary; reset drops the old history; hybrid does both',
  'session.history_limit': 'Recent items sent per turn; 0 = all',
  'session.prompt_id': 'An OpenAI stored prompt to use (Responses API only)',
  skills: 'The skills index in its instructions and read_skill cover these; write or import skills in Settings → Skills',
  error_handlers: 'Keyed by max_turns / model_refusal / invalid_final_output: {"final_output": …, "exclude_from_history": false}',
  'guardrails.guardrails': 'Guardrail names (comma-separated), from Settings → Guardrails',
  'guardrails.output_schema': 'A JSON Schema (object) the final output must match; null = plain text',
  'resilience.retry_enabled': 'Retry a model call that failed for a passing reason (rate limit, overload)',
  'resilience.fallback_models': 'Tried in order: [{"model": "…", "provider_id": "…"}]',
  'behavior.subagents': 'Background task tools on chat runs; default on',
  'model_settings.temperature': 'Randomness, 0 to 2; empty = the model\'s default',
  'model_settings.top_p': 'Nucleus sampling, above 0 up to 1; empty = the model\'s default',
  'model_settings.max_output_tokens': 'Longest answer per turn, in tokens; empty = the model\'s default',
  'model_settings.tool_choice': 'auto, required, none or a tool name; empty = auto',
  context_window: 'Declared tokens the model takes in; 0 = unknown',
}

/** Plain-language labels where a knob's key says too little; the others read as their key. */
export const LABELS: Record<string, string> = {
  'approval.approve_tools': 'Ask before running',
  'behavior.stop_at_tools': 'Stop after these tools',
  'behavior.max_tool_concurrency': 'Tool calls at once',
  'behavior.disable_tool_choice_reset': 'Keep forcing the tool choice',
  'behavior.tool_not_found_behavior': 'When the model calls an unknown tool',
  'behavior.handoff_description': 'Description for agents handing off here',
  'behavior.handoff_input_filter': 'History passed on a handoff',
  'behavior.workflow_authoring': 'May write workflows',
  'behavior.subagents': 'Background tasks',
  'compaction.compaction_enabled': 'Fold old history',
  'compaction.compaction_threshold_tokens': 'Fold past this many tokens',
  'compaction.compaction_window': 'Recent entries kept',
  'compaction.compaction_model': 'Summary model',
  'compaction.compaction_prompt': 'Summary prompt',
  'compaction.compaction_mode': 'Fold mode',
  'session.history_limit': 'History items per turn',
  'session.prompt_id': 'Stored prompt id',
  'session.prompt_version': 'Stored prompt version',
  'guardrails.guardrails': 'Guardrails to apply',
  'guardrails.output_schema': 'Output schema',
  'resilience.retry_enabled': 'Retry failed model calls',
  'resilience.retry_policy': 'Retry policy',
  'resilience.fallback_models': 'Fallback models',
  'model_settings.max_output_tokens': 'Max answer tokens',
  'model_settings.parallel_tool_calls': 'Parallel tool calls',
}

/** Number knobs' bounds, as AgentCompactionInput in the OpenAPI document declares them. */
export const BOUNDS: Record<string, { min?: number; max?: number }> = {
  'compaction.compaction_threshold_tokens': { min: 0, max: 10_000_000 },
  'compaction.compaction_window': { min: 0, max: 10_000 },
}

/** model_settings knobs are absent until set; the form shows them all. */
export const MODEL_SETTINGS: Record<string, unknown> = {
  temperature: null, top_p: null, max_output_tokens: null, parallel_tool_calls: null,
  reasoning_effort: '', reasoning_summary: '', tool_choice: '', verbosity: '',
}

export function newAgent(): AgentBody {
  return {
    name: '', avatar: '', description: '', instructions: '', model: '', provider_id: '', context_window: 0,
    behavior: { max_turns: 0, handoff_description: '', disable_tool_choice_reset: false, stop_at_tools: '', handoff_input_filter: '', max_tool_concurrency: 0, tool_not_found_behavior: '', reasoning_item_id_policy: '', workflow_authoring: false },
    resilience: { retry_enabled: false, retry_policy: { max_retries: 0, initial_backoff_ms: 0, max_backoff_ms: 0 }, fallback_models: [] },
    guardrails: { guardrails: [] },
    session: { prompt_id: '', prompt_version: '', history_limit: 0 },
    approval: { approve_tools: [] },
    compaction: { compaction_enabled: false, compaction_threshold_tokens: 0, compaction_window: 0, compaction_model: '', compaction_prompt: '', compaction_mode: '' },
    model_settings: {}, tools: [], skills: null, handoffs: [], error_handlers: {},
  }
}

/** The body to send: model_settings without its unset knobs (PUT replaces the whole agent). */
export function toBody(a: AgentBody): AgentBody {
  const set = (o: object) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== null && v !== undefined && v !== ''))
  const guardrails = { ...a.guardrails }
  if (guardrails.output_schema == null) delete guardrails.output_schema
  const behavior = { ...a.behavior }
  if (behavior.subagents == null) delete behavior.subagents
  return { ...a, behavior, guardrails, model_settings: set(a.model_settings ?? {}) }
}

/** Knobs a stored agent may omit, shown anyway so they can be set. */
export const TEMPLATES: Record<string, Record<string, unknown>> = {
  model_settings: MODEL_SETTINGS,
  guardrails: { guardrails: [], output_schema: null },
  behavior: { subagents: null },
}
