// A report's rows as chart data and as words: the same figures drive the
// drawing, its accessible summary and its table fallback.
import { fillDays, formatTokens, formatUSD, rowLabel, type DateRange, type GroupBy, type UsageRow } from '../../lib/usage'
import type { ChartData } from './UsageChart'

/** What the charts measure: dollars, or tokens in and out. */
export type Metric = 'cost' | 'tokens'

const formatOf = (m: Metric) => (m === 'cost' ? formatUSD : formatTokens)

function seriesOf(rows: UsageRow[], m: Metric): ChartData['series'] {
  return m === 'cost'
    ? [{ name: 'Cost', values: rows.map((r) => r.cost_usd) }]
    : [{ name: 'Input tokens', values: rows.map((r) => r.input_tokens) }, { name: 'Output tokens', values: rows.map((r) => r.output_tokens) }]
}

const valueOf = (r: UsageRow, m: Metric) => (m === 'cost' ? r.cost_usd : r.input_tokens + r.output_tokens)

/** Spend (or tokens) per day over the whole range: a line of dollars, or stacked bars of tokens in and out. */
export function timeChart(rows: UsageRow[], range: DateRange, m: Metric): { data: ChartData; summary: string } {
  const days = fillDays(rows, range)
  const data: ChartData = { kind: m === 'cost' ? 'line' : 'bar', categories: days.map((d) => d.key), series: seriesOf(days, m), format: formatOf(m) }
  const total = days.reduce((n, d) => n + valueOf(d, m), 0)
  const peak = days.reduce<UsageRow | undefined>((best, d) => (!best || valueOf(d, m) > valueOf(best, m) ? d : best), undefined)
  const what = m === 'cost' ? 'Spend' : 'Tokens'
  const summary = `${what} per day from ${range.from} to ${range.to}: ${formatOf(m)(total)} in total` +
    (peak && valueOf(peak, m) > 0 ? `, the most on ${peak.key} (${formatOf(m)(valueOf(peak, m))}).` : '.')
  return { data, summary }
}

/**
 * A ranking of the report's groups, largest first: the chart draws the
 * first max of them, the table under it lists every one (summary names
 * the first three and counts the rest).
 */
export function rankChart(rows: UsageRow[], by: GroupBy, m: Metric, max = 10): { data: ChartData; table: ChartData; summary: string } {
  const sorted = [...rows].sort((a, b) => valueOf(b, m) - valueOf(a, m))
  const table: ChartData = { kind: 'bar', horizontal: true, categories: sorted.map((r) => rowLabel(r, by)), series: seriesOf(sorted, m), format: formatOf(m) }
  const data: ChartData = { ...table, categories: table.categories.slice(0, max), series: table.series.map((s) => ({ ...s, values: s.values.slice(0, max) })) }
  const named = sorted.slice(0, 3).map((r) => `${rowLabel(r, by)} ${formatOf(m)(valueOf(r, m))}`).join(', ')
  const more = rows.length - Math.min(rows.length, 3)
  const what = m === 'cost' ? 'Spend' : 'Tokens'
  const summary = rows.length ? `${what} by ${by}: ${named}${more > 0 ? `, and ${more} more` : ''}.` : `${what} by ${by}: none.`
  return { data, table, summary }
}
