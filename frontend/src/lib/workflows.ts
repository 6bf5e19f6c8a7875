// Workflow executions as the UI reads them: the state a task of kind
// workflow carries (the definition's snapshot, where it is, the launch
// log), the progress line, and how a step launch ended. Pure, so it is
// unit-tested.
import type { Schemas, Task } from './api'
import type { Tone } from './tasks'

export type Workflow = Schemas['WorkflowView']
export type WorkflowStep = Schemas['WorkflowStep']

/** One launch of a step: its run, and how it ended ('' while it runs). */
export interface StepRun {
  step_id: string
  run_id: string
  ending: '' | 'completed' | 'failed' | 'pass' | 'fail' | string
  retry?: boolean
  attempt: number
  started_at: string
  ended_at?: string | null
}

/** A workflow execution's state (task.state), as the server writes it. */
export interface WorkflowState {
  workflow_id: string
  name: string
  steps: WorkflowStep[]
  input: string
  /** The current step. */
  step_id: string
  step_runs: StepRun[]
  /** Times each backward edge ("<from id>→<to id>") was taken. */
  laps: Record<string, number>
  /** Set when a bound (laps, steps, budget) ended the execution. */
  bound?: string
}

const str = (v: unknown) => (typeof v === 'string' ? v : '')

/** The state of a workflow execution, or null for any other task (or a state this build cannot read). */
export function workflowState(t: Pick<Task, 'kind' | 'state'>): WorkflowState | null {
  if (t.kind !== 'workflow' || !t.state || typeof t.state !== 'object') return null
  const s = t.state as Record<string, unknown>
  const steps = Array.isArray(s.steps) ? (s.steps as WorkflowStep[]).filter((x) => x && typeof x === 'object') : []
  const runs = Array.isArray(s.step_runs) ? (s.step_runs as Record<string, unknown>[]).filter((x) => x && typeof x === 'object') : []
  const laps = s.laps && typeof s.laps === 'object' ? (s.laps as Record<string, number>) : {}
  return {
    workflow_id: str(s.workflow_id),
    name: str(s.name),
    steps,
    input: str(s.input),
    step_id: str(s.step_id),
    step_runs: runs.map((r) => ({
      step_id: str(r.step_id), run_id: str(r.run_id), ending: str(r.ending), retry: r.retry === true,
      attempt: typeof r.attempt === 'number' ? r.attempt : 1, started_at: str(r.started_at), ended_at: str(r.ended_at) || null,
    })),
    laps,
    ...(str(s.bound) ? { bound: str(s.bound) } : {}),
  }
}

/** Where an execution is: the current step's place and name, as the server's progress line says it. */
export interface Progress { index: number; total: number; name: string }

export function progressOf(st: WorkflowState): Progress | null {
  const i = st.steps.findIndex((s) => s.id === st.step_id)
  if (i < 0) return null
  return { index: i + 1, total: st.steps.length, name: st.steps[i].name }
}

/** "step 2/3 (verify)", the words task_status answers with. */
export function progressText(st: WorkflowState): string {
  const p = progressOf(st)
  return p ? `step ${p.index}/${p.total} (${p.name})` : `${st.steps.length} steps`
}

/** How a launch ended, as a chip: a running one says so only while its execution is live. */
export function endingChip(ending: string, live: boolean): { label: string; tone: Tone } {
  switch (ending) {
    case 'completed':
      return { label: 'Completed', tone: 'ok' }
    case 'pass':
      return { label: 'Passed', tone: 'ok' }
    case 'fail':
      return { label: 'Reported a failure', tone: 'warn' }
    case 'failed':
      return { label: 'Failed', tone: 'error' }
    case '':
      return live ? { label: 'Running', tone: 'run' } : { label: 'Stopped', tone: 'muted' }
    default:
      return { label: ending, tone: 'muted' }
  }
}

/** The step a launch ran, by id in the snapshot. */
export const stepName = (st: WorkflowState, id: string) => st.steps.find((s) => s.id === id)?.name ?? id

/** How many times each step was launched, by step id (the flowchart marks visited steps). */
export function launchCounts(st: WorkflowState): Record<string, number> {
  const out: Record<string, number> = {}
  for (const r of st.step_runs) out[r.step_id] = (out[r.step_id] ?? 0) + 1
  return out
}
