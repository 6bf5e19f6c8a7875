// The workflow editor's model: a definition as it is being written, and
// the body PUT/POST sends. Steps carry a key of their own while edited —
// a stored step's id, a local one for a new step — and the edge pickers
// name steps by key, so renaming or moving a step never breaks an edge.
// The body names a stored step by its id and a new one by its name (the
// server resolves names; ids are its to assign). Pure, so it is
// unit-tested.
import type { Schemas } from '../../lib/api'
import type { Workflow } from '../../lib/workflows'
import { END, type FlowStep } from './flow'

export type WorkflowSpec = Schemas['WorkflowSpec']

export interface DraftStep {
  /** The step's id when stored, else a key made here. */
  key: string
  /** The server's id: sent back to keep the step. */
  id?: string
  name: string
  agent: string
  prompt: string
  gate: boolean
  gate_pass: string
  gate_fail: string
  pause_before: boolean
  compact_before: boolean
  /** '' (the plain list), END, or a step's key. */
  on_success: string
  on_failure: string
}

export interface DraftBudget { max_steps: number; max_tokens: number; max_minutes: number; max_laps: number }

export interface Draft { name: string; description: string; steps: DraftStep[]; budget: DraftBudget }

let made = 0
/** A key for a new step, unique in this page's life. */
export const newKey = () => `new-${++made}`

export function newStep(over: Partial<DraftStep> = {}): DraftStep {
  return {
    key: newKey(), name: '', agent: '', prompt: '', gate: false, gate_pass: '', gate_fail: '',
    pause_before: false, compact_before: false, on_success: '', on_failure: '', ...over,
  }
}

/** A stored workflow as a draft (edges by id are already by key); none: a new one with one empty step. */
export function toDraft(w?: Workflow, firstAgent = ''): Draft {
  if (!w) return { name: '', description: '', steps: [newStep({ agent: firstAgent })], budget: { max_steps: 0, max_tokens: 0, max_minutes: 0, max_laps: 0 } }
  return {
    name: w.name,
    description: w.description,
    steps: w.steps.map((s) => ({
      key: s.id, id: s.id, name: s.name, agent: s.agent, prompt: s.prompt, gate: !!s.gate, gate_pass: s.gate_pass ?? '', gate_fail: s.gate_fail ?? '',
      pause_before: !!s.pause_before, compact_before: !!s.compact_before, on_success: s.on_success ?? '', on_failure: s.on_failure ?? '',
    })),
    budget: { max_steps: w.budget.max_steps ?? 0, max_tokens: w.budget.max_tokens ?? 0, max_minutes: w.budget.max_minutes ?? 0, max_laps: w.budget.max_laps ?? 0 },
  }
}

/** An edge as sent: '' and end as they are, a stored step by id, a new one by its name; a step no longer there is no edge. */
function edgeOut(steps: DraftStep[], to: string): string {
  if (!to || to === END) return to
  const s = steps.find((x) => x.key === to)
  if (!s) return ''
  return s.id ?? s.name.trim()
}

/** The body of a create or an update: every step in order, a gate's words only on a gate. */
export function toSpec(d: Draft): Required<Pick<WorkflowSpec, 'name' | 'description' | 'steps' | 'budget'>> {
  return {
    name: d.name.trim(),
    description: d.description.trim(),
    steps: d.steps.map((s) => ({
      ...(s.id ? { id: s.id } : {}),
      name: s.name.trim(),
      agent: s.agent,
      prompt: s.prompt,
      gate: s.gate,
      ...(s.gate ? { gate_pass: s.gate_pass.trim(), gate_fail: s.gate_fail.trim() } : {}),
      pause_before: s.pause_before,
      compact_before: s.compact_before,
      on_success: edgeOut(d.steps, s.on_success),
      on_failure: edgeOut(d.steps, s.on_failure),
    })),
    budget: { ...d.budget },
  }
}

/** The draft's steps for the flowchart preview (edges by key, agents by name). */
export function draftFlow(d: Draft, agentName: (id: string) => string | undefined): FlowStep[] {
  return d.steps.map((s) => ({ ...s, id: s.key, agent: agentName(s.agent) }))
}

/** Moves the step at i by delta (−1 up, +1 down); out of range changes nothing. */
export function moveStep(steps: DraftStep[], i: number, delta: number): DraftStep[] {
  const j = i + delta
  if (i < 0 || j < 0 || i >= steps.length || j >= steps.length) return steps
  const out = steps.slice()
  ;[out[i], out[j]] = [out[j], out[i]]
  return out
}

/** Removes a step; edges that led to it fall back to the plain list. */
export function removeStep(steps: DraftStep[], key: string): DraftStep[] {
  return steps
    .filter((s) => s.key !== key)
    .map((s) => (s.on_success === key || s.on_failure === key
      ? { ...s, on_success: s.on_success === key ? '' : s.on_success, on_failure: s.on_failure === key ? '' : s.on_failure }
      : s))
}

/**
 * Where the server's field messages land: a definition's own fields
 * (name, description, steps, budget.max_laps…) by path, a step's by its key
 * and field ("steps[1].agent" → the step sent second) — the steps as they
 * were sent, since the list may change after — and what no field shows.
 */
export interface PlacedWorkflowErrors {
  top: Record<string, string>
  steps: Record<string, Record<string, string>>
  stray: [string, string][]
}

const TOP = new Set(['name', 'description', 'steps', 'budget', 'budget.max_steps', 'budget.max_tokens', 'budget.max_minutes', 'budget.max_laps'])
const STEP_FIELDS = new Set(['name', 'agent', 'prompt', 'gate', 'gate_pass', 'gate_fail', 'pause_before', 'compact_before', 'on_success', 'on_failure'])

export function placeWorkflowErrors(fields: Record<string, string>, sentKeys: string[]): PlacedWorkflowErrors {
  const out: PlacedWorkflowErrors = { top: {}, steps: {}, stray: [] }
  const add = (into: Record<string, string>, k: string, v: string) => {
    into[k] = into[k] ? `${into[k]}; ${v}` : v
  }
  for (const [path, message] of Object.entries(fields)) {
    if (TOP.has(path)) {
      add(out.top, path, message)
      continue
    }
    const m = /^steps\[(\d+)\]\.(\w+)$/.exec(path)
    const key = m ? sentKeys[Number(m[1])] : undefined
    if (m && key && STEP_FIELDS.has(m[2])) {
      add((out.steps[key] ??= {}), m[2], message)
      continue
    }
    out.stray.push([path, message])
  }
  return out
}

/** How many messages were placed in all: the form's headline counts them. */
export const errorCount = (p: PlacedWorkflowErrors) =>
  Object.keys(p.top).length + Object.values(p.steps).reduce((n, s) => n + Object.keys(s).length, 0) + p.stray.length
