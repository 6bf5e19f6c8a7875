// @vitest-environment jsdom
// The hub's Triggers as a user meets them: one line each (paged past 25),
// how each last went, a line opening to its detail and actions; the form
// with the server's field errors at their fields; a webhook's secret shown
// once with a signed example to copy; and a trigger's chip in the
// conversation.
import { screen, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { api, type Agent, type Entry, type Session } from '../../lib/api'
import { keys } from '../../lib/queries'
import { curlExample, type Trigger } from '../../lib/triggers'
import { answer, refusal } from '../../test/mcp'
import { renderWithData } from '../../test/render'
import { contentOf } from '../../timeline/model'
import { fromEntries } from '../../timeline/fromEntries'
import { ItemView } from '../conversation/ItemView'
import { inspectorNow, resetInspector } from '../inspector/inspectorState'
import { TriggersSection, WorkflowTriggers } from './Triggers'

const agents = [{ id: 'a1', name: 'Reviewer' }] as Agent[]
const workflows = [{ id: 'w1', name: 'ship', steps: [] }]
const sessions = [
  { id: 's1', name: 'Release chat', updated_at: '2026-01-02T00:00:00Z' },
  { id: 's2', name: '', updated_at: '2026-01-01T00:00:00Z' },
] as Session[]
const base: Trigger = {
  id: 'tr1', name: 'on push', kind: 'webhook', target: 'agent', agent_config_id: 'a1', session_id: 's1', brief: 'Review what was pushed', enabled: true,
  hook_url: 'https://agents.example/hooks/tr1', last_error: '', last_started_id: '', created_at: '', updated_at: '',
}
const nightly: Trigger = {
  ...base, id: 'tr2', name: '', kind: 'cron', schedule: '0 9 * * 1-5', target: 'workflow', workflow_id: 'w1', agent_config_id: undefined, hook_url: undefined,
  session_id: 's2', next_fire_at: '2026-01-05T09:00:00Z', last_started_id: 't7', last_fired_at: '2026-01-02T09:00:00Z',
}
const refused: Trigger = { ...base, id: 'tr3', name: 'busy one', enabled: false, last_error: 'the conversation is busy with a run', last_fired_at: '2026-01-02T09:00:00Z' }

function show(list: Trigger[], ui = <TriggersSection />) {
  return renderWithData(ui, [
    [keys.triggers, list], [keys.agents, agents], [keys.workflows, workflows], [keys.sessions, sessions],
    [keys.serverInfo, { version: 'dev', time_zone: 'Europe/Berlin' }],
  ])
}

const cells = (row: HTMLElement) => [...row.querySelectorAll('td')].map((c) => c.textContent)
const rowOf = (name: string) => document.querySelector(`tbody[data-trigger="${name}"] .trigger-row`) as HTMLElement

beforeEach(() => {
  resetInspector()
  window.history.replaceState(null, '', '/workflows')
})
afterEach(() => vi.restoreAllMocks())

describe("the hub's Triggers", () => {
  it('lists each trigger: what fires it, its target, conversation, whether on, its next tick and how it last went', () => {
    show([base, nightly, refused])
    expect(screen.getByRole('heading', { name: 'Triggers' })).toBeInTheDocument()
    const table = screen.getByRole('table', { name: 'Triggers' })
    expect(within(table).getAllByRole('columnheader').map((h) => h.textContent)).toEqual(['Trigger', 'Fires', 'Target', 'Conversation', 'Enabled', 'Next fire', 'Last result'])
    expect(cells(rowOf('on push'))).toEqual(['on push', 'webhook', 'agent Reviewer', 'Release chat', 'Enabled', '—', 'Never fired'])
    const cron = cells(rowOf('cron 0 9 * * 1-5'))
    expect(cron.slice(0, 5)).toEqual(['cron 0 9 * * 1-5', 'cron 0 9 * * 1-5', 'workflow ship', 'New conversation', 'Enabled'])
    expect(cron[5]).not.toBe('—')
    expect(cron[6]).toMatch(/^Started /)
    const busy = rowOf('busy one')
    expect(cells(busy).slice(4, 6)).toEqual(['Disabled', '—'])
    expect(within(busy).getByText(/Refused .*: the conversation is busy with a run/)).toHaveClass('error-text')
  })

  it('pages past 25 triggers', async () => {
    show(Array.from({ length: 27 }, (_, i) => ({ ...base, id: `t${i}`, name: `hook ${String(i + 1).padStart(2, '0')}` })))
    const table = screen.getByRole('table', { name: 'Triggers' })
    expect(table.querySelectorAll('tbody.trigger')).toHaveLength(25)
    const pages = screen.getByRole('navigation', { name: 'Triggers pages' })
    expect(pages).toHaveTextContent('1–25 of 27')
    await userEvent.click(within(pages).getByRole('button', { name: 'Next ›' }))
    expect([...table.querySelectorAll('tbody.trigger')].map((b) => b.getAttribute('data-trigger'))).toEqual(['hook 26', 'hook 27'])
  })

  it("opens what a workflow trigger last started: its conversation, with the execution in the inspector", async () => {
    show([nightly])
    await userEvent.click(within(rowOf('cron 0 9 * * 1-5')).getByRole('button', { name: /^Started/ }))
    expect(window.location.pathname).toBe('/s/s2')
    expect(inspectorNow()).toMatchObject({ open: true, tab: 'task', task: { sessionId: 's2', taskId: 't7' } })
  })

  it('opens a line in place: where it fires, its brief, how it last went, and its actions', async () => {
    show([nightly])
    const open = within(rowOf('cron 0 9 * * 1-5')).getByRole('button', { name: 'cron 0 9 * * 1-5' })
    expect(open).toHaveAttribute('aria-expanded', 'false')
    await userEvent.click(open)
    expect(open).toHaveAttribute('aria-expanded', 'true')
    const detail = screen.getByRole('group', { name: 'Trigger cron 0 9 * * 1-5' })
    expect(detail).toHaveTextContent('On the schedule 0 9 * * 1-5 (Europe/Berlin); next at')
    expect(detail).toHaveTextContent('The workflow ship, reporting into New conversation')
    expect(detail).toHaveTextContent('Review what was pushed')
    expect(within(detail).getAllByRole('button').map((b) => b.textContent)).toEqual(['New conversation', expect.stringMatching(/^Started /), 'Disable', 'Fire now', 'Edit', 'Delete'])
    // A cron trigger has no secret and no delivery to sign.
    expect(within(detail).queryByRole('button', { name: 'Rotate secret' })).not.toBeInTheDocument()
    expect(detail.querySelector('.trigger-curl')).toBeNull()
  })

  it('fires now, asking for the list again; a refusal is shown', async () => {
    const post = vi.spyOn(api, 'POST').mockImplementationOnce((() => answer(201, { run_id: 'r1' })) as never)
      .mockImplementationOnce((() => refusal(409, 'conflict', 'the conversation is busy with a run')) as never)
    const get = vi.spyOn(api, 'GET').mockImplementation((() => answer(200, [{ ...base, last_started_id: 'r1', last_fired_at: '2026-01-02T10:00:00Z' }])) as never)
    show([base])
    await userEvent.click(screen.getByRole('button', { name: 'on push' }))
    const detail = screen.getByRole('group', { name: 'Trigger on push' })
    await userEvent.click(within(detail).getByRole('button', { name: 'Fire now' }))
    expect(await within(detail).findByText('Fired: it started.')).toBeInTheDocument()
    expect(post.mock.calls[0][0]).toBe('/api/v1/triggers/{id}/fire')
    expect(get.mock.calls.map((c) => c[0])).toContain('/api/v1/triggers')
    await vi.waitFor(() => expect(cells(rowOf('on push'))[6]).toMatch(/^Started/))
    await userEvent.click(within(detail).getByRole('button', { name: 'Fire now' }))
    expect(await within(detail).findByRole('alert')).toHaveTextContent('the conversation is busy with a run (conflict)')
  })

  it('turns a trigger off with its whole spec, and deletes one only when confirmed', async () => {
    const put = vi.spyOn(api, 'PUT').mockImplementation((() => answer(200, { ...base, enabled: false })) as never)
    const del = vi.spyOn(api, 'DELETE').mockImplementation((() => answer(204)) as never)
    vi.spyOn(api, 'GET').mockImplementation((() => answer(200, [{ ...base, enabled: false }])) as never)
    show([base])
    await userEvent.click(screen.getByRole('button', { name: 'on push' }))
    const detail = screen.getByRole('group', { name: 'Trigger on push' })
    await userEvent.click(within(detail).getByRole('button', { name: 'Disable' }))
    expect(put.mock.calls[0][1]).toEqual({ params: { path: { id: 'tr1' } }, body: { name: 'on push', kind: 'webhook', target: 'agent', agent_config_id: 'a1', session_id: 's1', brief: 'Review what was pushed', enabled: false } })
    expect(await within(detail).findByRole('button', { name: 'Enable' })).toBeInTheDocument()
    expect(within(detail).getByRole('button', { name: 'Fire now' })).toBeDisabled()
    await userEvent.click(within(detail).getByRole('button', { name: 'Delete' }))
    expect(del).not.toHaveBeenCalled()
    await userEvent.click(within(detail).getByRole('button', { name: 'Keep it' }))
    await userEvent.click(within(detail).getByRole('button', { name: 'Delete' }))
    await userEvent.click(within(detail).getByRole('button', { name: 'Delete it' }))
    expect(del).toHaveBeenCalledWith('/api/v1/triggers/{id}', { params: { path: { id: 'tr1' } } })
  })
})

describe('a webhook trigger', () => {
  it('shows its secret once, right after creation, and a signed example embedding it to copy', async () => {
    const created = { ...base, id: 'tr9', name: 'deploys', secret: 'whsec_0123456789abcdef', hook_url: 'https://agents.example/hooks/tr9' }
    vi.spyOn(api, 'POST').mockImplementation((() => answer(201, created)) as never)
    vi.spyOn(api, 'GET').mockImplementation((() => answer(200, [{ ...created, secret: undefined }])) as never)
    const writeText = vi.fn(async () => {})
    Object.defineProperty(navigator, 'clipboard', { value: { writeText }, configurable: true })
    show([])
    await userEvent.click(screen.getByRole('button', { name: 'Add trigger' }))
    const form = screen.getByRole('form', { name: 'Add trigger' })
    await userEvent.type(within(form).getByLabelText('Name'), 'deploys')
    await userEvent.selectOptions(within(form).getByLabelText('Agent'), 'Reviewer')
    await userEvent.selectOptions(within(form).getByLabelText('Conversation'), 'Release chat')
    await userEvent.type(within(form).getByLabelText('Brief'), 'Review what was pushed')
    await userEvent.click(within(form).getByRole('button', { name: 'Add' }))

    const detail = await screen.findByRole('group', { name: 'Trigger deploys' })
    expect(screen.queryByRole('form', { name: 'Add trigger' })).not.toBeInTheDocument()
    expect(within(detail).getByRole('status', { name: 'The signing secret' })).toHaveTextContent('Copy this secret now — it is not shown again')
    expect(detail.querySelector('.trigger-secret')).toHaveTextContent('whsec_0123456789abcdef')
    expect(detail.querySelector('.trigger-hook-url')).toHaveTextContent('https://agents.example/hooks/tr9')
    const example = curlExample('https://agents.example/hooks/tr9', 'whsec_0123456789abcdef')
    expect(detail.querySelector('.trigger-curl')?.textContent).toBe(example)
    await userEvent.click(within(detail).getByRole('button', { name: 'Copy the example' }))
    expect(writeText).toHaveBeenCalledWith(example)
    expect(await within(detail).findByText('Copied')).toBeVisible()
  })

  it('once the secret is gone, its example reads $AGENTS_HOOK_SECRET and says so', async () => {
    show([base])
    await userEvent.click(screen.getByRole('button', { name: 'on push' }))
    const detail = screen.getByRole('group', { name: 'Trigger on push' })
    expect(detail.querySelector('.trigger-secret')).toBeNull()
    expect(detail.querySelector('.trigger-curl')?.textContent).toBe(curlExample('https://agents.example/hooks/tr1'))
    expect(detail).toHaveTextContent('set AGENTS_HOOK_SECRET to the trigger\'s secret first')
  })

  it('rotates its secret only when confirmed, showing the new one once', async () => {
    const post = vi.spyOn(api, 'POST').mockImplementation((() => answer(200, { ...base, secret: 'whsec_new' })) as never)
    vi.spyOn(api, 'GET').mockImplementation((() => answer(200, [base])) as never)
    show([base])
    await userEvent.click(screen.getByRole('button', { name: 'on push' }))
    const detail = screen.getByRole('group', { name: 'Trigger on push' })
    await userEvent.click(within(detail).getByRole('button', { name: 'Rotate secret' }))
    expect(post).not.toHaveBeenCalled()
    expect(within(detail).getByRole('group', { name: 'Confirm the rotation' })).toHaveTextContent('The old one stops working at once')
    await userEvent.click(within(detail).getByRole('button', { name: 'Rotate it' }))
    expect(post).toHaveBeenCalledWith('/api/v1/triggers/{id}/rotate', { params: { path: { id: 'tr1' } } })
    expect(await within(detail).findByText('whsec_new')).toHaveClass('trigger-secret')
    expect(detail.querySelector('.trigger-curl')).toHaveTextContent("SECRET='whsec_new'")
  })
})

describe('the trigger form', () => {
  it("shows the server's field errors at their fields", async () => {
    vi.spyOn(api, 'POST').mockImplementation((() => refusal(400, 'validation', 'invalid request', {
      schedule: 'does not read as a schedule: expected five fields', session_id: 'is required: the conversation the trigger\'s work reports into',
      brief: 'is required: it is what the started work is asked to do',
    })) as never)
    show([])
    await userEvent.click(screen.getByRole('button', { name: 'Add trigger' }))
    const form = screen.getByRole('form', { name: 'Add trigger' })
    await userEvent.selectOptions(within(form).getByLabelText('Kind'), 'cron')
    const schedule = within(form).getByLabelText('Schedule')
    // Where the schedule runs, with examples.
    expect(form.querySelector('.field[data-field="Schedule"] .hint')).toHaveTextContent("0 9 * * 1-5, @daily, @every 30m — in the server's time zone (Europe/Berlin)")
    await userEvent.type(schedule, 'every day')
    await userEvent.click(within(form).getByRole('button', { name: 'Add' }))
    expect(await within(form).findByText('3 fields need attention: invalid request (validation)')).toHaveAttribute('role', 'alert')
    expect(schedule).toHaveAttribute('aria-invalid', 'true')
    expect(schedule).toHaveAccessibleDescription('does not read as a schedule: expected five fields')
    expect(within(form).getByLabelText('Conversation')).toHaveAccessibleDescription("is required: the conversation the trigger's work reports into")
    expect(within(form).getByLabelText('Brief')).toHaveAccessibleDescription('is required: it is what the started work is asked to do')
    expect(within(form).getByLabelText('Agent')).not.toHaveAttribute('aria-invalid')
  })

  it('on a workflow, lists its own triggers and adds one prefilled with it', async () => {
    const post = vi.spyOn(api, 'POST').mockImplementation((() => answer(201, { ...nightly, id: 'tr5' })) as never)
    vi.spyOn(api, 'GET').mockImplementation((() => answer(200, [nightly, base])) as never)
    show([nightly, base], <WorkflowTriggers workflowId="w1" workflowName="ship" />)
    const table = screen.getByRole('table', { name: 'Triggers of ship' })
    expect([...table.querySelectorAll('tbody.trigger')].map((b) => b.getAttribute('data-trigger'))).toEqual(['cron 0 9 * * 1-5'])
    await userEvent.click(screen.getByRole('button', { name: 'Add trigger' }))
    const form = screen.getByRole('form', { name: 'Add trigger' })
    expect(within(form).getByLabelText('Target')).toHaveValue('workflow')
    expect(within(form).getByLabelText('Workflow')).toHaveValue('w1')
    await userEvent.selectOptions(within(form).getByLabelText('Kind'), 'cron')
    await userEvent.type(within(form).getByLabelText('Schedule'), '@daily')
    await userEvent.selectOptions(within(form).getByLabelText('Conversation'), 'Release chat')
    await userEvent.type(within(form).getByLabelText('Brief'), 'ship the nightly build')
    await userEvent.click(within(form).getByLabelText('Enabled'))
    await userEvent.click(within(form).getByRole('button', { name: 'Add' }))
    expect(post).toHaveBeenCalledWith('/api/v1/triggers', {
      body: { name: '', kind: 'cron', schedule: '@daily', target: 'workflow', workflow_id: 'w1', session_id: 's1', brief: 'ship the nightly build', enabled: false },
    })
  })

  it('edits a trigger, its kind fixed', async () => {
    const put = vi.spyOn(api, 'PUT').mockImplementation((() => answer(200, { ...base, brief: 'Review it twice' })) as never)
    vi.spyOn(api, 'GET').mockImplementation((() => answer(200, [base])) as never)
    show([base])
    await userEvent.click(screen.getByRole('button', { name: 'on push' }))
    await userEvent.click(within(screen.getByRole('group', { name: 'Trigger on push' })).getByRole('button', { name: 'Edit' }))
    const form = screen.getByRole('form', { name: 'Edit on push' })
    expect(within(form).getByLabelText('Kind')).toBeDisabled()
    expect(within(form).getByLabelText('Agent')).toHaveValue('a1')
    const brief = within(form).getByLabelText('Brief')
    await userEvent.clear(brief)
    await userEvent.type(brief, 'Review it twice')
    await userEvent.click(within(form).getByRole('button', { name: 'Save' }))
    expect(put.mock.calls[0][1]).toMatchObject({ params: { path: { id: 'tr1' } }, body: { kind: 'webhook', agent_config_id: 'a1', brief: 'Review it twice' } })
    expect(await screen.findByRole('group', { name: 'Trigger on push' })).toBeInTheDocument()
  })
})

describe("a trigger's note in the conversation", () => {
  const note = {
    id: 'n1', row_id: 'n1', kind: 'annotation', text: 'Trigger "on push" asked Reviewer.', created_at: '', compacted: false, on_path: true, seq: 1,
    display: { kind: 'trigger_fired', title: 'on push', summary: 'Reviewer', extra: { trigger_id: 'tr1', trigger: 'on push', kind: 'webhook', agent_config_id: 'a1', agent: 'Reviewer' } },
  } as Entry

  it('is a chip naming the trigger and the agent it asked, the label alone', () => {
    const [item] = fromEntries([note])
    expect(item).toMatchObject({ kind: 'trigger_fired', trigger: 'on push', agent: 'Reviewer', triggerId: 'tr1' })
    expect(contentOf(item)).toEqual({ kind: 'trigger_fired', trigger: 'on push', agent: 'Reviewer', triggerId: 'tr1' })
    renderWithData(<ItemView item={item} />)
    const chip = screen.getByText('⚡ on push asked Reviewer')
    expect(chip).toHaveClass('wf-start-chip', 'trigger-chip')
    expect(screen.queryByRole('button')).not.toBeInTheDocument()
  })
})
