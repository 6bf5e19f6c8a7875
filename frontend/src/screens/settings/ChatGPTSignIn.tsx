import { useQuery, useQueryClient } from '@tanstack/react-query'
import { useState } from 'react'
import { Field } from '../../components/Field'
import { api, ApiError, errorText, ok, type Provider, type Schemas } from '../../lib/api'
import { keys } from '../../lib/queries'

type Login = Schemas['ChatGPTLoginView']

/** The status query of one provider's sign-in. */
export const chatgptStatusKey = (id: string) => ['providers', id, 'chatgpt'] as const

/**
 * Signs a chatgpt_login provider in with a ChatGPT account: the server
 * gives an authorize URL; after signing in there the browser lands on a
 * localhost:1455 address that does not load (nothing listens there, which
 * is what lets a remote server sign in too); the person pastes that address
 * back and the server redeems it. Every agent on the provider shares the
 * sign-in. Lives inside the provider form, so its buttons never submit it.
 */
export function ChatGPTSignIn({ provider }: { provider: Provider }) {
  const qc = useQueryClient()
  const [signedIn, setSignedIn] = useState(!!provider.chatgpt_logged_in)
  const [login, setLogin] = useState<Login | null>(null)
  const [callback, setCallback] = useState('')
  const [fieldError, setFieldError] = useState('')
  const [error, setError] = useState('')
  const [busy, setBusy] = useState(false)
  const [said, setSaid] = useState('')
  const path = { params: { path: { id: provider.id } } }
  const status = useQuery({
    queryKey: chatgptStatusKey(provider.id),
    queryFn: () => ok(api.GET('/api/v1/providers/{id}/chatgpt/status', path)),
    enabled: signedIn,
  })

  async function act<T>(call: () => Promise<T>, done: (v: T) => void) {
    setBusy(true)
    setError('')
    setFieldError('')
    try {
      done(await call())
      await qc.invalidateQueries({ queryKey: keys.providers })
    } catch (err) {
      const field = err instanceof ApiError ? err.fields.callback_url : ''
      if (field) setFieldError(field)
      else setError(errorText(err))
    } finally {
      setBusy(false)
    }
  }

  const start = () => act(() => ok(api.POST('/api/v1/providers/{id}/chatgpt/login', path)), (l) => {
    setLogin(l)
    setCallback('')
    setSaid('Sign-in started: finish it in the tab that opened, then paste the address here.')
    window.open(l.authorize_url, '_blank', 'noopener')
  })
  const complete = () => act(() => ok(api.POST('/api/v1/providers/{id}/chatgpt/complete', { ...path, body: { callback_url: callback.trim() } })), () => {
    setLogin(null)
    setSignedIn(true)
    setSaid('Signed in with ChatGPT.')
    void qc.invalidateQueries({ queryKey: chatgptStatusKey(provider.id) })
  })
  const signOut = () => act(() => ok(api.POST('/api/v1/providers/{id}/chatgpt/logout', path)), () => {
    setSignedIn(false)
    setSaid('Signed out of ChatGPT.')
    qc.removeQueries({ queryKey: chatgptStatusKey(provider.id) })
  })

  const who = status.data?.email ? `Signed in as ${status.data.email}${status.data.plan ? ` (${status.data.plan})` : ''}` : 'Signed in with ChatGPT'
  return (
    <section className="chatgpt-signin" aria-label="ChatGPT sign-in">
      <h3>ChatGPT sign-in</h3>
      {signedIn ? (
        <p className="inline">
          <span className="ok-text">{who}</span>
          <button type="button" className="btn btn-ghost btn-sm" disabled={busy} onClick={() => void signOut()}>Sign out</button>
        </p>
      ) : (
        <>
          <p className="muted small">Not signed in: runs on this provider fail until you sign in. Every agent on it shares the sign-in.</p>
          <button type="button" className="btn btn-sm" disabled={busy} onClick={() => void start()}>Sign in with ChatGPT</button>
          {login && (
            <div className="chatgpt-steps">
              <p className="small">
                1. Sign in on the page that opened (or <a href={login.authorize_url} target="_blank" rel="noopener noreferrer">open the sign-in page</a>).
                <br />2. Your browser then lands on an address starting with <code>{login.redirect_uri}</code> that does not load — that is expected.
                Copy that whole address from the address bar and paste it below before {new Date(login.expires_at).toLocaleTimeString()}.
              </p>
              <Field label="Callback URL" error={fieldError}>{(id, aria) => (
                <input id={id} {...aria} value={callback} placeholder={`${login.redirect_uri}?code=…&state=…`} autoComplete="off"
                  onChange={(e) => setCallback(e.target.value)}
                  onKeyDown={(e) => {
                    if (e.key === 'Enter') {
                      e.preventDefault() // the provider form must not submit
                      if (callback.trim()) void complete()
                    }
                  }} />
              )}</Field>
              <button type="button" className="btn btn-primary btn-sm" disabled={busy || !callback.trim()} onClick={() => void complete()}>Complete sign-in</button>
            </div>
          )}
        </>
      )}
      {error && <p className="error-text" role="alert">{error}</p>}
      <p className="visually-hidden" role="status" aria-live="polite">{said}</p>
    </section>
  )
}
