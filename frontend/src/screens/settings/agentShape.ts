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
export const JSON_FIELDS = new Set(['guardrails.output_schema', 'resilience.fallback_models', 'error_handlers', 'skills'])

/** Nullable booleans: unset (the default), on or off. */
export const TRISTATE = new Set(['subagents', 'parallel_tool_calls'])

export const HINTS: Record<string, string> = {
  'behavior.max_turns': 'Model turns per run; 0 = the default (10)',
  'behavior.stop_at_tools': 'Comma-separated tool names: the run ends after a turn that called any of them',
  'behavior.max_tool_concurrency': 'Tool calls run at once; 0 = the default',
  'approval.approve_tools': '["*"] or tool names whose calls wait for your decision (comma-separated)',
  'compaction.compaction_threshold_tokens': 'Fold when the history passes this many tokens; 0 = 50000',
  'compaction.compaction_window': 'Recent entries kept intact; 0 = 10',
  'session.history_limit': 'Recent items sent per turn; 0 = all',
  skills: 'null = every visible skill, [] = none, or a list of skill ids',
  tools: 'Built-in tool names the agent may use (comma-separated); MCP tools are picked below',
  error_handlers: 'Keyed by max_turns / model_refusal / invalid_final_output: {"final_output": …, "exclude_from_history": false}',
  'guardrails.output_schema': 'A JSON Schema (object) the final output must match',
  'resilience.fallback_models': 'Tried in order: [{"model": "…", "provider_id": "…"}]',
  'behavior.subagents': 'Background task tools on chat runs; default on',
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
