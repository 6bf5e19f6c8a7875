import { describe, expect, it } from 'vitest'
import {
  addDays, budgetSubject, daysBetween, exceeded, fillDays, formatAmount, formatPercent, formatTokens, formatUSD, noUsage, presetRange,
  rowLabel, unpricedNote, usageQuery, validRange,
} from './usage'

describe('money', () => {
  it('shows cents from a dollar up, with separators', () => {
    expect(formatUSD(12.5)).toBe('$12.50')
    expect(formatUSD(1)).toBe('$1.00')
    expect(formatUSD(1234)).toBe('$1,234.00')
    expect(formatUSD(12.345)).toBe('$12.35')
  })
  it('keeps two significant digits below a dollar, so one call is not $0.00', () => {
    expect(formatUSD(0.0042)).toBe('$0.0042')
    expect(formatUSD(0.42)).toBe('$0.42')
    expect(formatUSD(0.5)).toBe('$0.50')
    expect(formatUSD(0.123)).toBe('$0.12')
    expect(formatUSD(0.015)).toBe('$0.015')
    expect(formatUSD(0.000034)).toBe('$0.000034') // a micro-dollar is the server's unit
  })
  it('says zero and tiny amounts plainly', () => {
    expect(formatUSD(0)).toBe('$0.00')
    expect(formatUSD(0.0000001)).toBe('<$0.000001')
    expect(formatUSD(Number.NaN)).toBe('—')
  })
})

describe('tokens', () => {
  it('shortens with k, M and B', () => {
    expect(formatTokens(950)).toBe('950')
    expect(formatTokens(1000)).toBe('1k')
    expect(formatTokens(12_345)).toBe('12.3k')
    expect(formatTokens(1_234_567)).toBe('1.2M')
    expect(formatTokens(1_000_000)).toBe('1M')
    expect(formatTokens(250_400_000)).toBe('250M')
    expect(formatTokens(3_000_000_000)).toBe('3B')
    expect(formatTokens(0)).toBe('0')
  })
  it('reads a budget figure in its unit', () => {
    expect(formatAmount(2.5, 'usd')).toBe('$2.50')
    expect(formatAmount(1_500_000, 'tokens')).toBe('1.5M tokens')
  })
})

describe('percent', () => {
  it('rounds to whole percents, with a decimal under 10', () => {
    expect(formatPercent(80)).toBe('80%')
    expect(formatPercent(79.6)).toBe('80%')
    expect(formatPercent(4.25)).toBe('4.3%')
    expect(formatPercent(5)).toBe('5%')
    expect(formatPercent(130)).toBe('130%')
  })
  it('never shows a little use as 0%', () => {
    expect(formatPercent(0.01)).toBe('<0.1%')
    expect(formatPercent(0)).toBe('0%')
  })
  it('knows an exceeded budget', () => {
    expect(exceeded({ consumed: 10, limit: 10 })).toBe(true)
    expect(exceeded({ consumed: 9.99, limit: 10 })).toBe(false)
  })
})

describe('date ranges', () => {
  const now = new Date('2026-03-05T23:30:00Z')
  it('counts today as one of the last n days, in UTC', () => {
    expect(presetRange('7', now)).toEqual({ from: '2026-02-27', to: '2026-03-05' })
    expect(presetRange('30', now)).toEqual({ from: '2026-02-04', to: '2026-03-05' })
    expect(presetRange('90', now)).toEqual({ from: '2025-12-06', to: '2026-03-05' })
  })
  it('starts this month on its first', () => {
    expect(presetRange('month', now)).toEqual({ from: '2026-03-01', to: '2026-03-05' })
  })
  it('steps days across months and years', () => {
    expect(addDays('2026-01-01', -1)).toBe('2025-12-31')
    expect(addDays('2024-02-28', 1)).toBe('2024-02-29')
    expect(daysBetween('2026-02-27', '2026-03-02')).toEqual(['2026-02-27', '2026-02-28', '2026-03-01', '2026-03-02'])
    expect(daysBetween('2026-03-02', '2026-03-01')).toEqual([])
  })
  it('spreads the days with usage over the range, the rest as zeros', () => {
    const rows = fillDays([{ ...noUsage, key: '2026-03-02', label: '2026-03-02', cost_usd: 1.5, calls: 2 }], { from: '2026-03-01', to: '2026-03-03' })
    expect(rows.map((r) => [r.key, r.cost_usd])).toEqual([['2026-03-01', 0], ['2026-03-02', 1.5], ['2026-03-03', 0]])
  })
  it('accepts a custom range only in order', () => {
    expect(validRange({ from: '2026-03-01', to: '2026-03-01' })).toBe(true)
    expect(validRange({ from: '2026-03-02', to: '2026-03-01' })).toBe(false)
    expect(validRange({ from: '', to: '2026-03-01' })).toBe(false)
  })
  it('asks the report for the range and grouping', () => {
    expect(usageQuery({ from: '2026-03-01', to: '2026-03-05' }, 'conversation', 10)).toEqual({ from: '2026-03-01', to: '2026-03-05', group_by: 'conversation', limit: 10 })
    expect(usageQuery({ from: '2026-03-01', to: '2026-03-05' }, 'day')).toEqual({ from: '2026-03-01', to: '2026-03-05', group_by: 'day' })
  })
})

describe('labels', () => {
  it('names a deleted subject', () => {
    expect(rowLabel({ key: 'u1', label: '' }, 'person')).toBe('(deleted)')
    expect(rowLabel({ key: '2026-03-01', label: '' }, 'day')).toBe('2026-03-01')
    expect(budgetSubject({ scope: 'default', subject_name: 'each member' })).toBe('Each member')
    expect(budgetSubject({ scope: 'agent', subject_name: 'Helper' })).toBe('Agent · Helper')
  })
  it('notes calls without a price', () => {
    expect(unpricedNote({ unpriced_calls: 0 })).toBe('')
    expect(unpricedNote({ unpriced_calls: 1 })).toMatch(/^No price for 1 call:/)
    expect(unpricedNote({ unpriced_calls: 3 })).toMatch(/^No price for 3 calls:/)
  })
})
