import { useState } from 'react'
import { errorText } from '../../lib/api'
import { downloadFile } from '../../lib/download'
import { useMe } from '../../lib/queries'
import { navigate, sessionPath } from '../../lib/router'
import { formatTokens, formatUSD, presetRange, rowLabel, unpricedNote, type UsageReport, type UsageTotals } from '../../lib/usage'
import { usageExportURL, useUsageReport } from '../../lib/usageApi'
import { BudgetBar } from './BudgetBar'
import { ChartCard } from './ChartCard'
import { rankChart, timeChart, type Metric } from './charts'
import { RangePicker, rangeOf, type RangeChoice } from './RangePicker'
import '../../styles/usage.css'

/**
 * Usage and cost over a range of days: everyone's (admins: /usage) or the
 * caller's own with their budgets (/usage/me, for everyone). Totals, spend
 * over time, rankings by person (admins), agent and model, and the top
 * conversations; the calls themselves download as CSV.
 */
export function UsageScreen({ mine }: { mine: boolean }) {
  const me = useMe()
  const admin = me.data?.role === 'admin'
  const everyone = !mine && admin
  const [choice, setChoice] = useState<RangeChoice>(() => ({ preset: '30', custom: presetRange('30') }))
  const [metric, setMetric] = useState<Metric>('cost')
  const [download, setDownload] = useState<{ tone: 'ok' | 'error'; text: string } | null>(null)
  const range = rangeOf(choice)
  const ready = mine || everyone
  const days = useUsageReport(!everyone, range, 'day', undefined, ready)
  const people = useUsageReport(false, range, 'person', undefined, everyone)
  const agents = useUsageReport(!everyone, range, 'agent', undefined, ready)
  const models = useUsageReport(!everyone, range, 'model', undefined, ready)
  const convs = useUsageReport(!everyone, range, 'conversation', 10, ready)

  if (!mine && me.data && !admin) {
    return (
      <section className="usage" aria-label="Usage">
        <div className="settings-body usage-body"><p>Only admins see everyone's usage. <a href="/usage/me" onClick={(e) => { e.preventDefault(); navigate('/usage/me') }}>See your usage</a>.</p></div>
      </section>
    )
  }

  async function csv() {
    setDownload(null)
    try {
      const f = await downloadFile(usageExportURL(!everyone, range), `usage-${range.from}-${range.to}.csv`)
      setDownload({ tone: 'ok', text: `Downloaded ${f.name}.` })
    } catch (e) {
      setDownload({ tone: 'error', text: errorText(e) })
    }
  }

  const title = everyone ? 'Usage' : 'Your usage'
  const error = [days, people, agents, models, convs].find((q) => q.isError)?.error
  const t = days.data?.totals
  const time = timeChart(days.data?.rows ?? [], range, metric)
  return (
    <section className="usage" aria-labelledby="usage-title">
      <header className="settings-head usage-head">
        <h1 id="usage-title">{title}</h1>
        {admin && (
          <nav aria-label="Usage views" className="usage-views">
            <a href="/usage" aria-current={everyone ? 'page' : undefined} onClick={(e) => { e.preventDefault(); navigate('/usage') }}>Everyone</a>
            <a href="/usage/me" aria-current={!everyone ? 'page' : undefined} onClick={(e) => { e.preventDefault(); navigate('/usage/me') }}>Your usage</a>
            <a href="/settings/budgets" onClick={(e) => { e.preventDefault(); navigate('/settings/budgets') }}>Budgets and prices</a>
          </nav>
        )}
      </header>
      <div className="settings-body usage-body">
        <div className="usage-controls">
          <RangePicker value={choice} onChange={setChoice} />
          <div className="segmented" role="group" aria-label="Measure">
            {(['cost', 'tokens'] as const).map((m) => (
              <button key={m} type="button" className={`btn btn-sm${metric === m ? ' active' : ''}`} aria-pressed={metric === m} onClick={() => setMetric(m)}>
                {m === 'cost' ? 'Cost' : 'Tokens'}
              </button>
            ))}
          </div>
          <button type="button" className="btn btn-sm" onClick={() => void csv()}>Download CSV</button>
        </div>
        {download && <p className={download.tone === 'error' ? 'error-text' : 'muted small'} role={download.tone === 'error' ? 'alert' : 'status'}>{download.text}</p>}
        <p className="muted small">{range.from} to {range.to}, in UTC days.</p>
        {error !== undefined && <p className="error-text" role="alert">{errorText(error)}</p>}
        {days.isLoading && <p className="muted">Loading…</p>}
        {t && <Totals t={t} />}
        {mine && days.data && <Budgets report={days.data} />}
        {days.data && <ChartCard title={metric === 'cost' ? 'Spend over time' : 'Tokens over time'} categoryLabel="Day" {...time} />}
        <div className="usage-grid">
          {everyone && people.data && <Ranking title="By person" report={people.data} metric={metric} category="Person" />}
          {agents.data && <Ranking title="By agent" report={agents.data} metric={metric} category="Agent" />}
          {models.data && <Ranking title="By model" report={models.data} metric={metric} category="Model" />}
        </div>
        {convs.data && <TopConversations report={convs.data} linked={!everyone} />}
      </div>
    </section>
  )
}

/** The range's totals as cards: cost, tokens in and out, calls, and the calls no price covered. */
function Totals({ t }: { t: UsageTotals }) {
  const note = unpricedNote(t)
  return (
    <>
      <div role="group" aria-label="Totals">
        <dl className="usage-totals">
          <div className="card"><dt>Cost</dt><dd>{formatUSD(t.cost_usd)}</dd></div>
          <div className="card"><dt>Tokens in</dt><dd>{formatTokens(t.input_tokens)}</dd>
            {t.cached_input_tokens > 0 && <dd className="muted small">{formatTokens(t.cached_input_tokens)} cached</dd>}</div>
          <div className="card"><dt>Tokens out</dt><dd>{formatTokens(t.output_tokens)}</dd>
            {t.reasoning_tokens > 0 && <dd className="muted small">{formatTokens(t.reasoning_tokens)} reasoning</dd>}</div>
          <div className="card"><dt>Calls</dt><dd>{t.calls.toLocaleString()}</dd></div>
        </dl>
      </div>
      {note && <p className="callout callout-warn usage-unpriced">{note} Add a price in <a href="/settings/budgets" onClick={(e) => { e.preventDefault(); navigate('/settings/budgets') }}>Budgets and prices</a>.</p>}
    </>
  )
}

function Ranking({ title, report, metric, category }: { title: string; report: UsageReport; metric: Metric; category: string }) {
  const chart = rankChart(report.rows, report.group_by, metric)
  return <ChartCard title={title} categoryLabel={category} {...chart} />
}

/** The budgets that apply to the caller, this period so far. */
function Budgets({ report }: { report: UsageReport }) {
  const list = report.budgets ?? []
  return (
    <section className="card usage-budgets" aria-labelledby="your-budgets">
      <h2 id="your-budgets">Your budgets</h2>
      {list.length ? list.map((b) => <BudgetBar key={b.id} b={b} />) : <p className="muted">No budget applies to you.</p>}
    </section>
  )
}

/** The conversations that cost the most in the range (the caller's own ones open). */
function TopConversations({ report, linked }: { report: UsageReport; linked: boolean }) {
  return (
    <section className="card" aria-labelledby="top-conversations">
      <h2 id="top-conversations">Top conversations</h2>
      {report.rows.length === 0 ? <p className="muted">No conversation used a model in this range.</p> : (
        <div className="table-scroll">
          <table className="table table-stack usage-table" aria-labelledby="top-conversations">
            <thead><tr><th scope="col">Conversation</th><th scope="col" className="num">Calls</th><th scope="col" className="num">Tokens in</th><th scope="col" className="num">Tokens out</th><th scope="col" className="num">Cost</th></tr></thead>
            <tbody>
              {report.rows.map((r) => (
                <tr key={r.key}>
                  <td data-label="Conversation">
                    {linked && r.label ? <a href={sessionPath(r.key)} onClick={(e) => { e.preventDefault(); navigate(sessionPath(r.key)) }}>{rowLabel(r, 'conversation')}</a> : rowLabel(r, 'conversation')}
                  </td>
                  <td data-label="Calls" className="num">{r.calls.toLocaleString()}</td>
                  <td data-label="Tokens in" className="num">{formatTokens(r.input_tokens)}</td>
                  <td data-label="Tokens out" className="num">{formatTokens(r.output_tokens)}</td>
                  <td data-label="Cost" className="num">{formatUSD(r.cost_usd)}{r.unpriced_calls > 0 && <span className="muted small"> ({r.unpriced_calls} unpriced)</span>}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  )
}
