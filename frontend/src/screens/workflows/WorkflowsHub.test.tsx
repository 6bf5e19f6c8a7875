// @vitest-environment jsdom
// The hub's lists as a user meets them: the definitions a page of 25 at
// a time, the triggers between them (Triggers.test.tsx), and every
// execution with its conversation, status and progress, opening in its
// conversation with the execution in the inspector.
import { screen, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { beforeEach, describe, expect, it } from 'vitest'
import type { Task } from '../../lib/api'
import { keys } from '../../lib/queries'
import type { Workflow } from '../../lib/workflows'
import { renderWithData } from '../../test/render'
import { inspectorNow, resetInspector } from '../inspector/inspectorState'
import { WorkflowsHub } from './WorkflowsHub'

const wf = (i: number): Workflow => ({
  id: `w${i}`, name: `flow ${String(i).padStart(2, '0')}`, description: `does ${i}`, scope: 'private', owner_id: 'u', created_at: '', updated_at: '',
  budget: {}, steps: [{ id: 's1', name: 'one', agent: 'a', prompt: 'p' }],
})
const steps = [{ id: 's1', name: 'build', agent: 'a', prompt: 'p' }, { id: 's2', name: 'check', agent: 'a', prompt: 'p', gate: true }]
const run = (over: Partial<Task>): Task => ({
  task_id: 't1', run_id: 'r', kind: 'workflow', status: 'working', label: 'ship', prompt: 'brief', attempt: 1, max_attempts: 3, dismissed: false, queued: false,
  parent_session_id: 'sess1', parent_run_id: '', tool_call_id: '', child_session_id: 'c', agent_config_id: 'a', summary: '', result: '',
  created_at: '2026-01-01T10:00:00Z', updated_at: '2026-01-01T10:00:00Z', session_name: 'Release chat',
  state: { workflow_id: 'w1', name: 'ship', steps, input: 'brief', step_id: 's2', step_runs: [] }, ...over,
})

beforeEach(() => resetInspector())

function show() {
  const definitions = Array.from({ length: 30 }, (_, i) => wf(i + 1))
  const tasks = [run({}), run({ task_id: 't2', status: 'completed', session_name: '', state: { name: 'ship', steps, step_id: 's1', step_runs: [] } })]
  return renderWithData(<WorkflowsHub route={{ name: 'workflows' }} />, [[keys.workflows, definitions], [keys.workflowRuns(0), { tasks, total: 2 }], [keys.triggers, []], [keys.sessions, []], [keys.agents, []]])
}

describe('the workflows hub', () => {
  it('has its Definitions, Triggers and Runs, in that order', () => {
    show()
    expect(screen.getAllByRole('heading', { level: 2 }).map((h) => h.textContent)).toEqual(['Definitions', 'Triggers', 'Runs'])
    expect(screen.getByRole('region', { name: 'Triggers' })).toHaveTextContent('No triggers yet.')
  })

  it('lists the definitions 25 to a page', async () => {
    show()
    const list = screen.getByRole('list', { name: 'Workflow definitions' })
    expect(within(list).getAllByRole('listitem')).toHaveLength(25)
    const pages = screen.getByRole('navigation', { name: 'Definitions pages' })
    expect(pages).toHaveTextContent('1–25 of 30')
    await userEvent.click(within(pages).getByRole('button', { name: 'Next ›' }))
    expect(within(list).getAllByRole('listitem').map((li) => within(li).getByRole('button').textContent)).toEqual(['flow 26', 'flow 27', 'flow 28', 'flow 29', 'flow 30'])
    expect(within(pages).getByRole('button', { name: 'Next ›' })).toBeDisabled()
    // One page of runs needs no pager.
    expect(screen.queryByRole('navigation', { name: 'Runs pages' })).not.toBeInTheDocument()
  })

  it('lists every execution with its conversation, status and progress, and opens one in its conversation', async () => {
    show()
    const rows = within(screen.getByRole('table', { name: 'Workflow runs' })).getAllByRole('row').slice(1)
    expect(rows.map((r) => [...r.querySelectorAll('td')].slice(0, 4).map((c) => c.textContent))).toEqual([
      ['ship', 'Release chat', 'Working', 'step 2/2 (check)'],
      ['ship', 'New conversation', 'Completed', 'step 1/2 (build)'],
    ])
    await userEvent.click(within(rows[0]).getByRole('button', { name: 'ship' }))
    expect(window.location.pathname).toBe('/s/sess1')
    expect(inspectorNow()).toMatchObject({ open: true, tab: 'task', task: { sessionId: 'sess1', taskId: 't1' } })
  })
})
