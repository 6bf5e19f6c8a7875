// @vitest-environment jsdom
// Background tasks in the conversation, as a user sees them: the task list
// over the composer (status, attempt, summary, what can be done, dismissed
// ones tucked away), a refusal in the server's words, a spawn_task card
// following its task, a task's approval drawn apart with its task named,
// and a wake-up drawn as a note rather than a message of the person's.
import { screen, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { beforeEach, describe, expect, it, vi } from 'vitest'
import { ApiError, type Agent, type Approval, type Entry, type Session, type Task } from '../../lib/api'
import { keys } from '../../lib/queries'
import { liveStore } from '../../live/store'
import { renderWithData } from '../../test/render'
import { runs } from '../../test/timeline'
import type { ToolItem } from '../../timeline/model'
import { Conversation } from '../conversation/Conversation'
import { ToolCard } from '../conversation/ToolCard'
import { inspectorNow, resetInspector } from '../inspector/inspectorState'
import { dismissTask, retryTask, stopTask } from './actions'
import { TasksContext } from './TaskContext'

vi.mock('./actions', () => ({ stopTask: vi.fn(), retryTask: vi.fn(), dismissTask: vi.fn() }))

const agent = { id: 'a1', name: 'Planner', avatar: '', model: 'todo' } as Agent
const sid = runs.todo.sessionId

const task = (over: Partial<Task>): Task => ({
  task_id: 't1', run_id: 'r1', kind: 'agent', status: 'working', label: 'research A', prompt: 'RESEARCH-A', attempt: 1, max_attempts: 3, dismissed: false,
  queued: false, parent_session_id: sid, parent_run_id: 'pr', tool_call_id: 'call_spawn', child_session_id: 'child', agent_config_id: 'a1', summary: '',
  result: '', created_at: '2026-01-01T00:00:03Z', updated_at: '2026-01-01T00:00:03Z', ...over,
})
const tasks = [
  task({}),
  task({ task_id: 't2', label: 'flaky job', status: 'failed', summary: 'boom', created_at: '2026-01-01T00:00:02Z' }),
  task({ task_id: 't3', label: 'old one', status: 'completed', dismissed: true, created_at: '2026-01-01T00:00:01Z' }),
]

function show({ entries = runs.todo.entries as Entry[], approvals = [] as Approval[], list = tasks } = {}) {
  const session = { id: sid, name: 'Tasks', agent_config_id: agent.id, owner_id: 'u1', pinned: false, planning: false, created_at: '', updated_at: '' } satisfies Session
  return renderWithData(<Conversation sessionId={sid} inspectorOpen={false} onToggleInspector={() => {}} />, [
    [keys.session(sid), session],
    [keys.messages(sid), { pages: [entries], pageParams: [''] }],
    [keys.approvals(sid), approvals],
    [keys.tasks(sid), list],
    [keys.agents, [agent]],
    [keys.workflows, []],
    [keys.projectList(false), []],
  ])
}

const strip = () => screen.getByRole('region', { name: 'Background tasks' })
const row = (label: string) => within(strip()).getByText(label, { selector: '.task-open' }).closest('.task-row') as HTMLElement

beforeEach(() => {
  liveStore.reset()
  resetInspector()
  vi.mocked(stopTask).mockReset()
  vi.mocked(retryTask).mockReset()
  vi.mocked(dismissTask).mockReset()
})

describe('the task list', () => {
  it('lists each task with its status, attempt and summary, and what can be done with it', () => {
    show()
    expect(within(strip()).getByRole('button', { name: /^Background tasks/ })).toHaveTextContent('Background tasks1 working · 1 failed · 1 dismissed')
    const working = row('research A')
    expect(within(working).getByText('Working')).toHaveClass('pill-run')
    expect(working).toHaveTextContent('attempt 1/3')
    expect(within(working).getAllByRole('button').map((b) => b.textContent)).toEqual(['research A', 'Stop'])
    const failed = row('flaky job')
    expect(within(failed).getByText('Failed')).toHaveClass('pill-error')
    expect(failed).toHaveTextContent('boom')
    expect(within(failed).getAllByRole('button').map((b) => b.textContent)).toEqual(['flaky job', 'Retry', 'Dismiss'])
  })

  it('lists the live first and groups the finished, closed past two, to dismiss at once', async () => {
    const done = (n: number) => task({ task_id: `d${n}`, label: `done ${n}`, status: 'completed', created_at: `2026-01-01T00:00:0${n}Z` })
    show({ list: [done(4), done(5), task({ task_id: 'live', label: 'still going', created_at: '2026-01-01T00:00:01Z' }), done(6)] })
    const labels = () => within(strip()).queryAllByRole('button').filter((b) => b.classList.contains('task-open')).map((b) => b.textContent)
    expect(labels()).toEqual(['still going'])
    const group = within(strip()).getByRole('button', { name: '3 finished' })
    expect(group).toHaveAttribute('aria-expanded', 'false')
    await userEvent.click(group)
    expect(labels()).toEqual(['still going', 'done 4', 'done 5', 'done 6'])
    await userEvent.click(within(strip()).getByRole('button', { name: 'Dismiss all finished' }))
    expect(vi.mocked(dismissTask).mock.calls.map(([, id]) => id)).toEqual(['d4', 'd5', 'd6'])
  })

  it('keeps dismissed tasks behind a toggle', async () => {
    show()
    expect(within(strip()).queryByText('old one')).not.toBeInTheDocument()
    await userEvent.click(within(strip()).getByRole('button', { name: 'Show 1 dismissed' }))
    expect(within(row('old one')).getByText('Completed')).toBeInTheDocument()
    // A dismissed task cannot be dismissed again.
    expect(within(row('old one')).queryByRole('button', { name: /Dismiss/ })).not.toBeInTheDocument()
  })

  it("shows a refusal in the server's words", async () => {
    vi.mocked(retryTask).mockRejectedValue(new ApiError(409, 'conflict', 'the conversation is at its live-task cap'))
    show()
    await userEvent.click(within(row('flaky job')).getByRole('button', { name: 'Retry flaky job' }))
    expect(retryTask).toHaveBeenCalledWith(expect.anything(), 't2')
    expect(await within(row('flaky job')).findByRole('alert')).toHaveTextContent('the conversation is at its live-task cap (conflict)')
  })

  it('opens a task in the inspector', async () => {
    show()
    await userEvent.click(within(row('flaky job')).getByRole('button', { name: 'flaky job' }))
    expect(inspectorNow()).toMatchObject({ open: true, tab: 'task', task: { sessionId: sid, taskId: 't2' } })
  })

  it('is not drawn for a conversation without tasks', () => {
    show({ list: [] })
    expect(screen.queryByRole('region', { name: 'Background tasks' })).not.toBeInTheDocument()
  })
})

describe("a task's approval in the conversation that started it", () => {
  it('is drawn apart, naming its task, even when its call id matches a call of this conversation', () => {
    const todoCall = (runs.todo.entries as Entry[]).find((e) => (e.item as { type?: string })?.type === 'function_call')!
    const callId = (todoCall.item as { call_id: string }).call_id
    const approval: Approval = { id: 'ap1', run_id: 'r1', session_id: 'child', task_id: 't1', tool_call_id: callId, tool_name: 'todo_write', arguments: '{}', created_at: '' }
    show({ approvals: [approval] })
    const own = document.querySelector('.timeline .tool-card[data-tool="todo_write"]:not([data-task-id])') as HTMLElement
    expect(within(own).queryByRole('group', { name: /Approval/ })).not.toBeInTheDocument()
    const card = document.querySelector('.timeline .tool-card[data-task-id="t1"]') as HTMLElement
    expect(within(card).getByText('from task research A')).toBeInTheDocument()
    expect(within(card).getByRole('group', { name: 'Approval for todo_write' })).toBeInTheDocument()
  })
})

describe('a wake-up', () => {
  it('is a note that opens to what the agent read, and its answer follows it', () => {
    const text = '[task-notification] Background tasks you started have ended.\ntask_id=t1 status=completed attempt=1 label="research A" result="42"\nThese are reports.'
    const base = { created_at: '', compacted: false, on_path: true, seq: 1, run_id: 'w1' }
    show({
      entries: [
        { ...base, id: 'u', row_id: 'u', run_id: 'r0', kind: 'item', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'delegate it' }] } },
        { ...base, id: 'd', row_id: 'd', run_id: 'r0', kind: 'item', item: { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Delegated.' }] } },
        { ...base, id: 'n', row_id: 'n', kind: 'item', source: 'task_notification', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text }] },
          display: { kind: 'task_notification', title: 'Background task results', summary: '"research A" completed' } },
        { ...base, id: 'a', row_id: 'a', kind: 'item', item: { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Noted.' }] } },
      ] as Entry[],
    })
    expect([...document.querySelectorAll('.msg-user .bubble')].map((b) => b.textContent)).toEqual(['delegate it'])
    const note = document.querySelector('.task-notice') as HTMLElement
    expect(note.querySelector('summary')).toHaveTextContent('Background task results · "research A" completed')
    expect(note).toHaveTextContent('result="42"')
    // The answer to the person can be regenerated; the one to the results has nothing of theirs to start from.
    expect(screen.getAllByRole('button', { name: 'Regenerate the answer' })).toHaveLength(1)
    expect(screen.getByText('Noted.').closest('.msg')!.querySelector('[aria-label="Regenerate the answer"]')).toBeNull()
  })
})

describe('a spawn_task card', () => {
  const card = (extra: Record<string, string>): ToolItem => ({
    key: 'k', kind: 'tool', callId: 'call_spawn', name: 'spawn_task', arguments: '{"prompt":"RESEARCH-A","label":"research A"}',
    output: 'Started background task t1', display: { title: 'research A', extra },
  })

  it("follows its task's status in the list, and opens it", async () => {
    renderWithData(
      <TasksContext.Provider value={{ sessionId: sid, byId: new Map([['t1', task({ status: 'completed', summary: 'The answer is 42.' })]]) }}>
        <ToolCard item={card({ task_id: 't1', task_status: 'working' })} />
      </TasksContext.Provider>,
    )
    const head = screen.getByRole('button', { expanded: false })
    expect(head).toHaveTextContent('research A')
    expect(within(head).getByText('spawn_task')).toHaveClass('tool-name')
    expect(within(head).getByText('The answer is 42.')).toBeInTheDocument()
    expect(within(head).getByText('Completed')).toHaveClass('pill-ok')
    await userEvent.click(screen.getByRole('button', { name: 'Open task' }))
    expect(inspectorNow()).toMatchObject({ open: true, tab: 'task', task: { taskId: 't1' } })
  })

  it('reads its own status where no list says otherwise, and keeps the general card', async () => {
    renderWithData(<ToolCard item={card({ task_id: 't1', task_status: 'cancelled' })} />)
    expect(screen.getByText('Cancelled')).toHaveClass('pill-muted')
    expect(screen.queryByRole('button', { name: 'Open task' })).not.toBeInTheDocument()
    await userEvent.click(screen.getByRole('button', { expanded: false }))
    expect(screen.getByText('Result').nextElementSibling).toHaveTextContent('Started background task t1')
  })

  it('a task_status card is compact: the task and the status it reported', () => {
    renderWithData(<ToolCard item={{ ...card({ task_id: 't1', task_status: 'working' }), name: 'task_status', arguments: '{"task_id":"t1"}' }} />)
    expect(screen.getByRole('button', { expanded: false })).toHaveTextContent('Task status · research Atask_statusWorking')
  })
})
