import { useQueryClient } from '@tanstack/react-query'
import { useState, type FormEvent } from 'react'
import { Field } from '../../components/Field'
import { api, ApiError, errorText, MASK, ok, type Provider } from '../../lib/api'
import { keys, useProviders, useProviderTypes } from '../../lib/queries'
import { ChatGPTSignIn } from './ChatGPTSignIn'
import { ProviderTestResult, useProviderTests } from './ProviderTest'
import { ScopeButton } from './ScopeButton'

/**
 * Model endpoints and their keys. A key is write-only: keep (the mask),
 * replace, or clear. Each provider's connection can be tested from its row,
 * and is tested right after a save unless the form is told not to.
 */
export function ProvidersTab() {
  const providers = useProviders()
  const tests = useProviderTests()
  const [editing, setEditing] = useState<Provider | 'new' | null>(null)
  const saved = (p: Provider, test: boolean) => {
    // A ChatGPT provider is of no use until it is signed in: its form stays
    // open on the saved row, where the sign-in is (and nothing to test yet).
    if (p.auth_mode === CHATGPT && !p.chatgpt_logged_in) {
      setEditing(p)
      return
    }
    setEditing(null)
    if (test) void tests.test(p.id)
  }
  return (
    <div className="tab-page">
      <div className="tab-intro">
        <p className="muted">A provider is one model endpoint and the key that reaches it. Agents name a provider.</p>
        <button className="btn btn-primary" onClick={() => setEditing('new')}>Add provider</button>
      </div>
      {editing && <ProviderForm key={editing === 'new' ? 'new' : editing.id} provider={editing === 'new' ? undefined : editing} onDone={() => setEditing(null)} onSaved={saved} />}
      {providers.data?.length === 0 && !editing && <p className="empty muted">No providers yet. Add one with its base URL and API key.</p>}
      <ul className="rows">
        {providers.data?.map((p) => (
          <li key={p.id} className="row">
            <div className="row-main">
              <b>{p.name}</b> <span className="pill">{p.type}</span> <span className="pill">{p.scope}</span>
              <div className="muted small">{p.auth_mode === CHATGPT
                ? <>ChatGPT account · {p.chatgpt_logged_in ? 'signed in' : <span className="warn-text">not signed in — sign in to use it</span>}</>
                : <>{p.base_url || 'default endpoint'} · {p.api || 'default API'} · key {p.api_key ? 'set' : 'not set'}</>}</div>
              <ProviderTestResult state={tests.results[p.id]} />
            </div>
            <button className="btn btn-ghost btn-sm" aria-label={`Test connection of ${p.name}`} disabled={tests.results[p.id]?.status === 'running'}
              onClick={() => void tests.test(p.id)}>Test connection</button>
            <ScopeButton kind="providers" id={p.id} scope={p.scope} />
            <button className="btn btn-ghost btn-sm" onClick={() => setEditing(p)}>Edit</button>
          </li>
        ))}
      </ul>
    </div>
  )
}

/** The auth mode of a provider that signs in with a ChatGPT account. */
const CHATGPT = 'chatgpt_login'

function ProviderForm({ provider, onDone, onSaved }: { provider?: Provider; onDone: () => void; onSaved: (p: Provider, test: boolean) => void }) {
  const qc = useQueryClient()
  const types = useProviderTypes()
  const [form, setForm] = useState({
    name: provider?.name ?? '', type: provider?.type ?? 'openai', api: provider?.api ?? '', auth_mode: provider?.auth_mode ?? '', base_url: provider?.base_url ?? '',
  })
  const hasKey = !!provider?.api_key
  const [key, setKey] = useState<{ mode: 'keep' | 'replace' | 'clear'; value: string }>({ mode: provider ? 'keep' : 'replace', value: '' })
  // A new provider is tested as soon as it exists; so is an edit, unless asked not to.
  const [testAfter, setTestAfter] = useState(true)
  const [errors, setErrors] = useState<Record<string, string>>({})
  const [error, setError] = useState('')
  const t = types.data?.find((x) => x.type === form.type)
  // A ChatGPT provider has no key and no base URL: it signs in instead.
  const chatgpt = form.auth_mode === CHATGPT
  const set = (k: keyof typeof form) => (v: string) => setForm((f) => ({ ...f, [k]: v }))

  async function save(e: FormEvent) {
    e.preventDefault()
    const api_key = chatgpt || key.mode === 'clear' ? '' : key.mode === 'keep' ? MASK : key.value
    const body = { ...form, api_key, base_url: chatgpt ? '' : form.base_url }
    try {
      const saved = provider
        ? await ok(api.PUT('/api/v1/providers/{id}', { params: { path: { id: provider.id } }, body }))
        : await ok(api.POST('/api/v1/providers', { body }))
      await qc.invalidateQueries({ queryKey: keys.providers })
      // The models an agent form offers come from the endpoint as it was: ask again.
      await qc.invalidateQueries({ queryKey: keys.providerModels(saved.id) })
      onSaved(saved, testAfter)
    } catch (err) {
      setErrors(err instanceof ApiError ? err.fields : {})
      setError(errorText(err))
    }
  }

  async function remove() {
    if (!provider) return
    try {
      await ok(api.DELETE('/api/v1/providers/{id}', { params: { path: { id: provider.id } } }))
      await qc.invalidateQueries({ queryKey: keys.providers })
      onDone()
    } catch (err) {
      setError(errorText(err))
    }
  }

  return (
    <form className="card form" onSubmit={save} aria-label={provider ? `Edit ${provider.name}` : 'New provider'}>
      <h2>{provider ? `Edit ${provider.name}` : 'New provider'}</h2>
      <div className="grid2">
        <Field label="Name" error={errors.name}>{(id, aria) => <input id={id} {...aria} value={form.name} onChange={(e) => set('name')(e.target.value)} required />}</Field>
        <Field label="Type" error={errors.type}>{(id, aria) => (
          <select id={id} {...aria} value={form.type} onChange={(e) => setForm((f) => ({ ...f, type: e.target.value, api: '', auth_mode: '' }))}>
            {(types.data ?? [{ type: 'openai' }, { type: 'anthropic' }]).map((x) => <option key={x.type} value={x.type}>{x.type}</option>)}
          </select>
        )}</Field>
        {!chatgpt && (
          <Field label="Base URL" hint={t?.default_base_url ? `Empty uses ${t.default_base_url}` : undefined} error={errors.base_url}>{(id, aria) => (
            <input id={id} {...aria} value={form.base_url} placeholder="https://…/v1" onChange={(e) => set('base_url')(e.target.value)} />
          )}</Field>
        )}
        <Field label="API" error={errors.api}>{(id, aria) => (
          <select id={id} {...aria} value={form.api} onChange={(e) => set('api')(e.target.value)}>
            <option value="">default for the endpoint</option>
            {t?.apis.map((a) => <option key={a.name} value={a.name}>{a.name}</option>)}
          </select>
        )}</Field>
        {t && t.auth_modes.length > 1 && (
          <Field label="Authentication" error={errors.auth_mode}>{(id, aria) => (
            <select id={id} {...aria} value={form.auth_mode} onChange={(e) => set('auth_mode')(e.target.value)}>
              <option value="">default</option>
              {t.auth_modes.map((m) => <option key={m} value={m}>{m}</option>)}
            </select>
          )}</Field>
        )}
        {!chatgpt && <Field label="API key" error={errors.api_key} hint={provider && key.mode === 'keep' ? (hasKey ? 'Stored — never shown again.' : 'No key stored.') : undefined}>{(id, aria) =>
          key.mode === 'replace' ? (
            <span className="inline">
              <input id={id} {...aria} type="password" autoComplete="off" value={key.value} placeholder={provider ? 'New key' : 'sk-…'} onChange={(e) => setKey({ mode: 'replace', value: e.target.value })} />
              {provider && <button type="button" className="btn btn-ghost btn-sm" onClick={() => setKey({ mode: 'keep', value: '' })}>Keep stored</button>}
            </span>
          ) : (
            <span className="inline">
              <input id={id} {...aria} value={key.mode === 'clear' ? '(will be cleared)' : hasKey ? MASK : ''} readOnly />
              <button type="button" className="btn btn-ghost btn-sm" onClick={() => setKey({ mode: 'replace', value: '' })}>Replace</button>
              {hasKey && <button type="button" className="btn btn-ghost btn-sm" onClick={() => setKey({ mode: 'clear', value: '' })}>Clear</button>}
            </span>
          )
        }</Field>}
      </div>
      {chatgpt && (provider?.auth_mode === CHATGPT
        ? <ChatGPTSignIn provider={provider} />
        : <p className="muted small">Signs in with a ChatGPT account instead of a key: save the provider, then sign in here.</p>)}
      <Field label="Test the connection after saving" inline hint="One call to the provider's model list: the answer shows on its row">{(id, aria) => (
        <input id={id} {...aria} type="checkbox" checked={testAfter} onChange={(e) => setTestAfter(e.target.checked)} />
      )}</Field>
      {error && <p className="error-text" role="alert">{error}</p>}
      <div className="form-actions">
        <button className="btn btn-primary">Save</button>
        <button type="button" className="btn btn-ghost" onClick={onDone}>Cancel</button>
        <span className="grow" />
        {provider && <button type="button" className="btn btn-danger" onClick={remove}>Delete</button>}
      </div>
    </form>
  )
}
