// What the live region says as a run's events are folded.
import { describe, expect, it } from 'vitest'
import type { ServerEvent } from '../lib/events'
import { announcementOf } from './announcements'
import { applyEvent, emptyLive, type LiveState } from './reduce'

const ev = (type: string, seq: number, payload: Record<string, unknown>) => ({ type, seq, payload: { run_id: 'r1', ...payload } }) as ServerEvent

/** Folds the events in turn, collecting what each one announces. */
function said(events: ServerEvent[], state: LiveState = emptyLive()) {
  const out: string[] = []
  for (const e of events) {
    const next = applyEvent(state, e).state
    const a = announcementOf(state, next, e)
    if (a) out.push(a)
    state = next
  }
  return { out, state }
}

const started = ev('run.started', 1, { session_id: 's1', input: 'hi' })

describe('announcementOf', () => {
  it('says when the answer is finished, once', () => {
    const events = [started, ev('run.step', 2, { delta: 'Hello' }), ev('run.output', 3, { output: 'Hello' })]
    const { out, state } = said(events)
    expect(out).toEqual(['Answer finished'])
    // A replay of the same events says nothing again.
    expect(said(events, state).out).toEqual([])
  })

  it('names the tool an approval waits for', () => {
    const { out } = said([
      started,
      ev('run.tool_call', 2, { tool_call_id: 'c1', tool_name: 'exec_command', arguments: '{}', needs_approval: true }),
      ev('run.interrupted', 3, {}),
    ])
    expect(out).toEqual(['Approval requested: exec_command'])
  })

  it('says a failure with its message, and a stop', () => {
    expect(said([started, ev('run.error', 2, { code: 'upstream', message: 'boom' })]).out).toEqual(['The run failed: boom'])
    expect(said([started, ev('run.cancelled', 2, {})]).out).toEqual(['Answer stopped'])
  })

  it("stays quiet about a background task's run", () => {
    const task = ev('run.started', 1, { session_id: 'child', input: 'x', task_id: 't1', parent_session_id: 's1' })
    expect(said([task, ev('run.output', 2, { output: 'done' })]).out).toEqual([])
  })
})
