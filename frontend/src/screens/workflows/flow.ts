// A workflow's steps as a flowchart: one node per step in order, top to
// bottom, and an End node under the last; an edge for every way out of a
// step — the success fall-through to the next step, on_success and
// on_failure — labelled and told apart (a backward edge is a loop). Pure
// data, so it is unit-tested; Flowchart.tsx draws it with @xyflow/react.

/** What the chart needs of a step: a stored one (edges by id) or the editor's draft (edges by its keys). */
export interface FlowStep {
  id: string
  name: string
  /** The agent's name, shown under the step's. */
  agent?: string
  gate?: boolean
  gate_pass?: string
  gate_fail?: string
  pause_before?: boolean
  compact_before?: boolean
  on_success?: string
  on_failure?: string
}

export const END = 'end'
/** The chart's distance between two rows, in pixels at zoom 1. */
export const ROW = 120
/** The End node's id: no step id can take it (ids are server-made, keys the editor's). */
export const END_NODE = '__end'

export interface FlowNode {
  id: string
  kind: 'step' | 'end'
  /** 0-based place in the sequence (the End node's is the step count). */
  index: number
  label: string
  agent?: string
  /** A gate's sentinels: pass and fail words. */
  gate?: { pass: string; fail: string }
  badges: string[]
}

/**
 * next: the plain list's success fall-through; success: an on_success edge;
 * failure: an on_failure edge (a gate's fail word, or a run that errored).
 */
export type EdgeKind = 'next' | 'success' | 'failure'

export interface FlowEdge {
  id: string
  source: string
  target: string
  kind: EdgeKind
  label: string
  /** To the same or an earlier step: a loop, bounded by max_laps. */
  back: boolean
  /** Past the next node (a skip or a loop): drawn around the column, failures on the left, the rest on the right. */
  around: boolean
}

export interface FlowGraph { nodes: FlowNode[]; edges: FlowEdge[] }

/** The node an edge value leads to: a step (by id, else by name, whatever its case), End, or nothing (unknown). */
function resolve(steps: FlowStep[], to: string): string | undefined {
  const v = to.trim()
  if (!v) return undefined
  if (v === END) return END_NODE
  const byId = steps.find((s) => s.id === v)
  if (byId) return byId.id
  return steps.find((s) => s.name.trim().toLowerCase() === v.toLowerCase())?.id
}

/** The steps as nodes and edges (see the file comment). */
export function flowGraph(steps: FlowStep[]): FlowGraph {
  const index = new Map(steps.map((s, i) => [s.id, i]))
  index.set(END_NODE, steps.length)
  const nodes: FlowNode[] = steps.map((s, i) => {
    const badges: string[] = []
    if (s.pause_before) badges.push('pause before')
    if (s.compact_before) badges.push('compact before')
    return {
      id: s.id, kind: 'step', index: i, label: s.name || `Step ${i + 1}`, ...(s.agent ? { agent: s.agent } : {}), badges,
      ...(s.gate ? { gate: { pass: s.gate_pass?.trim() || 'PASS', fail: s.gate_fail?.trim() || 'FAIL' } } : {}),
    }
  })
  nodes.push({ id: END_NODE, kind: 'end', index: steps.length, label: 'End', badges: [] })

  const edges: FlowEdge[] = []
  const add = (from: FlowStep, i: number, target: string, kind: EdgeKind, label: string) => {
    const j = index.get(target)!
    const back = target !== END_NODE && j <= i
    edges.push({ id: `${from.id}:${kind}`, source: from.id, target, kind, label: back ? `↺ ${label}`.trim() : label, back, around: back || j > i + 1 })
  }
  steps.forEach((s, i) => {
    const pass = s.gate ? s.gate_pass?.trim() || 'PASS' : ''
    const fail = s.gate ? s.gate_fail?.trim() || 'FAIL' : ''
    const success = s.on_success?.trim() ? resolve(steps, s.on_success) : undefined
    if (success) add(s, i, success, 'success', pass || 'on success')
    else if (!s.on_success?.trim()) add(s, i, i + 1 < steps.length ? steps[i + 1].id : END_NODE, 'next', pass)
    const failure = resolve(steps, s.on_failure ?? '')
    // Failure to End ends the execution failed, as no on_failure does: drawn, since the author wrote it.
    if (failure) add(s, i, failure, 'failure', failure === END_NODE ? `${fail || 'on failure'} (fails)` : fail || 'on failure')
  })
  return { nodes, edges }
}
