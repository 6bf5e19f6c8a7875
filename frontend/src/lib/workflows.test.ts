import { describe, expect, it } from 'vitest'
import { endingChip, launchCounts, progressOf, progressText, stepName, workflowState } from './workflows'

const state = {
  workflow_id: 'w1', name: 'build', input: 'fix it', step_id: 's2', laps: { 's2→s1': 1 },
  steps: [{ id: 's1', name: 'exec', agent: 'a', prompt: 'p' }, { id: 's2', name: 'check', agent: 'a', prompt: 'p', gate: true, on_failure: 's1' }],
  step_runs: [
    { step_id: 's1', run_id: 'r1', ending: 'completed', attempt: 1, started_at: 't1', ended_at: 't2' },
    { step_id: 's2', run_id: 'r2', ending: 'fail', attempt: 1, started_at: 't2', ended_at: 't3' },
    { step_id: 's1', run_id: 'r3', ending: 'completed', attempt: 1, started_at: 't3', ended_at: 't4' },
    { step_id: 's2', run_id: 'r4', attempt: 1, started_at: 't4' },
  ],
}

describe('workflow executions', () => {
  it("reads a workflow task's state, and none of another task", () => {
    const st = workflowState({ kind: 'workflow', state })!
    expect(st.name).toBe('build')
    expect(st.step_runs.map((r) => r.ending)).toEqual(['completed', 'fail', 'completed', ''])
    expect(st.laps).toEqual({ 's2→s1': 1 })
    expect(workflowState({ kind: 'agent', state })).toBeNull()
    expect(workflowState({ kind: 'workflow', state: null })).toBeNull()
    expect(workflowState({ kind: 'workflow', state: { steps: 'nope' } })).toMatchObject({ steps: [], step_runs: [], name: '' })
  })

  it('says where it is as the server does', () => {
    const st = workflowState({ kind: 'workflow', state })!
    expect(progressOf(st)).toEqual({ index: 2, total: 2, name: 'check' })
    expect(progressText(st)).toBe('step 2/2 (check)')
    expect(progressText({ ...st, step_id: 'gone' })).toBe('2 steps')
    expect(stepName(st, 's1')).toBe('exec')
    expect(launchCounts(st)).toEqual({ s1: 2, s2: 2 })
  })

  it('names how a launch ended; an unended one runs only while its execution is live', () => {
    expect(['completed', 'pass', 'fail', 'failed'].map((e) => endingChip(e, false))).toEqual([
      { label: 'Completed', tone: 'ok' }, { label: 'Passed', tone: 'ok' }, { label: 'Reported a failure', tone: 'warn' }, { label: 'Failed', tone: 'error' },
    ])
    expect(endingChip('', true)).toEqual({ label: 'Running', tone: 'run' })
    expect(endingChip('', false)).toEqual({ label: 'Stopped', tone: 'muted' })
  })
})
