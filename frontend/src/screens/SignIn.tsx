import { useState, type FormEvent } from 'react'
import { api, errorText, ok } from '../lib/api'
import { setToken, signedOutByHost } from '../lib/auth'
import { at } from '../lib/base'

/** The sign-in screen: a password form, or, when a host program signs people in, its word that it no longer does. */
export function SignIn() {
  return signedOutByHost() ? <SignedOutByHost /> : <PasswordSignIn />
}

/** Username and password; the server's ready link (#token=…) skips this screen. */
function PasswordSignIn() {
  const [username, setUsername] = useState('')
  const [password, setPassword] = useState('')
  const [error, setError] = useState('')
  const [busy, setBusy] = useState(false)

  async function submit(e: FormEvent) {
    e.preventDefault()
    setBusy(true)
    setError('')
    try {
      const r = await ok(api.POST('/api/v1/auth/login', { body: { username, password } }))
      setToken(r.token)
    } catch (err) {
      setError(errorText(err))
    } finally {
      setBusy(false)
    }
  }

  return (
    <main className="signin">
      <form className="signin-card" onSubmit={submit} aria-labelledby="signin-title">
        <div className="brand brand-large">
          <img src={at('/favicon.svg')} alt="" width={36} height={36} />
          <span>agents-server</span>
        </div>
        <h1 id="signin-title">Sign in</h1>
        <p className="muted">Open the link the server printed at start, or sign in with your account.</p>
        <label className="field">
          <span>Username</span>
          <input autoFocus autoComplete="username" value={username} onChange={(e) => setUsername(e.target.value)} required />
        </label>
        <label className="field">
          <span>Password</span>
          <input type="password" autoComplete="current-password" value={password} onChange={(e) => setPassword(e.target.value)} required />
        </label>
        {error && <p className="error-text" role="alert">{error}</p>}
        <button className="btn btn-primary" disabled={busy}>{busy ? 'Signing in…' : 'Sign in'}</button>
      </form>
    </main>
  )
}

/** The host program signed the person out: its sign-in, not ours, lets them back in. */
function SignedOutByHost() {
  return (
    <main className="signin">
      <div className="signin-card" role="alert">
        <div className="brand brand-large">
          <img src={at('/favicon.svg')} alt="" width={36} height={36} />
          <span>agents-server</span>
        </div>
        <h1>Signed out</h1>
        <p className="muted">The application this workbench runs in no longer signs you in. Sign in there, then reload this page.</p>
        <button className="btn btn-primary" onClick={() => window.location.reload()}>Reload</button>
      </div>
    </main>
  )
}
