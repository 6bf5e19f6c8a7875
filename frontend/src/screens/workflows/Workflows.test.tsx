// @vitest-environment jsdom
// Workflows where a conversation meets them: the composer's slash commands
// (offered on "/", walked with the keys, /workflow <name> <brief> started
// or refused inline), a start's chip opening the execution, and a step
// held by pause_before asked about in the conversation.
import { screen, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { beforeEach, describe, expect, it, vi } from 'vitest'
import { api, ApiError, type Agent, type Approval, type Entry, type Task } from '../../lib/api'
import { keys } from '../../lib/queries'
import { answer } from '../../test/mcp'
import { renderWithData } from '../../test/render'
import { fromEntries } from '../../timeline/fromEntries'
import { Composer } from '../conversation/Composer'
import { ItemView } from '../conversation/ItemView'
import { NewConversation } from '../conversation/NewConversation'
import { ApprovalCard } from '../conversation/ToolCard'
import { inspectorNow, resetInspector } from '../inspector/inspectorState'
import { TasksContext } from '../tasks/TaskContext'

const agents = [{ id: 'a1', name: 'Host' }, { id: 'a2', name: 'Deployer' }] as Agent[]
const flows = [{ id: 'w1', name: 'Build' }, { id: 'w2', name: 'Review' }]

function composer({ onStartWorkflow = vi.fn(async () => {}), onSend = vi.fn(async () => true), onPlan = vi.fn() } = {}) {
  renderWithData(<Composer agents={agents} agentId="a1" onAgent={() => {}} plan={false} onPlan={onPlan} onSend={onSend} workflows={flows} onStartWorkflow={onStartWorkflow} />)
  return { box: screen.getByRole('textbox', { name: 'Message' }), onStartWorkflow, onSend, onPlan }
}

beforeEach(() => resetInspector())

describe('slash commands in the composer', () => {
  it('offers the commands on "/", walked with the arrow keys, Tab completing and Escape closing', async () => {
    const user = userEvent.setup()
    const { box } = composer()
    await user.type(box, '/')
    const list = screen.getByRole('listbox', { name: 'Commands' })
    const options = within(list).getAllByRole('option')
    expect(options.map((o) => o.textContent)).toEqual([expect.stringMatching(/^\/workflow/), expect.stringMatching(/^\/plan/)])
    expect(box).toHaveAttribute('aria-controls', list.id)
    expect(box).toHaveAttribute('aria-activedescendant', options[0].id)
    await user.keyboard('{ArrowDown}')
    expect(box).toHaveAttribute('aria-activedescendant', options[1].id)
    expect(options[1]).toHaveAttribute('aria-selected', 'true')
    await user.keyboard('{ArrowDown}{Tab}')
    expect(box).toHaveValue('/workflow ')
    // Then the workflows, by name.
    const names = screen.getByRole('listbox', { name: 'Workflows' })
    expect(within(names).getAllByRole('option').map((o) => o.textContent)).toEqual(['Buildworkflow', 'Reviewworkflow'])
    await user.type(box, 'r')
    await user.keyboard('{Enter}')
    expect(box).toHaveValue('/workflow Review ')
    expect(screen.queryByRole('listbox')).not.toBeInTheDocument()
    await user.clear(box)
    await user.type(box, '/')
    await user.keyboard('{Escape}')
    expect(screen.queryByRole('listbox')).not.toBeInTheDocument()
    expect(box).not.toHaveAttribute('aria-activedescendant')
  })

  it('starts the named workflow with the brief, whatever the case of its name', async () => {
    const user = userEvent.setup()
    const { box, onStartWorkflow, onSend } = composer()
    await user.type(box, '/workflow build fix the login bug{Enter}')
    expect(onStartWorkflow).toHaveBeenCalledWith('w1', 'fix the login bug')
    expect(onSend).not.toHaveBeenCalled()
    expect(box).toHaveValue('')
  })

  it('refuses an unknown name or an empty brief inline, sending nothing', async () => {
    const user = userEvent.setup()
    const { box, onStartWorkflow, onSend } = composer()
    await user.type(box, '/workflow deploy now{Enter}')
    expect(screen.getByRole('alert')).toHaveTextContent('No workflow is named "deploy". The workflows are: Build, Review.')
    await user.clear(box)
    await user.type(box, '/workflow Review {Escape}{Enter}')
    expect(screen.getByRole('alert')).toHaveTextContent('Write a brief after the name: /workflow Review <what it should do>.')
    expect(onStartWorkflow).not.toHaveBeenCalled()
    expect(onSend).not.toHaveBeenCalled()
    expect(box).toHaveValue('/workflow Review ')
  })

  it("shows the server's refusal of a start", async () => {
    const user = userEvent.setup()
    const { box } = composer({ onStartWorkflow: vi.fn(async () => { throw new ApiError(409, 'conflict', 'the conversation has an active run') }) })
    await user.type(box, '/workflow Build go{Enter}')
    expect(await screen.findByRole('alert')).toHaveTextContent('the conversation has an active run (conflict)')
    expect(box).toHaveValue('/workflow Build go')
  })

  it('/plan turns plan mode on, and sends what follows it in plan mode', async () => {
    const user = userEvent.setup()
    const { box, onPlan, onSend } = composer()
    await user.type(box, '/plan ship it{Enter}')
    expect(onPlan).toHaveBeenCalledWith(true)
    expect(onSend).toHaveBeenCalledWith('ship it', [], { plan: true })
  })
})

const entry = (display: Entry['display']): Entry =>
  ({ id: 'n1', row_id: 'n1', kind: 'annotation', text: 'Workflow "Build" started by ann.', created_at: '', compacted: false, on_path: true, seq: 1, display }) as Entry
const task = { task_id: 't1', status: 'working', queued: false, label: 'Build', kind: 'workflow' } as Task

describe("a workflow start's note", () => {
  it('is a chip naming the workflow and who started it, with its status, opening the execution', async () => {
    const [item] = fromEntries([entry({ kind: 'workflow_started', title: 'Build', summary: 'ann', extra: { task_id: 't1', workflow_id: 'w1', workflow: 'Build', brief: 'fix it', started_by: 'ann' } })])
    expect(item).toMatchObject({ kind: 'workflow_start', workflow: 'Build', who: 'ann', taskId: 't1' })
    renderWithData(
      <TasksContext.Provider value={{ sessionId: 's1', byId: new Map([['t1', task]]) }}>
        <ItemView item={item} />
      </TasksContext.Provider>,
    )
    const chip = screen.getByRole('button', { name: "▶ Build (ann): open the workflow's execution" })
    expect(chip).toHaveTextContent('▶ Build (ann)')
    // The brief is read in the execution, not here.
    expect(document.body).not.toHaveTextContent('fix it')
    expect(screen.getByText('Working')).toHaveClass('pill-run')
    await userEvent.click(chip)
    expect(inspectorNow()).toMatchObject({ open: true, tab: 'task', task: { sessionId: 's1', taskId: 't1' } })
  })
})

describe('a step held by pause_before', () => {
  const approval: Approval = {
    id: 'ap1', run_id: 'r1', session_id: 'child', task_id: 't1', tool_call_id: 'step_r1', tool_name: 'workflow_step', created_at: '',
    arguments: JSON.stringify({ workflow: 'release', step: 'deploy', step_id: 's2', agent: 'a2', prompt: 'Ship version 2', progress: 'step 2/2 (deploy)', task_id: 't1' }),
  }

  it('asks to run the step, saying where the workflow is, who runs it and how it starts', () => {
    renderWithData(
      <TasksContext.Provider value={{ sessionId: 's1', byId: new Map([['t1', task]]) }}>
        <ApprovalCard approval={approval} />
      </TasksContext.Provider>,
      [[keys.agents, agents]],
    )
    const card = document.querySelector('.step-approval') as HTMLElement
    expect(within(card).getByText('Run step deploy of release?')).toHaveClass('tool-title')
    expect(card).toHaveTextContent('step 2/2 (deploy) · run by Deployer. The step starts with:')
    expect(within(card).getByText('Ship version 2')).toBeInTheDocument()
    const group = within(card).getByRole('group', { name: 'Approval for workflow_step' })
    expect(group).toHaveTextContent('Approving runs it; rejecting cancels the workflow.')
    expect(within(group).getAllByRole('button').map((b) => b.textContent)).toEqual(['Run the step', 'Reject…'])
    expect(within(card).getByRole('button', { name: 'Open task' })).toBeInTheDocument()
  })
})

describe('/workflow on the start screen', () => {
  it('makes the conversation with the chosen agent, starts the workflow into it and opens it', async () => {
    const post = vi.spyOn(api, 'POST').mockImplementation(((path: string) => (path === '/api/v1/sessions'
      ? answer(201, { id: 's9', name: '', agent_config_id: 'a1', owner_id: 'u', pinned: false, planning: false, created_at: '', updated_at: '' })
      : answer(201, { ...task, task_id: 't9', parent_session_id: 's9' }))) as never)
    vi.spyOn(api, 'GET').mockImplementation((() => answer(200, [])) as never)
    try {
      renderWithData(<NewConversation />, [[keys.agents, agents], [keys.workflows, flows], [keys.projectList(false), []]])
      await userEvent.type(screen.getByRole('textbox', { name: 'Message' }), '/workflow review check the diff{Enter}')
      await vi.waitFor(() => expect(window.location.pathname).toBe('/s/s9'))
      const calls = post.mock.calls as unknown as [string, { body?: unknown; params?: unknown }][]
      expect(calls.map(([path, o]) => [path, o.body])).toEqual([
        ['/api/v1/sessions', { agent_config_id: 'a1' }],
        ['/api/v1/workflows/{id}/runs', { session_id: 's9', input: 'check the diff' }],
      ])
      expect(calls[1][1].params).toEqual({ path: { id: 'w2' } })
    } finally {
      vi.restoreAllMocks()
    }
  })
})
