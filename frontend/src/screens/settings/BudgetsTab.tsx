import { useQuery, useQueryClient } from '@tanstack/react-query'
import { useState, type FormEvent } from 'react'
import { Field } from '../../components/Field'
import { api, ApiError, errorText, ok } from '../../lib/api'
import { useAgents, useProviders } from '../../lib/queries'
import { navigate } from '../../lib/router'
import { formatAmount, type BudgetCreate, type BudgetPeriod, type BudgetScope, type BudgetStatus, type BudgetUnit } from '../../lib/usage'
import { createBudget, deleteBudget, updateBudget, useBudgets, usageKeys } from '../../lib/usageApi'
import { BudgetBar } from '../usage/BudgetBar'
import { PricesSection } from './PricesSection'
import '../../styles/usage.css'

const scopes: [BudgetScope, string][] = [['default', 'Each member'], ['person', 'One person'], ['agent', 'One agent'], ['provider', 'One provider']]
const periods: [BudgetPeriod, string][] = [['day', 'Day'], ['week', 'Week (from Monday)'], ['month', 'Month']]
const units: [BudgetUnit, string][] = [['usd', 'US dollars'], ['tokens', 'Tokens (in + out)']]

/** Admins: budgets with this period's consumption, who they bind, and the price table their dollars come from. */
export function BudgetsTab() {
  const budgets = useBudgets()
  return (
    <div className="tab-page">
      <p className="muted">
        A budget caps model use over a day, week or month (UTC). A run that would go past one ends with a message naming it and when it
        resets; at 80% the run warns. Each person sees the budgets that apply to them in{' '}
        <a href="/usage/me" onClick={(e) => { e.preventDefault(); navigate('/usage/me') }}>Your usage</a>.
      </p>
      <AdminsToggle />
      <section className="card budgets-list" aria-labelledby="budgets-h">
        <h2 id="budgets-h">Budgets</h2>
        {budgets.isLoading && <p className="muted">Loading…</p>}
        {budgets.isError && <p className="error-text" role="alert">{errorText(budgets.error)}</p>}
        {budgets.data && !budgets.data.budgets.length && <p className="muted">No budgets yet: usage is unlimited.</p>}
        {budgets.data?.budgets.length ? (
          <ul className="rows">{budgets.data.budgets.map((b) => <BudgetRow key={b.id} b={b} />)}</ul>
        ) : null}
      </section>
      <BudgetForm />
      <PricesSection />
    </div>
  )
}

/** budgets_apply_to_admins: whether admins' own runs answer to budgets too (off by default). */
function AdminsToggle() {
  const qc = useQueryClient()
  const settings = useQuery({ queryKey: ['settings'], queryFn: () => ok(api.GET('/api/v1/settings')) })
  const [error, setError] = useState('')
  const [busy, setBusy] = useState(false)
  const on = settings.data?.find((s) => s.key === 'budgets_apply_to_admins')?.value === 'true'

  async function set(v: boolean) {
    setError('')
    setBusy(true)
    try {
      await ok(api.PUT('/api/v1/settings/{key}', { params: { path: { key: 'budgets_apply_to_admins' } }, body: { value: String(v) } }))
      await qc.invalidateQueries({ queryKey: ['settings'] })
    } catch (e) {
      setError(errorText(e))
    } finally {
      setBusy(false)
    }
  }

  return (
    <div className="card">
      <label className="toggle-line">
        <input type="checkbox" checked={on} disabled={busy || !settings.data} onChange={(e) => void set(e.target.checked)} />
        <span><b>Budgets apply to admins</b> <span className="muted small">— off: admins' own runs are never refused for a budget (their usage still counts).</span></span>
      </label>
      {error && <p className="error-text small" role="alert">{error}</p>}
    </div>
  )
}

function BudgetRow({ b }: { b: BudgetStatus }) {
  const qc = useQueryClient()
  const [limit, setLimit] = useState(String(b.limit))
  const [confirming, setConfirming] = useState(false)
  const [error, setError] = useState('')
  const dirty = limit !== String(b.limit)

  async function act(f: () => Promise<unknown>) {
    setError('')
    try {
      await f()
      await Promise.all([qc.invalidateQueries({ queryKey: usageKeys.budgets }), qc.invalidateQueries({ queryKey: usageKeys.all })])
    } catch (e) {
      setError(errorText(e))
    }
  }

  return (
    <li className="row budget-row" aria-label={`Budget ${b.id}`}>
      <BudgetBar b={b} />
      <form className="row-line" onSubmit={(e) => { e.preventDefault(); void act(() => updateBudget(b.id, Number(limit))) }}>
        <label className="muted small" htmlFor={`limit-${b.id}`}>Limit ({b.unit === 'usd' ? '$' : 'tokens'})</label>
        <input id={`limit-${b.id}`} type="number" min={0} step={b.unit === 'usd' ? 0.01 : 1} value={limit} onChange={(e) => setLimit(e.target.value)} />
        <button className="btn btn-sm" disabled={!dirty || limit === ''}>Save limit</button>
        {confirming ? (
          <button type="button" className="btn btn-danger btn-sm" autoFocus onBlur={() => setConfirming(false)} onClick={() => void act(() => deleteBudget(b.id))}>Delete?</button>
        ) : (
          <button type="button" className="btn btn-danger btn-sm" onClick={() => setConfirming(true)}>Delete</button>
        )}
      </form>
      {b.scope === 'default' && <p className="muted small budget-note">Shown: the member who used the most of it this period.</p>}
      {error && <p className="error-text small" role="alert">{error}</p>}
    </li>
  )
}

const blank = { scope: 'default' as BudgetScope, subject_id: '', period: 'month' as BudgetPeriod, unit: 'usd' as BudgetUnit, limit: '' }

/** A new budget: whose calls it counts (a subject picked from the people, agents or providers), over what period, in what unit. */
function BudgetForm() {
  const qc = useQueryClient()
  const users = useQuery({ queryKey: ['users'], queryFn: () => ok(api.GET('/api/v1/auth/users')) })
  const agents = useAgents()
  const providers = useProviders()
  const [f, setF] = useState(blank)
  const [errors, setErrors] = useState<Record<string, string>>({})
  const [error, setError] = useState('')
  const [saved, setSaved] = useState('')
  const subjects = f.scope === 'person' ? (users.data ?? []).map((u) => ({ id: u.id, name: u.username }))
    : f.scope === 'agent' ? (agents.data ?? []).map((a) => ({ id: a.id, name: a.name }))
      : f.scope === 'provider' ? (providers.data ?? []).map((p) => ({ id: p.id, name: p.name })) : []

  async function submit(e: FormEvent) {
    e.preventDefault()
    setErrors({})
    setError('')
    setSaved('')
    const body: BudgetCreate = { scope: f.scope, period: f.period, unit: f.unit, limit: Number(f.limit), ...(f.scope === 'default' ? {} : { subject_id: f.subject_id }) }
    try {
      const b = await createBudget(body)
      setF(blank)
      setSaved(`Added: ${formatAmount(b.limit, b.unit)} a ${b.period} for ${b.subject_name || 'each member'}.`)
      await qc.invalidateQueries({ queryKey: usageKeys.budgets })
    } catch (err) {
      setErrors(err instanceof ApiError ? err.fields : {})
      setError(errorText(err))
    }
  }

  return (
    <form className="card form" aria-labelledby="new-budget-h" onSubmit={(e) => void submit(e)}>
      <h2 id="new-budget-h">New budget</h2>
      <div className="grid2">
        <Field label="Applies to" error={errors.scope}>{(id, aria) => (
          <select id={id} {...aria} value={f.scope} onChange={(e) => setF({ ...f, scope: e.target.value as BudgetScope, subject_id: '' })}>
            {scopes.map(([v, l]) => <option key={v} value={v}>{l}</option>)}
          </select>
        )}</Field>
        {f.scope !== 'default' ? (
          <Field label={f.scope === 'person' ? 'Person' : f.scope === 'agent' ? 'Agent' : 'Provider'} error={errors.subject_id}>{(id, aria) => (
            <select id={id} {...aria} value={f.subject_id} required onChange={(e) => setF({ ...f, subject_id: e.target.value })}>
              <option value="">Choose…</option>
              {subjects.map((s) => <option key={s.id} value={s.id}>{s.name}</option>)}
            </select>
          )}</Field>
        ) : <p className="muted small field-end">Each member's own calls, unless a budget for that person covers the same period.</p>}
        <Field label="Period" error={errors.period}>{(id, aria) => (
          <select id={id} {...aria} value={f.period} onChange={(e) => setF({ ...f, period: e.target.value as BudgetPeriod })}>
            {periods.map(([v, l]) => <option key={v} value={v}>{l}</option>)}
          </select>
        )}</Field>
        <Field label="Unit" error={errors.unit}>{(id, aria) => (
          <select id={id} {...aria} value={f.unit} onChange={(e) => setF({ ...f, unit: e.target.value as BudgetUnit })}>
            {units.map(([v, l]) => <option key={v} value={v}>{l}</option>)}
          </select>
        )}</Field>
        <Field label={f.unit === 'usd' ? 'Limit (US dollars)' : 'Limit (tokens)'} error={errors.limit}>{(id, aria) => (
          <input id={id} {...aria} type="number" min={0} step={f.unit === 'usd' ? 0.01 : 1} required value={f.limit} onChange={(e) => setF({ ...f, limit: e.target.value })} />
        )}</Field>
      </div>
      <div className="form-actions"><button className="btn btn-primary">Add budget</button></div>
      {error && <p className="error-text" role="alert">{error}</p>}
      {saved && <p className="muted small" role="status">{saved}</p>}
    </form>
  )
}
