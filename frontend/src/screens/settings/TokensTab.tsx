import { useQuery, useQueryClient } from '@tanstack/react-query'
import { useState, type FormEvent } from 'react'
import { Field } from '../../components/Field'
import { api, errorText, ok } from '../../lib/api'

const KEY = ['tokens']
const date = (s?: string | null) => (s ? new Date(s).toLocaleDateString() : 'never')

/** Personal access tokens for scripts; a new token's text is shown once. */
export function TokensTab() {
  const qc = useQueryClient()
  const tokens = useQuery({ queryKey: KEY, queryFn: () => ok(api.GET('/api/v1/auth/tokens')) })
  const [name, setName] = useState('')
  const [days, setDays] = useState(90)
  const [created, setCreated] = useState<string | null>(null)
  const [error, setError] = useState('')

  async function create(e: FormEvent) {
    e.preventDefault()
    setError('')
    try {
      const t = await ok(api.POST('/api/v1/auth/tokens', { body: { name, expires_in_days: days } }))
      setCreated(t.token)
      setName('')
      await qc.invalidateQueries({ queryKey: KEY })
    } catch (err) {
      setError(errorText(err))
    }
  }

  async function revoke(id: string) {
    try {
      await ok(api.DELETE('/api/v1/auth/tokens/{id}', { params: { path: { id } } }))
      await qc.invalidateQueries({ queryKey: KEY })
    } catch (err) {
      setError(errorText(err))
    }
  }

  return (
    <div className="tab-page">
      <form className="card form" onSubmit={create} aria-label="New access token">
        <div className="grid3">
          <Field label="Name">{(id) => <input id={id} value={name} placeholder="ci" onChange={(e) => setName(e.target.value)} required />}</Field>
          <Field label="Expires in days" hint="0 never expires">{(id) => <input id={id} type="number" min={0} value={days} onChange={(e) => setDays(Number(e.target.value) || 0)} />}</Field>
          <div className="field field-end"><button className="btn btn-primary">Create token</button></div>
        </div>
        {created && (
          <div className="callout" role="status">
            <p><b>Copy this token now</b> — it is not shown again.</p>
            <code className="token-text">{created}</code>
            <button type="button" className="btn btn-sm" onClick={() => navigator.clipboard?.writeText(created)}>Copy</button>
          </div>
        )}
        {error && <p className="error-text" role="alert">{error}</p>}
      </form>
      <ul className="rows">
        {tokens.data?.map((t) => (
          <li key={t.id} className="row">
            <div className="row-main">
              <b>{t.name || t.kind}</b> <span className="pill">{t.kind}</span> {t.current && <span className="pill pill-ok">this browser</span>}
              <div className="muted small"><code>{t.hint}…</code> · created {date(t.created_at)} · last used {date(t.last_used_at)} · expires {date(t.expires_at)}</div>
            </div>
            {!t.current && <button className="btn btn-ghost btn-sm" onClick={() => revoke(t.id)}>Revoke</button>}
          </li>
        ))}
      </ul>
    </div>
  )
}
