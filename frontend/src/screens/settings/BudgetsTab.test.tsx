// @vitest-environment jsdom
// The Budgets tab: a budget's consumption as a bar, a new one asked with
// the subject picked from the existing people, agents or providers, the
// server's refusal next to its field, and a delete confirmed first. The
// server's answers sit in the query cache; writes reach a stand-in fetch.
import { screen, waitFor, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { keys } from '../../lib/queries'
import type { BudgetStatus } from '../../lib/usage'
import { usageKeys } from '../../lib/usageApi'
import { renderWithData } from '../../test/render'
import { BudgetsTab } from './BudgetsTab'

const budget: BudgetStatus = { id: 'b1', scope: 'agent', subject_id: 'a1', subject_name: 'Helper', period: 'month', unit: 'usd', limit: 10, consumed: 8.5, percent: 85,
  resets_at: '2026-04-01T00:00:00Z', created_at: '', updated_at: '' }
let sent: { method: string; url: string; body?: unknown }[] = []
let reply: (url: string, method: string) => Response

beforeEach(() => {
  sent = []
  reply = () => new Response(JSON.stringify({ ...budget, id: 'b2', scope: 'person', subject_name: 'bob', limit: 5, consumed: 0, percent: 0 }), { status: 201 })
  vi.spyOn(globalThis, 'fetch').mockImplementation((async (url: string, init?: RequestInit) => {
    const method = init?.method ?? 'GET'
    sent.push({ method, url, ...(init?.body ? { body: JSON.parse(String(init.body)) } : {}) })
    return method === 'GET' ? new Response(JSON.stringify({ budgets: [budget], prices: [] })) : reply(url, method)
  }) as typeof fetch)
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
const writes = () => sent.filter((s) => s.method !== 'GET')

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
    reply = () => new Response(JSON.stringify({ error: { code: 'conflict', message: 'a monthly budget for Helper exists', fields: { subject_id: 'already has one' } } }), { status: 409 })
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
    reply = () => new Response(null, { status: 204 })
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
