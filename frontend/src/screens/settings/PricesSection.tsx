import { useQueryClient } from '@tanstack/react-query'
import { useState, type FormEvent } from 'react'
import { Field } from '../../components/Field'
import { ApiError, errorText } from '../../lib/api'
import { useProviderTypes } from '../../lib/queries'
import { formatUSD, isoDay, type Price } from '../../lib/usage'
import { deletePrice, savePrice, usageKeys, usePrices } from '../../lib/usageApi'

/** The form's fields as typed (numbers as text until saved). */
interface Draft { provider_type: string; model: string; input_per_mtok: string; cached_input_per_mtok: string; output_per_mtok: string; source: string; as_of: string }

const blank = (): Draft => ({ provider_type: '', model: '', input_per_mtok: '', cached_input_per_mtok: '', output_per_mtok: '', source: '', as_of: isoDay(new Date()) })
const draftOf = (p: Price): Draft => ({ provider_type: p.provider_type, model: p.model, source: p.source, as_of: p.as_of,
  input_per_mtok: String(p.input_per_mtok), cached_input_per_mtok: String(p.cached_input_per_mtok), output_per_mtok: String(p.output_per_mtok) })
/** A source's host when it is a web address (shown as a link to it), else undefined. */
function hostOf(s: string): string | undefined {
  if (!/^https?:\/\//i.test(s)) return undefined
  try {
    return new URL(s).host
  } catch {
    return undefined
  }
}

/**
 * The price table: dollars per million tokens for each provider type and
 * model, with where each figure came from and when. A call is priced when
 * it is recorded, so a change here applies to calls from now on.
 */
export function PricesSection() {
  const qc = useQueryClient()
  const prices = usePrices()
  const [editing, setEditing] = useState<Draft | null>(null)
  const [error, setError] = useState('')
  const [confirm, setConfirm] = useState('')
  const list = [...(prices.data?.prices ?? [])].sort((a, b) => a.provider_type.localeCompare(b.provider_type) || a.model.localeCompare(b.model))

  async function remove(id: string) {
    setError('')
    try {
      await deletePrice(id)
      await qc.invalidateQueries({ queryKey: usageKeys.prices })
    } catch (e) {
      setError(errorText(e))
    }
  }

  return (
    <section className="card form" aria-labelledby="prices-h">
      <div className="tab-intro">
        <h2 id="prices-h">Prices</h2>
        {!editing && <button className="btn btn-sm" onClick={() => setEditing(blank())}>Add a price</button>}
      </div>
      <p className="muted small">US dollars per million tokens. A call is priced when it is made: a change applies from then on. Calls on a model with no price count their tokens, not their cost.</p>
      {editing && <PriceForm key={editing.provider_type + editing.model} draft={editing} onDone={() => setEditing(null)} />}
      {prices.isError && <p className="error-text" role="alert">{errorText(prices.error)}</p>}
      {prices.data && !list.length && <p className="muted">No prices yet.</p>}
      {list.length > 0 && (
        <div className="table-scroll">
          <table className="table table-stack prices-table" aria-labelledby="prices-h">
            <thead>
              <tr><th scope="col">Provider type</th><th scope="col">Model</th><th scope="col" className="num">Input</th><th scope="col" className="num">Cached input</th><th scope="col" className="num">Output</th><th scope="col">Source</th><th scope="col"><span className="visually-hidden">Actions</span></th></tr>
            </thead>
            <tbody>
              {list.map((p) => (
                <tr key={p.id} data-price={`${p.provider_type}/${p.model}`}>
                  <td data-label="Provider type">{p.provider_type}</td>
                  <td data-label="Model"><code>{p.model}</code></td>
                  <td data-label="Input" className="num">{formatUSD(p.input_per_mtok)}</td>
                  <td data-label="Cached input" className="num">{p.cached_input_per_mtok ? formatUSD(p.cached_input_per_mtok) : '—'}</td>
                  <td data-label="Output" className="num">{formatUSD(p.output_per_mtok)}</td>
                  <td data-label="Source">
                    {p.source ? (hostOf(p.source) ? <a href={p.source} target="_blank" rel="noopener noreferrer">{hostOf(p.source)}</a> : p.source) : '—'}
                    {p.as_of && <div className="muted small">as of {p.as_of}</div>}
                  </td>
                  <td className="actions">
                    <button className="btn btn-ghost btn-sm" aria-label={`Edit the price of ${p.model}`} onClick={() => setEditing(draftOf(p))}>Edit</button>
                    {confirm === p.id ? (
                      <button className="btn btn-danger btn-sm" autoFocus onBlur={() => setConfirm('')} onClick={() => void remove(p.id)}>Delete?</button>
                    ) : (
                      <button className="btn btn-danger btn-sm" aria-label={`Delete the price of ${p.model}`} onClick={() => setConfirm(p.id)}>Delete</button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {error && <p className="error-text" role="alert">{error}</p>}
    </section>
  )
}

/** Adds a price or changes one (the same provider type and model replace the stored figure). */
function PriceForm({ draft, onDone }: { draft: Draft; onDone: () => void }) {
  const qc = useQueryClient()
  const types = useProviderTypes()
  const [f, setF] = useState(draft)
  const [errors, setErrors] = useState<Record<string, string>>({})
  const [error, setError] = useState('')
  const set = (k: keyof Draft) => (e: { target: { value: string } }) => setF({ ...f, [k]: e.target.value })

  async function submit(e: FormEvent) {
    e.preventDefault()
    setErrors({})
    setError('')
    try {
      await savePrice({ ...f, input_per_mtok: Number(f.input_per_mtok), cached_input_per_mtok: Number(f.cached_input_per_mtok || 0), output_per_mtok: Number(f.output_per_mtok) })
      await qc.invalidateQueries({ queryKey: usageKeys.prices })
      onDone()
    } catch (err) {
      setErrors(err instanceof ApiError ? err.fields : {})
      setError(errorText(err))
    }
  }

  const money = (label: string, k: 'input_per_mtok' | 'cached_input_per_mtok' | 'output_per_mtok', hint?: string, required = true) => (
    <Field label={label} hint={hint} error={errors[k]}>{(id, aria) => (
      <input id={id} {...aria} type="number" min={0} step="any" required={required} value={f[k]} onChange={set(k)} />
    )}</Field>
  )
  return (
    <form className="form price-form" aria-label={draft.model ? `Price of ${draft.model}` : 'New price'} onSubmit={(e) => void submit(e)}>
      <div className="grid2">
        <Field label="Provider type" error={errors.provider_type}>{(id, aria) => (
          <>
            <input id={id} {...aria} list={`${id}-types`} required value={f.provider_type} onChange={set('provider_type')} />
            <datalist id={`${id}-types`}>{types.data?.map((t) => <option key={t.type} value={t.type} />)}</datalist>
          </>
        )}</Field>
        <Field label="Model" error={errors.model}>{(id, aria) => <input id={id} {...aria} required value={f.model} onChange={set('model')} />}</Field>
        {money('Input ($ per million tokens)', 'input_per_mtok')}
        {money('Output ($ per million tokens)', 'output_per_mtok')}
        {money('Cached input ($ per million tokens)', 'cached_input_per_mtok', 'Empty or 0: cached tokens cost as input.', false)}
        <Field label="As of" error={errors.as_of}>{(id, aria) => <input id={id} {...aria} type="date" value={f.as_of} onChange={set('as_of')} />}</Field>
      </div>
      <Field label="Source" hint="Where the figure comes from: the vendor's pricing page." error={errors.source}>{(id, aria) => (
        <input id={id} {...aria} type="url" placeholder="https://" value={f.source} onChange={set('source')} />
      )}</Field>
      <div className="form-actions">
        <button className="btn btn-primary">Save price</button>
        <button type="button" className="btn btn-ghost" onClick={onDone}>Cancel</button>
      </div>
      {error && <p className="error-text" role="alert">{error}</p>}
    </form>
  )
}
