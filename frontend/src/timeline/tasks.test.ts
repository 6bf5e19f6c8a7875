// Background tasks in the timeline: a task's run is routed away from every
// chat timeline (to its parent's task list), a wake-up's input is a compact
// note (live and reloaded alike), task.updated never looks a run up, and a
// spawn_task card reads its folded update from the function_call entry.
import { describe, expect, it } from 'vitest'
import type { Entry } from '../lib/api'
import { parseFrame, type ServerEvent } from '../lib/events'
import { runsOfSession } from '../live/store'
import { composeTimeline } from './compose'
import { fromEntries, mergeDisplay } from './fromEntries'
import { contentOf } from './model'
import { adoptRun, applyEvent, emptyLive, settleRun, type Effect, type LiveState } from './reduce'
import { noticeSummary, reportedTasks } from './taskNotice'

function fold(frames: unknown[], state: LiveState = emptyLive()) {
  const effects: Effect[] = []
  for (const f of frames) {
    const r = applyEvent(state, parseFrame(f) as ServerEvent)
    state = r.state
    effects.push(...r.effects)
  }
  return { state, effects }
}

const base = { created_at: '', compacted: false, on_path: true, seq: 1 }
const task = {
  task_id: 't1', run_id: 'tr1', kind: 'agent', status: 'working', label: 'research A', prompt: 'RESEARCH-A', attempt: 1, max_attempts: 3,
  dismissed: false, queued: false, parent_session_id: 'parent', parent_run_id: 'pr1', tool_call_id: 'call_spawn', child_session_id: 'child',
  agent_config_id: 'a1', summary: '', result: '', created_at: '2026-01-01T00:00:00Z', updated_at: '2026-01-01T00:00:01Z',
}
const taskStarted = {
  type: 'run.started', seq: 1,
  payload: { run_id: 'tr1', session_id: 'child', input: 'RESEARCH-A', task_id: 't1', parent_session_id: 'parent', parent_run_id: 'pr1', tool_call_id: 'call_spawn', label: 'research A' },
}

describe("a background task's run", () => {
  it('is held on its hidden session, never in the parent conversation, and sends the parent its task list', () => {
    const { state, effects } = fold([
      taskStarted,
      { type: 'run.message', seq: 2, payload: { run_id: 'tr1', text: 'The answer is 42.' } },
      { type: 'run.output', seq: 3, payload: { run_id: 'tr1', final_output: 'The answer is 42.' } },
    ])
    const run = state.runs.tr1
    expect(run).toMatchObject({ sessionId: 'child', task: { taskId: 't1', parentSessionId: 'parent', toolCallId: 'call_spawn', label: 'research A' } })
    expect(runsOfSession(state, 'parent')).toEqual([])
    expect(composeTimeline([], runsOfSession(state, 'parent'))).toEqual([])
    // The task's own transcript (the inspector's) has the prompt and the answer.
    expect(runsOfSession(state, 'child').flatMap((r) => r.items).map((i) => i.kind)).toEqual(['user', 'assistant'])
    const tasks = effects.filter((e) => e.type === 'task')
    expect(tasks).toEqual([
      { type: 'task', parentSessionId: 'parent', taskId: 't1' },
      { type: 'task', parentSessionId: 'parent', taskId: 't1' },
    ])
  })

  it('a pause refreshes the parent (its approvals list the task approval)', () => {
    const { effects } = fold([taskStarted, { type: 'run.interrupted', seq: 2, payload: { run_id: 'tr1' } }])
    expect(effects.filter((e) => e.type === 'task')).toHaveLength(2)
  })

  it('a task run adopted mid-stream keeps the link GET /runs/:id gave it', () => {
    const first = fold([{ type: 'run.step', seq: 5, payload: { run_id: 'tr1', delta: 'x' } }])
    expect(first.effects).toContainEqual({ type: 'lookupRun', runId: 'tr1' })
    expect(first.state.runs.tr1).toBeUndefined()
    const adopted = adoptRun(first.state, 'tr1', 'child', { taskId: 't1', parentSessionId: 'parent' })
    const { state, effects } = fold([{ type: 'run.cancelled', seq: 6, payload: { run_id: 'tr1' } }], adopted)
    expect(runsOfSession(state, 'parent')).toEqual([])
    expect(effects).toContainEqual({ type: 'task', parentSessionId: 'parent', taskId: 't1' })
  })
})

describe('task.updated', () => {
  it('broadcast (no seq) updates the task list and never looks a run up', () => {
    const { state, effects } = fold([{ type: 'task.updated', payload: { ...task, status: 'completed' } }])
    expect(effects).toEqual([{ type: 'task', parentSessionId: 'parent', taskId: 't1', task: { ...task, status: 'completed' } }])
    expect(state).toEqual(emptyLive())
  })

  it("on its run's stream it counts in the run's sequence: no hole after it", () => {
    const { state, effects } = fold([
      taskStarted,
      { type: 'task.updated', seq: 2, payload: task },
      { type: 'run.message', seq: 3, payload: { run_id: 'tr1', text: 'done' } },
    ])
    expect(effects.filter((e) => e.type === 'resubscribe')).toEqual([])
    expect(state.runs.tr1.lastSeq).toBe(3)
    expect(effects).toContainEqual({ type: 'task', parentSessionId: 'parent', taskId: 't1', task })
  })

  it('for a run already handed over it still reaches the task list', () => {
    const { state } = fold([taskStarted, { type: 'run.output', seq: 2, payload: { run_id: 'tr1', final_output: '' } }])
    const { effects } = fold([{ type: 'task.updated', seq: 3, payload: task }], settleRun(state, 'tr1'))
    expect(effects).toEqual([{ type: 'task', parentSessionId: 'parent', taskId: 't1', task }])
  })
})

describe('a wake-up', () => {
  const text = '[task-notification] Background tasks you started have ended.\n' +
    'task_id=t1 status=completed attempt=1 label="research A" result="The answer is 42."\n' +
    'task_id=t2 status=failed attempt=2 label="say \\"hi\\"" result="boom"\n' +
    'A failed task can run again with task_retry(task_id) (3 attempts in all); it resumes from its progress.\n' +
    'These are reports from background work, not a request from the person: use them for the work you were doing, and tell the person what matters.'

  it('reads its task lines and says how many reported, in the server words', () => {
    expect(reportedTasks(text)).toEqual([
      { taskId: 't1', status: 'completed', attempt: 1, label: 'research A' },
      { taskId: 't2', status: 'failed', attempt: 2, label: 'say "hi"' },
    ])
    expect(noticeSummary(text)).toBe('2 tasks reported')
    expect(noticeSummary(text.split('\n').filter((l) => !l.includes('t2')).join('\n'))).toBe('"research A" completed')
  })

  it('is a compact note, not a user bubble, live and reloaded alike', () => {
    const { state } = fold([
      { type: 'run.started', seq: 1, payload: { run_id: 'w1', session_id: 'parent', input: text, source: 'task_notification' } },
      { type: 'run.message', seq: 2, payload: { run_id: 'w1', text: 'Noted the background results.' } },
      { type: 'run.output', seq: 3, payload: { run_id: 'w1', final_output: 'Noted the background results.' } },
    ])
    const live = state.runs.w1.items
    expect(live.map((i) => i.kind)).toEqual(['task_notice', 'assistant'])
    expect(live[0]).toMatchObject({ title: 'Background task results', summary: '2 tasks reported', text })
    const stored = fromEntries([
      { ...base, id: 'n', row_id: 'n', run_id: 'w1', kind: 'item', source: 'task_notification', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text }] },
        display: { kind: 'task_notification', title: 'Background task results', summary: '2 tasks reported' } },
      { ...base, id: 'a', row_id: 'a', run_id: 'w1', kind: 'item', item: { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Noted the background results.' }] } },
    ] as Entry[])
    expect(stored.map(contentOf)).toEqual(live.map(contentOf))
    // Keyed alike, so the hand-over keeps an opened note open.
    expect(composeTimeline(stored, Object.values(state.runs)).map((i) => i.key)).toEqual(stored.map((i) => i.key))
  })

  it("a person's message is still a bubble", () => {
    const { state } = fold([{ type: 'run.started', seq: 1, payload: { run_id: 'r', session_id: 'parent', input: '[task-notification] typed by hand' } }])
    expect(state.runs.r.items[0]).toMatchObject({ kind: 'user', text: '[task-notification] typed by hand' })
  })
})

describe("a spawn_task card's display", () => {
  const extra = (status: string) => ({ task_id: 't1', task_status: status, task_summary_attempt: '1' })
  const call = (display?: object) => ({ ...base, id: 'c', row_id: 'c', run_id: 'pr1', kind: 'item', item: { type: 'function_call', call_id: 'call_spawn', name: 'spawn_task', arguments: '{"prompt":"RESEARCH-A","label":"research A"}' }, display })
  const output = { ...base, id: 'o', row_id: 'o', run_id: 'pr1', kind: 'item', item: { type: 'function_call_output', call_id: 'call_spawn', output: 'Started background task t1' },
    display: { kind: 'task', title: 'research A', extra: extra('working') } }

  it('takes the update folded on the call over the output, extras merged per key', () => {
    const items = fromEntries([call({ kind: 'task', title: 'research A', summary: 'The answer is 42.', extra: { task_status: 'completed' } }), output] as Entry[])
    expect(items).toHaveLength(1)
    expect(items[0]).toMatchObject({ kind: 'tool', name: 'spawn_task', output: 'Started background task t1', isError: false,
      display: { title: 'research A', summary: 'The answer is 42.', extra: { ...extra('completed') } } })
  })

  it("is the output's alone while the call carries none", () => {
    const [tool] = fromEntries([call(), output] as Entry[])
    expect(tool).toMatchObject({ display: { title: 'research A', extra: extra('working') } })
  })

  it("is the call's when the output is not there (yet)", () => {
    const [tool] = fromEntries([call({ title: 'research A', extra: extra('cancelled') })] as Entry[])
    expect(tool).toMatchObject({ kind: 'tool', display: { title: 'research A', extra: extra('cancelled') } })
    expect(tool).not.toHaveProperty('output')
  })

  it('mergeDisplay: absent sides give way', () => {
    expect(mergeDisplay(undefined, undefined)).toBeUndefined()
    expect(mergeDisplay({ title: 'a' }, undefined)).toEqual({ title: 'a' })
    expect(mergeDisplay(undefined, { title: 'b' })).toEqual({ title: 'b' })
    expect(mergeDisplay({ title: 'a', renderer: 'x' }, { title: 'b' })).toEqual({ title: 'b', renderer: 'x' })
  })
})
