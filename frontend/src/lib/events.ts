// The /ws and SSE event vocabulary: one frame {type, seq, payload} per event.
// The frames are generated from the API document (apiTypes.gen.ts), whose
// ServerEvent and ClientCommand components the server builds from its event
// and command tables (core/domain's vocabulary): nothing here copies them.
// Types this build does not know stay representable (UnknownEvent) so they
// are shown generically, never dropped.
import type { components } from './apiTypes.gen'

type Schemas = components['schemas']

/** Every event the server documents, told apart by type. */
export type KnownEvent = Schemas['ServerEvent']

/** The type of an event the server documents. */
export type KnownEventType = KnownEvent['type']

/** The payload of one event type, e.g. EventPayload<'run.tool_call'>. */
export type EventPayload<T extends KnownEventType> = Extract<KnownEvent, { type: T }>['payload']

/** An event type this build does not know: kept with its raw payload. */
export interface UnknownEvent { type: string; seq?: number; payload: unknown; unknown: true }

export type ServerEvent = KnownEvent | UnknownEvent

// Every documented type, at run time: a Record over the generated union, so
// the type check fails when the document gains (or loses) an event type this
// list does not follow.
const KNOWN: Record<KnownEventType, true> = {
  'run.started': true, 'run.agent_start': true, 'run.step': true, 'run.reasoning': true, 'run.message': true,
  'run.reasoning_item': true, 'run.tool_call': true, 'run.tool_progress': true, 'run.tool_result': true,
  'run.handoff': true, 'run.compaction': true, 'run.output': true, 'run.interrupted': true, 'run.diagnostic': true,
  'run.gap': true, 'run.error': true, 'run.cancelled': true, 'run.injected': true, 'session.title_updated': true,
  'session.project_bound': true, 'task.updated': true, 'trace.span': true,
}

export const KNOWN_EVENT_TYPES: ReadonlySet<string> = new Set(Object.keys(KNOWN))

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

/** A client → server command of the bus. */
export type ClientCommand = Schemas['ClientCommand']
