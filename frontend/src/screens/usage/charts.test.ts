import { describe, expect, it } from 'vitest'
import { noUsage } from '../../lib/usage'
import { rankChart, timeChart } from './charts'

const row = (key: string, label: string, cost: number, input = 0, output = 0) => ({ ...noUsage, key, label, cost_usd: cost, input_tokens: input, output_tokens: output })

describe('chart data and its words', () => {
  it('draws every day of the range and names the busiest', () => {
    const { data, summary } = timeChart([row('2026-03-02', '2026-03-02', 1.5)], { from: '2026-03-01', to: '2026-03-03' }, 'cost')
    expect(data.categories).toEqual(['2026-03-01', '2026-03-02', '2026-03-03'])
    expect(data.series).toEqual([{ name: 'Cost', values: [0, 1.5, 0] }])
    expect(summary).toBe('Spend per day from 2026-03-01 to 2026-03-03: $1.50 in total, the most on 2026-03-02 ($1.50).')
  })

  it('counts tokens in and out as two series', () => {
    const { data, summary } = timeChart([row('2026-03-01', '', 0, 1000, 500)], { from: '2026-03-01', to: '2026-03-01' }, 'tokens')
    expect(data.series.map((s) => s.name)).toEqual(['Input tokens', 'Output tokens'])
    expect(summary).toBe('Tokens per day from 2026-03-01 to 2026-03-01: 1.5k in total, the most on 2026-03-01 (1.5k).')
  })

  it('draws the largest groups, lists them all in the table, and names three', () => {
    const rows = Array.from({ length: 12 }, (_, i) => row(`a${i}`, i === 1 ? '' : `Agent ${i}`, 12 - i))
    const { data, table, summary } = rankChart(rows, 'agent', 'cost')
    expect(data.categories).toHaveLength(10)
    expect(table.categories).toHaveLength(12)
    expect(table.categories.slice(0, 3)).toEqual(['Agent 0', '(deleted)', 'Agent 2'])
    expect(summary).toBe('Spend by agent: Agent 0 $12.00, (deleted) $11.00, Agent 2 $10.00, and 9 more.')
  })
})
