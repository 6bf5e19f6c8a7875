import { describe, expect, it } from 'vitest'
import type { Task } from './api'
import { attemptText, canDismiss, canRetry, canStop, newerTask, patchTaskPage, splitDismissed, tally, taskChip, upsertTask } from './tasks'

const t = (over: Partial<Task> = {}): Task => ({
  task_id: 't1', run_id: 'r1', kind: 'agent', status: 'working', label: 'a', prompt: 'p', attempt: 1, max_attempts: 3, dismissed: false, queued: false,
  parent_session_id: 's', parent_run_id: 'pr', tool_call_id: 'c', child_session_id: 'cs', agent_config_id: 'ag', summary: '', result: '',
  created_at: '2026-01-01T00:00:01Z', updated_at: '2026-01-01T00:00:01Z', session_name: 'chat', ...over,
})

describe('task chips and actions', () => {
  it('names every status, queued apart', () => {
    expect(taskChip(t())).toEqual({ label: 'Working', tone: 'run' })
    expect(taskChip(t({ queued: true }))).toEqual({ label: 'Queued', tone: 'muted' })
    expect(taskChip(t({ status: 'input_required' }))).toEqual({ label: 'Waiting for approval', tone: 'warn' })
    expect(taskChip(t({ status: 'completed' }))).toEqual({ label: 'Completed', tone: 'ok' })
    expect(taskChip(t({ status: 'failed' }))).toEqual({ label: 'Failed', tone: 'error' })
    expect(taskChip(t({ status: 'cancelled' }))).toEqual({ label: 'Cancelled', tone: 'muted' })
  })

  it('offers stop to live tasks, retry to failed ones with attempts left, dismiss to final ones', () => {
    expect([canStop(t()), canStop(t({ status: 'input_required' })), canStop(t({ status: 'completed' }))]).toEqual([true, true, false])
    expect([canRetry(t({ status: 'failed', attempt: 2 })), canRetry(t({ status: 'failed', attempt: 3 })), canRetry(t({ status: 'cancelled' }))]).toEqual([true, false, false])
    expect([canDismiss(t({ status: 'failed' })), canDismiss(t({ status: 'failed', dismissed: true })), canDismiss(t())]).toEqual([true, false, false])
    expect(attemptText(t({ attempt: 2 }))).toBe('attempt 2/3')
  })
})

describe('upsertTask', () => {
  it('replaces a task in place, keeping the parent name task.updated does not carry', () => {
    const list = [t({ task_id: 't2', created_at: '2026-01-01T00:00:02Z' }), t()]
    const { session_name: _, ...info } = t({ status: 'completed', summary: 'done', updated_at: '2026-01-01T00:00:05Z' })
    const out = upsertTask(list, info)!
    expect(out.map((x) => x.task_id)).toEqual(['t2', 't1'])
    expect(out[1]).toMatchObject({ status: 'completed', summary: 'done', session_name: 'chat' })
  })

  it('adds a new task newest first', () => {
    const out = upsertTask([t()], t({ task_id: 't3', created_at: '2026-01-01T00:00:09Z' }))!
    expect(out.map((x) => x.task_id)).toEqual(['t3', 't1'])
  })

  it('never lets an older row overwrite a newer one, and leaves no list none', () => {
    const list = [t({ status: 'completed', updated_at: '2026-01-01T00:00:05Z' })]
    expect(upsertTask(list, t({ status: 'working', updated_at: '2026-01-01T00:00:02Z' }))).toBe(list)
    // Instants, not text: the server trims a fraction's trailing zeros.
    const trimmed = [t({ status: 'working', updated_at: '2026-01-01T00:00:05.84Z' })]
    expect(upsertTask(trimmed, t({ status: 'completed', updated_at: '2026-01-01T00:00:05.844Z' }))![0].status).toBe('completed')
    expect(upsertTask(undefined, t())).toBeUndefined()
  })
})

describe('newerTask', () => {
  it('keeps what the bus said over an answer that left the server before it', () => {
    const failed = t({ status: 'failed', updated_at: '2026-01-01T00:00:05Z' })
    // A start's answer (working) processed after the execution failed.
    expect(newerTask(failed, t({ status: 'working', updated_at: '2026-01-01T00:00:01Z' }))).toBe(failed)
    expect(newerTask(t(), failed).status).toBe('failed')
    expect(newerTask(undefined, failed)).toEqual(failed)
  })
})

it('splits off dismissed tasks and tallies the rest by chip', () => {
  const list = [t(), t({ task_id: 'x', status: 'completed' }), t({ task_id: 'y', status: 'completed' }), t({ task_id: 'z', status: 'failed', dismissed: true })]
  const { shown, dismissed } = splitDismissed(list)
  expect(dismissed.map((x) => x.task_id)).toEqual(['z'])
  expect(tally(shown)).toBe('1 working · 2 completed')
})

describe('patchTaskPage', () => {
  it("moves a listed task in place, keeping its conversation's name, and leaves an unlisted or older one to the server", () => {
    const page = { tasks: [t({ task_id: 'a' }), t({ task_id: 'b', updated_at: '2026-01-01T00:00:05Z' })], total: 30 }
    const { session_name: _, ...info } = t({ task_id: 'a', status: 'completed', updated_at: '2026-01-01T00:00:03Z' })
    const out = patchTaskPage(page, info)!
    expect(out.tasks[0]).toMatchObject({ task_id: 'a', status: 'completed', session_name: 'chat' })
    expect(out.total).toBe(30)
    expect(patchTaskPage(page, t({ task_id: 'zz' }))).toBe(page)
    expect(patchTaskPage(page, t({ task_id: 'b', status: 'failed', updated_at: '2026-01-01T00:00:04Z' }))).toBe(page)
    expect(patchTaskPage(undefined, t())).toBeUndefined()
  })
})
