import { useEffect, useState, type FormEvent } from 'react'
import { api, errorText, ok, type Schemas } from '../lib/api'
import { setToken, signedOutByHost, takeSignInRefusal } from '../lib/auth'
import { at, BASE } from '../lib/base'
import '../styles/signin.css'

/** The sign-in screen: single sign-on and a password form, or, when a host program signs people in, its word that it no longer does. */
export function SignIn() {
  return signedOutByHost() ? <SignedOutByHost /> : <AccountSignIn />
}

/** What a refused single sign-on's reason means, in people's terms. */
export function refusalText(reason: string, provider: string): string {
  switch (reason) {
    case 'domain':
      return `Your ${provider} account's email is not of a domain allowed here (or ${provider} has not verified it). Sign in with your organization's account.`
    case 'disabled':
      return 'Your account here is disabled. Ask an admin to enable it.'
    case 'claim_missing':
      return `${provider} did not share what this server needs to let you in (your email or your groups). Ask your admin to check the sign-in setup.`
    case 'group':
      return 'You are not in a group allowed to sign in here. Ask your admin for access.'
    case 'expired':
      return 'That sign-in expired or was started in another browser. Sign in again.'
    case 'invalid':
      return `The answer from ${provider} could not be verified, so you were not signed in. Try again; if it keeps happening, tell your admin.`
    case 'account':
      return 'No account could be made for you. Ask an admin to create one.'
    default:
      return `${provider} could not complete the sign-in. Try again; if it keeps happening, tell your admin.`
  }
}

/** The workbench path to come back to after single sign-on (this one). */
function returnPath(): string {
  const p = window.location.pathname
  return (p.startsWith(BASE) ? p.slice(BASE.length) : p) || '/'
}

/**
 * What the server offers (null until it answers, or when it cannot: the
 * password form then shows). Asked outside the query cache: the cache is
 * the signed-in user's, and signing out clears it while this screen
 * mounts.
 */
function useSignInMethods(): Schemas['SignInMethodsView'] | null {
  const [methods, setMethods] = useState<Schemas['SignInMethodsView'] | null>(null)
  useEffect(() => {
    let live = true
    ok(api.GET('/api/v1/auth/methods')).then((m) => live && setMethods(m), () => {})
    return () => { live = false }
  }, [])
  return methods
}

/** Single sign-on when the server offers it, and username and password unless turned off; the server's ready link (#token=…) skips this screen. */
function AccountSignIn() {
  const methods = useSignInMethods()
  const [refusal] = useState(takeSignInRefusal)
  const sso = methods?.oidc ? methods.oidc_name || 'single sign-on' : ''
  const password = methods?.password ?? true
  return (
    <main className="signin">
      <div className="signin-card">
        <div className="brand brand-large">
          <img src={at('/favicon.svg')} alt="" width={36} height={36} />
          <span>agents-server</span>
        </div>
        <h1 id="signin-title">Sign in</h1>
        <p className="muted">
          {password ? 'Open the link the server printed at start, or sign in with your account.' : `Sign in with your ${sso || 'organization'} account.`}
        </p>
        {refusal && (
          <p className="error-text" role="alert">
            {refusalText(refusal, sso || 'Your identity provider')}
          </p>
        )}
        {sso && (
          <a className="btn btn-primary signin-sso" href={at('/api/v1/auth/oidc/start?return_to=' + encodeURIComponent(returnPath()))}>
            Sign in with {sso}
          </a>
        )}
        {sso && password && <div className="signin-or">or</div>}
        {password && <PasswordForm primary={!sso} />}
      </div>
    </main>
  )
}

/** Username and password. */
function PasswordForm({ primary }: { primary: boolean }) {
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
    <form className="signin-form" onSubmit={submit} aria-labelledby="signin-title">
      <label className="field">
        <span>Username</span>
        <input autoFocus={primary} autoComplete="username" value={username} onChange={(e) => setUsername(e.target.value)} required />
      </label>
      <label className="field">
        <span>Password</span>
        <input type="password" autoComplete="current-password" value={password} onChange={(e) => setPassword(e.target.value)} required />
      </label>
      {error && <p className="error-text" role="alert">{error}</p>}
      <button className={primary ? 'btn btn-primary' : 'btn'} disabled={busy}>{busy ? 'Signing in…' : 'Sign in'}</button>
    </form>
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
