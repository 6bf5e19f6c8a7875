import { useState, type FormEvent } from 'react'
import { api, errorText, ok } from '../lib/api'
import { setToken } from '../lib/auth'

/** Username and password; the server's ready link (#token=…) skips this screen. */
export function SignIn() {
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
          <img src="/favicon.svg" alt="" width={36} height={36} />
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
