import '../../styles/onboarding.css'
import { useQueryClient } from '@tanstack/react-query'
import { useEffect, useRef, useState, type FormEvent, type KeyboardEvent } from 'react'
import { Field } from '../../components/Field'
import { ApiError, errorText } from '../../lib/api'
import { at } from '../../lib/base'
import { keys, useProviders, useProviderTypes } from '../../lib/queries'
import { navigate, sessionPath } from '../../lib/router'
import {
  checkProviderForm, connectProvider, connectSaved, DEFAULT_AGENT_NAME, startFirstChat, whereIs,
  type FieldErrors, type Held, type ProviderForm,
} from './firstChat'

/** The choice of provider that makes a new one rather than use a saved one. */
const NEW = 'new'

/** How each type reads in the picker; a type the registry adds later reads as its name. */
const TYPE_LABELS: Record<string, string> = { openai: 'OpenAI or OpenAI-compatible', anthropic: 'Anthropic' }

/** What connecting found: the provider to use and its models (listed, or to be typed). */
interface Found {
  providerId: string
  models: string[]
  listed: boolean
}

/**
 * The start screen of a workbench with no agent to chat with: one screen
 * that connects a provider (or uses one already saved), lists the models
 * the provider offers, and starts the first chat with a default agent on
 * the chosen model — no agent form. Each error shows next to what to
 * change, and leaves nothing behind (see connectProvider).
 */
export function Onboarding() {
  const qc = useQueryClient()
  const providers = useProviders()
  const types = useProviderTypes()
  // The provider this screen saved: reused by a retry, never offered as "saved".
  const [held, setHeld] = useState<Held | null>(null)
  const saved = (providers.data ?? []).filter((p) => p.id !== held?.id)
  const [choice, setChoice] = useState<string | null>(null)
  const source = choice ?? (saved[0]?.id ?? NEW)
  const [form, setForm] = useState<ProviderForm>({ type: 'openai', baseURL: '', apiKey: '' })
  const [found, setFound] = useState<Found | null>(null)
  const [listingOnly, setListingOnly] = useState(false)
  const [model, setModel] = useState('')
  const [message, setMessage] = useState('')
  const [errors, setErrors] = useState<FieldErrors>({})
  const [busy, setBusy] = useState<'' | 'connecting' | 'sending'>('')
  const [status, setStatus] = useState('')
  const [sendError, setSendError] = useState('')
  // Connected, the provider's card folds to one line until Change opens it.
  const [changing, setChanging] = useState(false)
  const changeRef = useRef<HTMLDivElement>(null)
  const modelRef = useRef<HTMLSelectElement & HTMLInputElement>(null)
  const type = types.data?.find((t) => t.type === form.type)
  const typeList = types.data?.map((t) => t.type) ?? ['openai', 'anthropic']
  const chatgpt = types.data?.some((t) => t.auth_modes.includes('chatgpt_login'))

  // Whatever was found no longer holds once the provider's entries change.
  const edit = (patch: Partial<ProviderForm>) => {
    setForm((f) => ({ ...f, ...patch }))
    setFound(null)
    setListingOnly(false)
    setErrors({})
  }

  useEffect(() => {
    if (found) modelRef.current?.focus()
  }, [found])
  useEffect(() => {
    if (changing) changeRef.current?.querySelector<HTMLElement>('select, input')?.focus()
  }, [changing])

  async function connect(e?: FormEvent, anyway = false) {
    e?.preventDefault()
    const chosen = saved.find((p) => p.id === source)
    const checked = chosen ? {} : checkProviderForm(form)
    setErrors(checked)
    if (Object.keys(checked).length) return
    setBusy('connecting')
    setFound(null)
    setStatus(`Asking ${chosen ? chosen.name : whereIs(form.type, form.baseURL)} for its models…`)
    const others = saved.map((p) => p.name)
    const r = chosen ? await connectSaved(chosen) : await connectProvider(form, held, others, anyway)
    setBusy('')
    if (!r.ok) {
      setErrors(r.errors)
      setListingOnly(!!r.listingOnly)
      setStatus('')
      return
    }
    if (!chosen) setHeld(r.held)
    setListingOnly(false)
    setChanging(false)
    setFound({ providerId: r.held.id, models: r.models, listed: r.listed })
    setModel(r.models.length === 1 ? r.models[0] : r.models.includes(model) ? model : '')
    setStatus(!r.listed ? 'Connected. Type the name of the model to use.'
      : r.models.length ? `Connected: ${r.models.length} model${r.models.length === 1 ? '' : 's'} to choose from.`
      : 'Connected, but the provider lists no models. Type the name of the model to use.')
  }

  async function send(e?: FormEvent) {
    e?.preventDefault()
    if (!found || busy) return
    const missing: FieldErrors = {}
    if (!model.trim()) missing.model = found.models.length ? 'Choose a model.' : 'Type the name of the model to use.'
    if (!message.trim()) missing.message = 'Write the first message.'
    setErrors(missing)
    setSendError('')
    if (Object.keys(missing).length) return
    setBusy('sending')
    try {
      const s = await startFirstChat(found.providerId, model.trim(), message, [])
      qc.setQueryData(keys.session(s.id), s)
      void qc.invalidateQueries({ queryKey: keys.agents })
      void qc.invalidateQueries({ queryKey: keys.providers })
      void qc.invalidateQueries({ queryKey: keys.sessions })
      navigate(sessionPath(s.id))
    } catch (err) {
      setBusy('')
      setSendError(`The chat could not start: ${err instanceof ApiError ? err.message : errorText(err)}`)
    }
  }

  function onMessageKey(e: KeyboardEvent<HTMLTextAreaElement>) {
    if (e.key === 'Enter' && !e.shiftKey && !e.nativeEvent.isComposing) {
      e.preventDefault()
      void send()
    }
  }

  const models = found?.models ?? []
  const chosenSaved = saved.find((p) => p.id === source)
  const providerLabel = chosenSaved ? chosenSaved.name : whereIs(form.type, form.baseURL)
  const folded = !!found && !changing
  return (
    <section className="conversation onboarding" aria-label="Get started">
      <div className="timeline">
        <div className="onboarding-body">
          <header className="onboarding-head">
            <img src={at('/favicon.svg')} alt="" width={48} height={48} />
            <h1>Start your first chat</h1>
            <p className="muted">Connect a model provider, pick one of its models and say hello. An agent named {DEFAULT_AGENT_NAME} is made for you; change it any time in Settings → Agents.</p>
          </header>

          {providers.isPending ? <p className="muted" role="status">Loading…</p> : (
            <form className="card form" aria-label="Connect a provider" onSubmit={(e) => void connect(e)} noValidate>
              <h2>1. Connect a provider</h2>
              {folded ? (
                <div className="onboarding-connected">
                  <span>Connected to <b>{providerLabel}</b>{found.listed ? ` · ${found.models.length} model${found.models.length === 1 ? '' : 's'}` : ''}</span>
                  <button type="button" className="btn btn-ghost btn-sm" onClick={() => setChanging(true)}>Change</button>
                </div>
              ) : (
                <div className="onboarding-fields" ref={changeRef}>
                  {saved.length > 0 && (
                    <Field label="Provider" error={errors.provider}>{(id, aria) => (
                      <select id={id} {...aria} autoFocus value={source} onChange={(e) => { setChoice(e.target.value); setFound(null); setErrors({}) }}>
                        {saved.map((p) => <option key={p.id} value={p.id}>{p.name}</option>)}
                        <option value={NEW}>A new provider…</option>
                      </select>
                    )}</Field>
                  )}
                  {source === NEW && <>
                    <Field label="Type" error={errors.type}>{(id, aria) => (
                      <select id={id} {...aria} autoFocus={!saved.length} value={form.type} onChange={(e) => edit({ type: e.target.value })}>
                        {typeList.map((t) => <option key={t} value={t}>{TYPE_LABELS[t] ?? t}</option>)}
                      </select>
                    )}</Field>
                    <Field label="API key" error={errors.api_key}
                      hint={form.baseURL.trim() ? 'Leave empty for a server that needs no key.' : 'Kept on this server, never shown again.'}>{(id, aria) => (
                      <input id={id} {...aria} type="password" autoComplete="off" value={form.apiKey} placeholder={form.type === 'anthropic' ? 'sk-ant-…' : 'sk-…'}
                        onChange={(e) => edit({ apiKey: e.target.value })} />
                    )}</Field>
                    <Field label="Base URL" error={errors.base_url}
                      hint={type?.default_base_url ? `Empty uses ${type.default_base_url}. For another server (Ollama, vLLM, OpenRouter…) its address, usually ending in /v1.` : 'The server\'s address, usually ending in /v1.'}>{(id, aria) => (
                      <input id={id} {...aria} type="url" inputMode="url" autoComplete="off" spellCheck={false} value={form.baseURL}
                        placeholder={type?.default_base_url || 'https://…/v1'} onChange={(e) => edit({ baseURL: e.target.value })} />
                    )}</Field>
                  </>}
                  {errors.form && <p className="error-text" role="alert">{errors.form}</p>}
                  <div className="form-actions">
                    <button className="btn btn-primary" disabled={!!busy}>{found ? 'List the models again' : 'Connect and list models'}</button>
                    {found && <button type="button" className="btn btn-ghost" onClick={() => setChanging(false)}>Keep it</button>}
                    {listingOnly && <button type="button" className="btn btn-ghost" disabled={!!busy} onClick={() => void connect(undefined, true)}>Use it anyway</button>}
                  </div>
                  {chatgpt && source === NEW && (
                    <p className="muted small">Signing in with a ChatGPT account instead of a key? Add that provider in{' '}
                      <a href="/settings/providers" onClick={(e) => { e.preventDefault(); navigate('/settings/providers') }}>Settings → Providers</a>, then come back here.</p>
                  )}
                </div>
              )}
              {/* Always there, so the answer is heard even as the card folds. */}
              <p className={folded ? 'visually-hidden' : 'muted small'} role="status">{status}</p>
            </form>
          )}

          {found && (
            <form className="card form" aria-label="First message" onSubmit={(e) => void send(e)} noValidate>
              <h2>2. Pick a model and write</h2>
              <Field label="Model" error={errors.model}
                hint={found.listed && models.length ? `${models.length} offered by the provider.` : 'The provider does not list its models: type the name, as the provider spells it.'}>{(id, aria) =>
                models.length ? (
                  <select id={id} {...aria} ref={modelRef} value={model} onChange={(e) => setModel(e.target.value)}>
                    <option value="" disabled>Choose a model…</option>
                    {models.map((m) => <option key={m} value={m}>{m}</option>)}
                  </select>
                ) : (
                  <input id={id} {...aria} ref={modelRef} value={model} autoComplete="off" spellCheck={false} placeholder="gpt-5.2, claude-…, llama3…" onChange={(e) => setModel(e.target.value)} />
                )
              }</Field>
              <Field label="Message" error={errors.message} hint="Enter sends; Shift+Enter starts a new line.">{(id, aria) => (
                <textarea id={id} {...aria} rows={3} value={message} placeholder="Ask anything…" onChange={(e) => setMessage(e.target.value)} onKeyDown={onMessageKey} />
              )}</Field>
              {sendError && <p className="error-text" role="alert">{sendError}</p>}
              <div className="form-actions">
                <button className="btn btn-primary" disabled={!!busy}>{busy === 'sending' ? 'Starting…' : 'Send'}</button>
              </div>
            </form>
          )}
        </div>
      </div>
    </section>
  )
}
