import { describe, expect, it } from 'vitest'
import { END_NODE, flowGraph, type FlowStep } from './flow'

const step = (id: string, over: Partial<FlowStep> = {}): FlowStep => ({ id, name: id, ...over })
const edges = (steps: FlowStep[]) => flowGraph(steps).edges.map((e) => [e.source, e.target, e.kind, e.label, e.back, e.around])

describe('flowGraph', () => {
  it('draws a plain list as steps in order falling through to End', () => {
    const g = flowGraph([step('plan', { agent: 'Planner' }), step('exec'), step('verify')])
    expect(g.nodes.map((n) => [n.id, n.kind, n.index, n.label])).toEqual([
      ['plan', 'step', 0, 'plan'], ['exec', 'step', 1, 'exec'], ['verify', 'step', 2, 'verify'], [END_NODE, 'end', 3, 'End'],
    ])
    expect(g.nodes[0].agent).toBe('Planner')
    expect(edges([step('plan'), step('exec'), step('verify')])).toEqual([
      ['plan', 'exec', 'next', '', false, false],
      ['exec', 'verify', 'next', '', false, false],
      ['verify', END_NODE, 'next', '', false, false],
    ])
  })

  it('marks a gate with its words and labels its edges with them; a FAIL back to an earlier step is a loop', () => {
    const steps = [step('exec'), step('test', { gate: true, on_failure: 'fix' }), step('fix', { on_success: 'test' })]
    const g = flowGraph(steps)
    expect(g.nodes[1].gate).toEqual({ pass: 'PASS', fail: 'FAIL' })
    expect(edges(steps)).toEqual([
      ['exec', 'test', 'next', '', false, false],
      ['test', 'fix', 'next', 'PASS', false, false],
      ['test', 'fix', 'failure', 'FAIL', false, false],
      ['fix', 'test', 'success', '↺ on success', true, true],
    ])
  })

  it("uses a gate's own words, and on_success/on_failure to end", () => {
    const steps = [step('review', { gate: true, gate_pass: 'LGTM', gate_fail: 'NOPE', on_success: 'end', on_failure: 'end' }), step('unused')]
    expect(flowGraph(steps).nodes[0].gate).toEqual({ pass: 'LGTM', fail: 'NOPE' })
    expect(edges(steps).slice(0, 2)).toEqual([
      ['review', END_NODE, 'success', 'LGTM', false, true],
      ['review', END_NODE, 'failure', 'NOPE (fails)', false, true],
    ])
  })

  it('draws a self loop and a forward skip around the column, resolving a step named instead of its id', () => {
    const steps = [step('a1', { name: 'fetch', on_failure: 'a1' }), step('a2', { name: 'parse', on_success: 'END' }), step('a3', { name: 'Ship', on_success: 'end' })]
    // "END" is no step and not end (end is lower case): an unknown edge draws nothing.
    expect(edges(steps)).toEqual([
      ['a1', 'a2', 'next', '', false, false],
      ['a1', 'a1', 'failure', '↺ on failure', true, true],
      ['a3', END_NODE, 'success', 'on success', false, false],
    ])
    expect(edges([step('a1', { on_success: 'ship' }), step('a2'), step('a3', { name: 'Ship' })])[0]).toEqual(['a1', 'a3', 'success', 'on success', false, true])
  })

  it('shows pause_before and compact_before as badges, and names an unnamed step by its place', () => {
    const g = flowGraph([step('x', { name: '', pause_before: true, compact_before: true })])
    expect(g.nodes[0]).toMatchObject({ label: 'Step 1', badges: ['pause before', 'compact before'] })
  })
})
