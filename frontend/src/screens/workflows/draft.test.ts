import { describe, expect, it } from 'vitest'
import type { Workflow } from '../../lib/workflows'
import { draftFlow, errorCount, moveStep, newStep, placeWorkflowErrors, removeStep, toDraft, toSpec } from './draft'

const stored: Workflow = {
  id: 'w1', name: 'build', description: 'Build and check', scope: 'private', owner_id: 'u1', created_at: '', updated_at: '',
  budget: { max_laps: 2 },
  steps: [
    { id: 's1', name: 'exec', agent: 'a1', prompt: 'Do it' },
    { id: 's2', name: 'check', agent: 'a2', prompt: 'Check it', gate: true, gate_pass: 'OK', on_failure: 's1' },
  ],
}

describe('the editor draft', () => {
  it('round-trips a stored workflow: ids kept, edges by id, budget zeros filled', () => {
    const d = toDraft(stored)
    expect(d.steps.map((s) => s.key)).toEqual(['s1', 's2'])
    expect(d.budget).toEqual({ max_steps: 0, max_tokens: 0, max_minutes: 0, max_laps: 2 })
    expect(toSpec(d)).toEqual({
      name: 'build', description: 'Build and check',
      steps: [
        { id: 's1', name: 'exec', agent: 'a1', prompt: 'Do it', gate: false, pause_before: false, compact_before: false, on_success: '', on_failure: '' },
        { id: 's2', name: 'check', agent: 'a2', prompt: 'Check it', gate: true, gate_pass: 'OK', gate_fail: '', pause_before: false, compact_before: false, on_success: '', on_failure: 's1' },
      ],
      budget: { max_steps: 0, max_tokens: 0, max_minutes: 0, max_laps: 2 },
    })
  })

  it('names a new step by its name in edges and sends no id for it; a gate word goes only with a gate', () => {
    const d = toDraft(stored)
    const fix = newStep({ name: ' fix ', agent: 'a1', prompt: 'Fix it', on_success: 's2', gate_pass: 'stale' })
    d.steps = [...d.steps, fix]
    d.steps[1] = { ...d.steps[1], on_failure: fix.key, on_success: 'end' }
    const spec = toSpec(d)
    expect(spec.steps[1]).toMatchObject({ id: 's2', on_success: 'end', on_failure: 'fix' })
    expect(spec.steps[2]).toEqual({ name: 'fix', agent: 'a1', prompt: 'Fix it', gate: false, pause_before: false, compact_before: false, on_success: 's2', on_failure: '' })
  })

  it('starts a new workflow with one empty step on the first agent', () => {
    const d = toDraft(undefined, 'a9')
    expect(d.steps).toHaveLength(1)
    expect(d.steps[0]).toMatchObject({ agent: 'a9', name: '' })
    expect(d.steps[0]).not.toHaveProperty('id')
    expect(toSpec(d).steps[0]).not.toHaveProperty('id')
  })

  it('reorders steps, and a removed step takes the edges leading to it', () => {
    const d = toDraft(stored)
    expect(moveStep(d.steps, 1, -1).map((s) => s.key)).toEqual(['s2', 's1'])
    expect(moveStep(d.steps, 0, -1)).toBe(d.steps)
    expect(moveStep(d.steps, 1, 1)).toBe(d.steps)
    const left = removeStep(d.steps, 's1')
    expect(left.map((s) => [s.key, s.on_failure])).toEqual([['s2', '']])
    // An edge to a step no longer in the draft is sent as none.
    expect(toSpec({ ...d, steps: [{ ...d.steps[1], on_success: 'gone' }] }).steps[0].on_success).toBe('')
  })

  it('feeds the flowchart preview by key, with agent names', () => {
    const flow = draftFlow(toDraft(stored), (id) => ({ a1: 'Builder' })[id])
    expect(flow.map((s) => [s.id, s.agent, s.on_failure])).toEqual([['s1', 'Builder', ''], ['s2', undefined, 's1']])
  })
})

describe('placeWorkflowErrors', () => {
  it("places a step's messages on the step sent at that index, the definition's by path, the rest apart", () => {
    const placed = placeWorkflowErrors({
      name: 'is required',
      'budget.max_laps': 'must not be negative (0 is no bound)',
      'steps[1].agent': 'no such agent (or not one you may use)',
      'steps[2].name': 'step "x" is unreachable: no step leads to it',
      'steps[2].prompt': 'is required: it starts the step\'s turn',
      'steps[0].id': '"s9" is the id of another step',
      'steps[7].name': 'is required',
    }, ['k0', 'k1', 'k2'])
    expect(placed.top).toEqual({ name: 'is required', 'budget.max_laps': 'must not be negative (0 is no bound)' })
    expect(placed.steps).toEqual({
      k1: { agent: 'no such agent (or not one you may use)' },
      k2: { name: 'step "x" is unreachable: no step leads to it', prompt: "is required: it starts the step's turn" },
    })
    expect(placed.stray).toEqual([['steps[0].id', '"s9" is the id of another step'], ['steps[7].name', 'is required']])
    expect(errorCount(placed)).toBe(7)
  })
})
