import { lazy, Suspense, useMemo } from 'react'
import type { ChartData } from './UsageChart'

// echarts comes with the first chart drawn, not with the app.
const UsageChart = lazy(() => import('./UsageChart'))

interface Props {
  title: string
  data: ChartData
  /** The figures the table lists, when more than the chart draws (a ranking's every group). */
  table?: ChartData
  /** The chart in words: what assistive technology reads for the drawing. */
  summary: string
  /** The column heading of the categories in the table fallback. */
  categoryLabel: string
  empty?: string
}

/**
 * A chart with its words: a heading, the drawing (an image named by a
 * summary of its data) and the same figures as a table under "Show as
 * table", for those who cannot see the drawing or want the exact values.
 */
export function ChartCard({ title, data, table: rows = data, summary, categoryLabel, empty = 'No usage in this range.' }: Props) {
  const id = useMemo(() => `chart-${title.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`, [title])
  const none = data.categories.length === 0 || data.series.every((s) => s.values.every((v) => v === 0))
  return (
    <section className="card usage-chart" aria-labelledby={id} data-chart={title}>
      <h2 id={id}>{title}</h2>
      {none ? (
        <p className="muted">{empty}</p>
      ) : (
        <>
          <div className="usage-chart-box" role="img" aria-label={summary}>
            <Suspense fallback={<div className="usage-chart-canvas muted">Drawing…</div>}>
              <UsageChart data={data} />
            </Suspense>
          </div>
          <details className="usage-chart-table">
            <summary>Show as table</summary>
            <div className="table-scroll">
              <table className="table table-stack" aria-label={title}>
                <thead>
                  <tr><th scope="col">{categoryLabel}</th>{rows.series.map((s) => <th key={s.name} scope="col" className="num">{s.name}</th>)}</tr>
                </thead>
                <tbody>
                  {rows.categories.map((c, i) => (
                    <tr key={`${c}:${i}`}>
                      <td data-label={categoryLabel}>{c}</td>
                      {rows.series.map((s) => <td key={s.name} data-label={s.name} className="num">{rows.format(s.values[i] ?? 0)}</td>)}
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </details>
        </>
      )}
    </section>
  )
}
