// The /ws and SSE event vocabulary, mirroring core/domain/event.go: one
// frame {type, seq, payload} per event. Types this build does not know stay
// representable (UnknownEvent) so they are shown generically, never dropped.

export interface RunStarted { run_id: string; session_id: string; input: string; task_id?: string; parent_session_id?: string }
export interface AgentStart { run_id: string; agent_name: string; agent_config_id?: string }
export interface Delta { run_id: string; delta: string }
export interface TextDone { run_id: string; text: string }
export interface ToolCall { run_id: string; tool_call_id: string; tool_name: string; arguments: string; needs_approval: boolean }
export interface ToolProgress { run_id: string; call_id: string; tool_name: string; delta: string; renderer?: string }
export interface ToolResult {
  run_id: string
  tool_call_id: string
  output: string
  title?: string
  summary?: string
  renderer?: string
  is_error?: boolean
  extra?: Record<string, string>
}
export interface Handoff { run_id: string; from: string; to: string; from_id?: string; to_id?: string }
export interface Compaction { run_id: string; phase: 'started' | 'finished' | string; detail?: string }
export interface Output { run_id: string; final_output: string }
export interface RunIdOnly { run_id: string }
export interface Cancelled { run_id: string; reason?: string }
export interface Diagnostic { run_id: string; type: string; code?: string; message?: string; details?: Record<string, string> }
export interface Gap { run_id: string; dropped: number; last_good: number; next: number }
export interface RunErrorPayload { run_id?: string; session_id?: string; code: string; message: string; guardrail?: string; stage?: string }
export interface Injected { run_id: string; input: string; index: number }
export interface TitleUpdated { session_id: string; title: string }
export interface ProjectBound { session_id: string; project_id: string }
export interface TraceSpan { run_id: string; trace_id: string; span_id: string; parent_id?: string; kind?: string; name?: string; error?: string }

interface Frame<T extends string, P> { type: T; seq?: number; payload: P }

export type KnownEvent =
  | Frame<'run.started', RunStarted>
  | Frame<'run.agent_start', AgentStart>
  | Frame<'run.step', Delta>
  | Frame<'run.reasoning', Delta>
  | Frame<'run.message', TextDone>
  | Frame<'run.reasoning_item', TextDone>
  | Frame<'run.tool_call', ToolCall>
  | Frame<'run.tool_progress', ToolProgress>
  | Frame<'run.tool_result', ToolResult>
  | Frame<'run.handoff', Handoff>
  | Frame<'run.compaction', Compaction>
  | Frame<'run.output', Output>
  | Frame<'run.interrupted', RunIdOnly>
  | Frame<'run.diagnostic', Diagnostic>
  | Frame<'run.gap', Gap>
  | Frame<'run.error', RunErrorPayload>
  | Frame<'run.cancelled', Cancelled>
  | Frame<'run.injected', Injected>
  | Frame<'session.title_updated', TitleUpdated>
  | Frame<'session.project_bound', ProjectBound>
  | Frame<'task.updated', Record<string, unknown>>
  | Frame<'trace.span', TraceSpan>

/** An event type this build does not know: kept with its raw payload. */
export interface UnknownEvent { type: string; seq?: number; payload: unknown; unknown: true }

export type ServerEvent = KnownEvent | UnknownEvent

export const KNOWN_EVENT_TYPES = new Set<string>([
  'run.started', 'run.agent_start', 'run.step', 'run.reasoning', 'run.message', 'run.reasoning_item',
  'run.tool_call', 'run.tool_progress', 'run.tool_result', 'run.handoff', 'run.compaction', 'run.output',
  'run.interrupted', 'run.diagnostic', 'run.gap', 'run.error', 'run.cancelled', 'run.injected',
  'session.title_updated', 'session.project_bound', 'task.updated', 'trace.span',
])

/** Final events end a run's stream; run.interrupted does not (a decision resumes the same run). */
export function isFinal(type: string): boolean {
  return type === 'run.output' || type === 'run.error' || type === 'run.cancelled'
}

/** Parses one frame into a typed event; anything unrecognised becomes an UnknownEvent. */
export function parseFrame(data: unknown): ServerEvent | { type: 'auth.ok' } | { type: 'error'; payload: { code: string; message: string } } | null {
  if (!data || typeof data !== 'object') return null
  const f = data as { type?: unknown; seq?: unknown; payload?: unknown }
  if (typeof f.type !== 'string') return null
  if (f.type === 'auth.ok') return { type: 'auth.ok' }
  if (f.type === 'error') return { type: 'error', payload: (f.payload ?? {}) as { code: string; message: string } }
  const seq = typeof f.seq === 'number' ? f.seq : undefined
  if (KNOWN_EVENT_TYPES.has(f.type)) return { type: f.type, seq, payload: f.payload ?? {} } as KnownEvent
  return { type: f.type, seq, payload: f.payload, unknown: true }
}

/** The run an event belongs to, when it names one. */
export function runIdOf(ev: ServerEvent): string | undefined {
  const p = ev.payload as { run_id?: unknown } | null
  return p && typeof p.run_id === 'string' && p.run_id ? p.run_id : undefined
}

// Client → server commands.
export type ClientCommand =
  | { type: 'run.create'; payload: { session_id: string; input: string; agent_config_id?: string; plan?: boolean } }
  | { type: 'run.subscribe'; payload: { run_id: string; from_seq: number } }
  | { type: 'run.cancel'; payload: { run_id: string; mode?: 'abort' | 'graceful' } }
  | { type: 'run.inject'; payload: { run_id: string; queue: 'steer' | 'next_turn' | 'follow_up'; input: string } }
  | { type: 'tool.approve'; payload: { tool_call_id: string; scope?: 'once' | 'same' | 'all' } }
  | { type: 'tool.reject'; payload: { tool_call_id: string; reason?: string } }
