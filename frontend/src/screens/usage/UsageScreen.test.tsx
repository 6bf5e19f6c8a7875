// @vitest-environment jsdom
// The usage screens as a person reads them: the server's reports sit in the
// query cache (nothing is fetched), and the test asserts the totals, the
// budgets, the charts' words and tables, and the top conversations.
import { screen, within } from '@testing-library/react'
import { describe, expect, it } from 'vitest'
import { keys } from '../../lib/queries'
import { noUsage, presetRange, type UsageReport } from '../../lib/usage'
import { usageKeys } from '../../lib/usageApi'
import { renderWithData } from '../../test/render'
import { UsageScreen } from './UsageScreen'

const range = presetRange('30')
const row = (key: string, label: string, cost: number, input = 1000, output = 200) => ({ ...noUsage, key, label, calls: 1, cost_usd: cost, input_tokens: input, output_tokens: output })
const report = (group_by: UsageReport['group_by'], rows: UsageReport['rows'], extra: Partial<UsageReport> = {}): UsageReport => ({
  from: range.from, to: range.to, group_by, rows,
  totals: { ...noUsage, calls: 3, input_tokens: 1_234_567, output_tokens: 4500, cost_usd: 12.5, unpriced_calls: 2 }, ...extra,
})
const budget = { id: 'b1', scope: 'default' as const, subject_id: '', subject_name: 'each member', period: 'day' as const, unit: 'usd' as const, limit: 1, consumed: 1.2, percent: 120,
  resets_at: '2026-03-06T00:00:00Z', created_at: '', updated_at: '' }

function show(mine: boolean, role: 'admin' | 'member') {
  const m = mine || role !== 'admin'
  return renderWithData(<UsageScreen mine={mine} />, [
    [keys.me, { id: 'u1', username: 'ann', role }],
    [usageKeys.report(m, range, 'day'), report('day', [row(range.to, range.to, 12.5)], m ? { budgets: [budget] } : {})],
    [usageKeys.report(false, range, 'person'), report('person', [row('u1', 'ann', 10), row('u2', '', 2.5)])],
    [usageKeys.report(m, range, 'agent'), report('agent', [row('a1', 'Helper', 12.5)])],
    [usageKeys.report(m, range, 'model'), report('model', [row('gpt', 'gpt-x', 12.5)])],
    [usageKeys.report(m, range, 'conversation', 10), report('conversation', [row('s1', 'Plans', 12, 5000, 100), row('s2', '', 0.5)])],
  ])
}

describe("everyone's usage (admins)", () => {
  it('shows the totals and the calls no price covered', () => {
    show(false, 'admin')
    expect(screen.getByRole('heading', { level: 1 })).toHaveTextContent('Usage')
    const totals = screen.getByRole('group', { name: 'Totals' })
    expect(totals).toHaveTextContent('Cost$12.50')
    expect(totals).toHaveTextContent('Tokens in1.2M')
    expect(totals).toHaveTextContent('Tokens out4.5k')
    expect(screen.getByText(/No price for 2 calls/)).toBeInTheDocument()
  })

  it('names each chart by its data and keeps its figures as a table', () => {
    show(false, 'admin')
    expect(screen.getByRole('img', { name: /^Spend by person: ann \$10\.00, \(deleted\) \$2\.50\.$/ })).toBeInTheDocument()
    expect(screen.getByRole('img', { name: new RegExp(`^Spend per day from ${range.from} to ${range.to}: \\$12\\.50 in total`) })).toBeInTheDocument()
    const table = screen.getByRole('table', { name: 'By agent' })
    expect(within(table).getByRole('row', { name: /Helper/ })).toHaveTextContent('$12.50')
  })

  it('lists the top conversations, a deleted one as such, not linked', () => {
    show(false, 'admin')
    const table = screen.getByRole('table', { name: 'Top conversations' })
    expect(within(table).getAllByRole('row').map((r) => r.textContent)).toEqual([
      'ConversationCallsTokens inTokens outCost', 'Plans15k100$12.00', '(deleted)11k200$0.50',
    ])
    expect(within(table).queryByRole('link')).toBeNull()
  })
})

describe('your usage', () => {
  it('has no person breakdown, shows the budgets and opens your conversations', () => {
    show(true, 'member')
    expect(screen.getByRole('heading', { level: 1 })).toHaveTextContent('Your usage')
    expect(screen.queryByRole('heading', { name: 'By person' })).toBeNull()
    const bar = screen.getByRole('progressbar', { name: 'Daily · Each member' })
    expect(bar).toHaveAttribute('aria-valuenow', '100')
    expect(bar).toHaveAttribute('aria-valuetext', '$1.20 of $1.00 (120%), exceeded')
    expect(screen.getByText('exceeded')).toBeInTheDocument()
    expect(screen.getByRole('link', { name: 'Plans' })).toHaveAttribute('href', '/s/s1')
  })

  it("sends a member who asks for everyone's usage to their own", () => {
    renderWithData(<UsageScreen mine={false} />, [[keys.me, { id: 'u2', username: 'bob', role: 'member' }]])
    expect(screen.getByText(/Only admins see everyone's usage/)).toBeInTheDocument()
    expect(screen.getByRole('link', { name: 'See your usage' })).toHaveAttribute('href', '/usage/me')
  })
})
