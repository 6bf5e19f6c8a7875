// Where the server's per-field messages land in the agent form. The API
// names a field by its path in the body ("approval.approve_tools[1]",
// "resilience.fallback_models[0].model", "tools[2]"); the form draws some
// of those paths as one control (a list, a JSON text), so a message goes
// to the nearest field the form draws, saying which part it is about.

import { JSON_FIELDS, TEMPLATES, type AgentBody } from './agentShape'

type Obj = Record<string, unknown>

export interface PlacedErrors {
  /** Messages by the key of the form field that shows them. */
  byField: Record<string, string>
  /** tools[i] messages by the tool name that was sent at i (the list may change after). */
  byTool: Record<string, string>
  /** Messages no field shows, as [key, message]: the form lists them at the top. */
  stray: [string, string][]
}

/** Paths some messages use for a field the form keeps under another key. */
const ALIASES: Record<string, string> = { provider: 'provider_id' }

/** The top-level fields of an agent the form draws as one control each. */
const TOP_FIELDS = ['name', 'avatar', 'description', 'instructions', 'model', 'provider_id', 'context_window', 'tools', 'skills', 'handoffs', 'error_handlers']

/** The groups of knobs the form draws knob by knob (GroupEditor). */
export const OBJECT_GROUPS = ['behavior', 'resilience', 'guardrails', 'session', 'approval', 'compaction', 'model_settings'] as const

/** Every field key the form draws for this agent, as GroupEditor draws them (nested objects knob by knob, JSON fields whole). */
export function agentFieldKeys(a: AgentBody): Set<string> {
  const out = new Set(TOP_FIELDS)
  const walk = (path: string, value: Obj, template?: Obj) => {
    for (const k of new Set([...Object.keys(template ?? {}), ...Object.keys(value)])) {
      const p = `${path}.${k}`
      out.add(p)
      const v = k in value ? value[k] : template?.[k]
      if (!JSON_FIELDS.has(p) && v && typeof v === 'object' && !Array.isArray(v)) walk(p, v as Obj)
    }
  }
  for (const g of OBJECT_GROUPS) walk(g, (a[g] ?? {}) as Obj, TEMPLATES[g])
  return out
}

/**
 * Places the API's field messages: on the field of that key, else on the
 * nearest enclosing field the form draws (the message led by the part it
 * is about: the name sent at that index, or "item N"), else in stray.
 * nameOf turns a sent value into what the person sees (a handoff's agent
 * id into its name).
 */
export function placeErrors(fields: Record<string, string>, known: Set<string>, sent: AgentBody, nameOf: (field: string, value: string) => string = (_, v) => v): PlacedErrors {
  const out: PlacedErrors = { byField: {}, byTool: {}, stray: [] }
  const add = (field: string, text: string) => {
    out.byField[field] = out.byField[field] ? `${out.byField[field]}; ${text}` : text
  }
  for (const [key, message] of Object.entries(fields)) {
    const tool = /^tools\[(\d+)\]$/.exec(key)
    if (tool && sent.tools[Number(tool[1])] !== undefined) {
      out.byTool[sent.tools[Number(tool[1])]] = message
      continue
    }
    const segments = aliased(key.match(/[^.[\]]+|\[\d+\]/g) ?? [key])
    let placed = false
    for (let n = segments.length; n > 0 && !placed; n--) {
      const field = join(segments.slice(0, n))
      if (!known.has(field)) continue
      const part = describePart(field, segments.slice(n), sent, nameOf)
      add(field, part ? `${part}: ${message}` : message)
      placed = true
    }
    if (!placed) out.stray.push([key, message])
  }
  return out
}

function aliased(segments: string[]): string[] {
  const first = ALIASES[segments[0]]
  return first ? [first, ...segments.slice(1)] : segments
}

/** Segments back into a path: "a", "b", "[0]" → "a.b[0]". */
function join(segments: string[]): string {
  return segments.reduce((p, s) => (s.startsWith('[') ? p + s : p ? `${p}.${s}` : s), '')
}

/** The part of a field a message is about: "owl", "item 2, model", "max_turns.final_output". */
function describePart(field: string, rest: string[], sent: AgentBody, nameOf: (field: string, value: string) => string): string {
  const names: string[] = []
  let value = valueAt(sent, field)
  for (const s of rest) {
    const index = /^\[(\d+)\]$/.exec(s)
    if (index) {
      const item = Array.isArray(value) ? value[Number(index[1])] : undefined
      names.push(typeof item === 'string' ? nameOf(field, item) : `item ${Number(index[1]) + 1}`)
      value = item
    } else {
      names.push(s)
      value = value && typeof value === 'object' ? (value as Obj)[s] : undefined
    }
  }
  const [first, ...more] = names
  if (first?.startsWith('item ') && more.length) return `${first}, ${more.join('.')}`
  return names.join('.')
}

function valueAt(body: AgentBody, path: string): unknown {
  let v: unknown = body
  for (const s of path.match(/[^.[\]]+|\[\d+\]/g) ?? []) {
    if (v === null || typeof v !== 'object') return undefined
    const index = /^\[(\d+)\]$/.exec(s)
    v = index ? (v as unknown[])[Number(index[1])] : (v as Obj)[s]
  }
  return v
}
