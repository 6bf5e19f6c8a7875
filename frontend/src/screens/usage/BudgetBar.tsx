import { budgetSubject, exceeded, formatAmount, formatPercent, type BudgetStatus } from '../../lib/usage'
import '../../styles/usage.css'

const periodNames = { day: 'Daily', week: 'Weekly', month: 'Monthly' } as const

/** When a budget's period starts again, in the reader's own time. */
export const resetsText = (iso: string) => {
  const d = new Date(iso)
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' })
}

/**
 * A budget's period so far: what it counts (subject, period, unit), consumed
 * of its limit as a bar, and when it resets — or that it is used up, the
 * runs it covers refused until then.
 */
export function BudgetBar({ b, title }: { b: BudgetStatus; title?: string }) {
  const over = exceeded(b)
  const near = !over && b.percent >= 80
  const tone = over ? 'error' : near ? 'warn' : 'ok'
  const name = title ?? `${periodNames[b.period]} · ${budgetSubject(b)}`
  const text = `${formatAmount(b.consumed, b.unit)} of ${formatAmount(b.limit, b.unit)} (${formatPercent(b.percent)})`
  return (
    <div className={`budget budget-${tone}`} data-budget={b.id}>
      <div className="budget-head">
        <b className="budget-name">{name}</b>
        {over && <span className="pill pill-error">exceeded</span>}
        {near && <span className="pill pill-warn">nearly used</span>}
        <span className="grow" />
        <span className="budget-figure">{text}</span>
      </div>
      <div className="budget-track" role="progressbar" aria-label={name} aria-valuemin={0} aria-valuemax={100}
        aria-valuenow={Math.min(100, Math.round(b.percent))} aria-valuetext={over ? `${text}, exceeded` : text}>
        <span className="budget-fill" style={{ width: `${Math.min(100, Math.max(b.percent, b.consumed > 0 ? 1 : 0))}%` }} />
      </div>
      <div className="muted small">
        {over ? 'Used up: runs it covers are refused until it resets' : 'Resets'} {resetsText(b.resets_at)}.
      </div>
    </div>
  )
}
