// Usage, cost and budgets (issue 43): the shapes the usage routes answer,
// how their figures read (money, tokens, percent) and the date ranges the
// screens ask about. All money is US dollars; all dates are UTC days, as the
// server counts them.

import type { Schemas } from './api'

/** What a set of model calls used and cost. unpriced_calls ran on a model with no price: their tokens count, their cost does not. */
export type UsageTotals = Schemas['UsageTotalsView']
/** One group of a report: its key (a day, an id, provider_type/model) and its label ("" once the thing was deleted). */
export type UsageRow = Schemas['UsageRowView']
/** GET /usage, or GET /usage/me with the caller's budgets. */
export type UsageReport = Schemas['UsageReportView'] & { budgets?: BudgetStatus[] }
/** What a breakdown groups by; person only in the admins' report. */
export type GroupBy = Schemas['UsageReportView']['group_by']
/** A budget and how much of it the current period has used (limit and consumed in dollars for usd, tokens for tokens; percent 0–100, past 100 once exceeded). */
export type BudgetStatus = Schemas['BudgetView']
export type BudgetScope = BudgetStatus['scope']
export type BudgetPeriod = BudgetStatus['period']
export type BudgetUnit = BudgetStatus['unit']
/** POST /budgets. */
export type BudgetCreate = Schemas['BudgetRequest']
/** A model's price in dollars per million tokens, with where the figure came from. */
export type Price = Schemas['PriceView']
/** PUT /prices: an upsert by provider type and model. */
export type PriceInput = Schemas['PriceRequest']

export const noUsage: UsageTotals = { calls: 0, input_tokens: 0, cached_input_tokens: 0, output_tokens: 0, reasoning_tokens: 0, cost_usd: 0, unpriced_calls: 0 }

// ---- how figures read ----

const usd2 = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', minimumFractionDigits: 2, maximumFractionDigits: 2 })

/**
 * Dollars as people read them: cents from a dollar up ("$12.50",
 * "$1,234.00"), and below a dollar two significant digits so that the cost
 * of one call is not "$0.00" ("$0.0042", "$0.42"). Below a millionth of a
 * dollar it says so rather than show a row of zeros.
 */
export function formatUSD(n: number): string {
  if (!Number.isFinite(n)) return '—'
  const a = Math.abs(n)
  if (a === 0) return '$0.00'
  if (a >= 1) return usd2.format(n)
  if (a < 0.000001) return n < 0 ? '-<$0.000001' : '<$0.000001'
  const digits = Math.min(6, Math.max(2, 1 - Math.floor(Math.log10(a))))
  const text = `$${a.toFixed(digits)}`
  return n < 0 ? `-${text}` : text
}

/** A token count, short: "950", "12.3k", "1.2M", "3B" (a trailing ".0" dropped). */
export function formatTokens(n: number): string {
  if (!Number.isFinite(n)) return '—'
  const a = Math.abs(n)
  const [div, unit] = a >= 1e9 ? [1e9, 'B'] : a >= 1e6 ? [1e6, 'M'] : a >= 1e3 ? [1e3, 'k'] : [1, '']
  if (div === 1) return String(Math.round(n))
  const v = n / div
  const text = (Math.abs(v) >= 100 ? v.toFixed(0) : v.toFixed(1)).replace(/\.0$/, '')
  return `${text}${unit}`
}

/** A percent of a budget (0–100, past 100 once exceeded): whole numbers, one decimal under 10, never "0%" for a little use. */
export function formatPercent(p: number): string {
  if (!Number.isFinite(p) || p <= 0) return '0%'
  if (p < 0.1) return '<0.1%'
  if (p < 10) return `${p.toFixed(1).replace(/\.0$/, '')}%`
  return `${Math.round(p)}%`
}

/** A budget's figure in its unit: dollars or tokens. */
export const formatAmount = (n: number, unit: BudgetUnit) => (unit === 'usd' ? formatUSD(n) : `${formatTokens(n)} tokens`)

/** Whether a budget's period is used up. */
export const exceeded = (b: Pick<BudgetStatus, 'consumed' | 'limit'>) => b.limit > 0 && b.consumed >= b.limit

/** What a report row is called; a deleted person, agent or conversation reads "(deleted)". */
export const rowLabel = (r: Pick<UsageRow, 'label' | 'key'>, by: GroupBy) => (by === 'day' ? r.label || r.key : r.label || '(deleted)')

/** The note under totals when some calls had no price, or "" when every call had one. */
export function unpricedNote(t: Pick<UsageTotals, 'unpriced_calls'>): string {
  const n = t.unpriced_calls
  return n > 0 ? `No price for ${n.toLocaleString('en-US')} ${n === 1 ? 'call' : 'calls'}: their tokens count, their cost does not.` : ''
}

/** How a budget's scope and subject read: "Person · alice", "Each member". */
export function budgetSubject(b: Pick<BudgetStatus, 'scope' | 'subject_name'>): string {
  if (b.scope === 'default') return 'Each member'
  const kind = { person: 'Person', agent: 'Agent', provider: 'Provider' }[b.scope]
  return `${kind} · ${b.subject_name || '(deleted)'}`
}

// ---- date ranges (UTC days, as the server counts them) ----

/** The ranges the picker offers. */
export type RangePreset = '7' | '30' | '90' | 'month' | 'custom'
export interface DateRange { from: string; to: string }

/** A Date's UTC day as YYYY-MM-DD. */
export const isoDay = (d: Date) => d.toISOString().slice(0, 10)

/** day plus n days (n may be negative). */
export function addDays(day: string, n: number): string {
  const d = new Date(`${day}T00:00:00Z`)
  d.setUTCDate(d.getUTCDate() + n)
  return isoDay(d)
}

/**
 * The days a preset covers, ending today (UTC): the last n days count
 * today as one of them, as the server's default of 30 does (from = 29 days
 * before); this month starts on its first.
 */
export function presetRange(preset: Exclude<RangePreset, 'custom'>, now: Date = new Date()): DateRange {
  const to = isoDay(now)
  if (preset === 'month') return { from: `${to.slice(0, 8)}01`, to }
  return { from: addDays(to, -(Number(preset) - 1)), to }
}

/** Every day from..to inclusive (empty when from is after to; capped at 400 days). */
export function daysBetween(from: string, to: string): string[] {
  const out: string[] = []
  for (let d = from; d <= to && out.length < 400; d = addDays(d, 1)) out.push(d)
  return out
}

/** The day rows of a report spread over every day of the range, the days without usage as zeros, so a chart's axis is time. */
export function fillDays(rows: UsageRow[], range: DateRange): UsageRow[] {
  const byDay = new Map(rows.map((r) => [r.key, r]))
  return daysBetween(range.from, range.to).map((day) => byDay.get(day) ?? { ...noUsage, key: day, label: day })
}

/** Whether a custom range can be asked: two days, in order. */
export const validRange = (r: DateRange) => /^\d{4}-\d{2}-\d{2}$/.test(r.from) && /^\d{4}-\d{2}-\d{2}$/.test(r.to) && r.from <= r.to

/** The query of a report. */
export const usageQuery = (range: DateRange, groupBy: GroupBy, limit?: number) => ({ from: range.from, to: range.to, group_by: groupBy, ...(limit ? { limit } : {}) })
