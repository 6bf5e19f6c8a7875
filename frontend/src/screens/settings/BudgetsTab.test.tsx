// @vitest-environment jsdom
// The Budgets tab: a budget's consumption as a bar, a new one asked with
// the subject picked from the existing people, agents or providers, the
// server's refusal next to its field, and a delete confirmed first. The
// server's answers sit in the query cache; writes reach a stand-in for the
// API client's.
import { screen, waitFor, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { api } from '../../lib/api'
import { keys } from '../../lib/queries'
import type { BudgetStatus } from '../../lib/usage'
import { usageKeys } from '../../lib/usageApi'
import { answer, refusal } from '../../test/mcp'
import { renderWithData } from '../../test/render'
import { BudgetsTab } from './BudgetsTab'

const budget: BudgetStatus = { id: 'b1', scope: 'agent', subject_id: 'a1', subject_name: 'Helper', period: 'month', unit: 'usd', limit: 10, consumed: 8.5, percent: 85,
  resets_at: '2026-04-01T00:00:00Z', created_at: '', updated_at: '' }
let sent: { method: string; url: string; body?: unknown }[] = []
let reply: () => ReturnType<typeof answer>

/** Records a write made through the API client and answers it with reply(). */
const write = (method: string) => ((url: string, init?: { params?: { path?: { id?: string } }; body?: unknown }) => {
  const id = init?.params?.path?.id
  sent.push({ method, url: id ? url.replace('{id}', id) : url, ...(init?.body !== undefined ? { body: init.body } : {}) })
  return reply()
}) as never

beforeEach(() => {
  sent = []
  reply = () => answer(201, { ...budget, id: 'b2', scope: 'person', subject_name: 'bob', limit: 5, consumed: 0, percent: 0 })
  vi.spyOn(api, 'GET').mockImplementation((() => answer(200, { budgets: [budget], prices: [] })) as never)
  vi.spyOn(api, 'POST').mockImplementation(write('POST'))
  vi.spyOn(api, 'PATCH').mockImplementation(write('PATCH'))
  vi.spyOn(api, 'DELETE').mockImplementation(write('DELETE'))
})
afterEach(() => {
  vi.restoreAllMocks()
})

function show() {
  return renderWithData(<BudgetsTab />, [
    [usageKeys.budgets, { budgets: [budget] }], [usageKeys.prices, { prices: [] }], [['settings'], []],
    [['users'], [{ id: 'u1', username: 'ann' }, { id: 'u2', username: 'bob' }]], [keys.agents, [{ id: 'a1', name: 'Helper' }]], [keys.providers, []],
  ])
}
const writes = () => sent

describe('the Budgets tab', () => {
  it('shows a budget nearly used up', () => {
    show()
    const bar = screen.getByRole('progressbar', { name: 'Monthly · Agent · Helper' })
    expect(bar).toHaveAttribute('aria-valuetext', '$8.50 of $10.00 (85%)')
    expect(screen.getByText('nearly used')).toBeInTheDocument()
  })

  it('adds a budget for a person picked from the people', async () => {
    show()
    const form = screen.getByRole('form', { name: 'New budget' })
    await userEvent.selectOptions(within(form).getByLabelText('Applies to'), 'person')
    await userEvent.selectOptions(within(form).getByLabelText('Person'), 'bob')
    await userEvent.selectOptions(within(form).getByLabelText('Period'), 'day')
    await userEvent.type(within(form).getByLabelText('Limit (US dollars)'), '5')
    await userEvent.click(within(form).getByRole('button', { name: 'Add budget' }))
    expect(await within(form).findByRole('status')).toHaveTextContent('Added: $5.00 a month for bob.')
    expect(writes()).toEqual([{ method: 'POST', url: '/api/v1/budgets', body: { scope: 'person', subject_id: 'u2', period: 'day', unit: 'usd', limit: 5 } }])
  })

  it("puts the server's refusal next to its field", async () => {
    reply = () => refusal(409, 'conflict', 'a monthly budget for Helper exists', { subject_id: 'already has one' })
    show()
    const form = screen.getByRole('form', { name: 'New budget' })
    await userEvent.selectOptions(within(form).getByLabelText('Applies to'), 'agent')
    await userEvent.selectOptions(within(form).getByLabelText('Agent'), 'Helper')
    await userEvent.type(within(form).getByLabelText('Limit (US dollars)'), '3')
    await userEvent.click(within(form).getByRole('button', { name: 'Add budget' }))
    expect(await within(form).findByText('already has one')).toBeInTheDocument()
    expect(within(form).getByText('a monthly budget for Helper exists (conflict)')).toBeInTheDocument()
  })

  it('changes a limit, and deletes only once confirmed', async () => {
    reply = () => answer(204)
    show()
    const row = screen.getByRole('listitem', { name: 'Budget b1' })
    const limit = within(row).getByLabelText('Limit ($)')
    await userEvent.clear(limit)
    await userEvent.type(limit, '12')
    await userEvent.click(within(row).getByRole('button', { name: 'Save limit' }))
    await waitFor(() => expect(writes()).toEqual([{ method: 'PATCH', url: '/api/v1/budgets/b1', body: { limit: 12 } }]))
    await userEvent.click(within(row).getByRole('button', { name: 'Delete' }))
    expect(writes()).toHaveLength(1)
    await userEvent.click(within(row).getByRole('button', { name: 'Delete?' }))
    await waitFor(() => expect(writes().at(-1)).toEqual({ method: 'DELETE', url: '/api/v1/budgets/b1' }))
  })
})
