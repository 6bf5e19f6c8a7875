import { afterEach, describe, expect, it, vi } from 'vitest'

const sent: unknown[] = []
vi.mock('../../lib/bus', () => ({ bus: { send: (cmd: unknown) => sent.push(cmd) } }))

const { followRun } = await import('./actions')
const { liveStore } = await import('../../live/store')

afterEach(() => {
  sent.length = 0
  liveStore.reset()
})

describe('followRun', () => {
  it('subscribes to a run the tab started, from the start when it has heard nothing', () => {
    followRun('r1', 's1')
    expect(liveStore.get().runs.r1?.sessionId).toBe('s1')
    expect(sent).toEqual([{ type: 'run.subscribe', payload: { run_id: 'r1', from_seq: 0 } }])
  })

  it('resumes after what the tab already heard', () => {
    liveStore.adopt('r2', 's1')
    liveStore.dispatch({ type: 'run.started', seq: 1, payload: { run_id: 'r2', session_id: 's1', agent_id: 'a', input: 'hi' } } as never)
    followRun('r2', 's1')
    expect(sent).toEqual([{ type: 'run.subscribe', payload: { run_id: 'r2', from_seq: 1 } }])
  })

  it('leaves a run already handed over to the transcript alone', () => {
    liveStore.adopt('r3', 's1')
    liveStore.settle('r3')
    followRun('r3', 's1')
    expect(sent).toEqual([])
  })
})
