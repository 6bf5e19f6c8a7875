// The bearer token: read once from the sign-in link (#token=…), kept in
// localStorage, and dropped on sign-out or a 401. When a host program
// mounts the workbench behind its own sign-in, its session stands in for
// the token (HOST_SESSION) until a 401 says the host signed the person out.
import { HOST_SIGN_IN } from './base'

const KEY = 'agents.token'

/** The credential of a page the host program signed in: no token is sent. */
export const HOST_SESSION = 'host-session'
let hostSignedOut = false

type Listener = () => void
const listeners = new Set<Listener>()

export function getToken(): string | null {
  const stored = localStorage.getItem(KEY)
  if (stored || !HOST_SIGN_IN) return stored
  return hostSignedOut ? null : HOST_SESSION
}

/** What a credential sends as its bearer token: nothing for the host's stand-in. */
export const asBearer = (token: string | null): string | null => (token === HOST_SESSION ? null : token)

/** The token to send as a bearer, if any. */
export const bearer = (): string | null => asBearer(getToken())

/** Whether the host program signed this page in and has since signed it out. */
export const signedOutByHost = (): boolean => HOST_SIGN_IN && hostSignedOut

export function setToken(token: string | null) {
  if (token && token !== HOST_SESSION) localStorage.setItem(KEY, token)
  else localStorage.removeItem(KEY)
  hostSignedOut = HOST_SIGN_IN && !token
  listeners.forEach((l) => l())
}

export function onTokenChange(l: Listener): () => void {
  listeners.add(l)
  return () => listeners.delete(l)
}

let signInRefusal: string | null = null

/**
 * Takes a token from the URL fragment (the server's ready link, or a
 * single sign-on's landing) and strips it from the address bar; a refused
 * single sign-on lands with #signin_error=<reason> instead, kept for the
 * sign-in screen (takeSignInRefusal).
 */
export function captureTokenFromHash(): void {
  const m = /(?:^#|&)token=([^&]+)/.exec(window.location.hash)
  const refused = /(?:^#|&)signin_error=([^&]+)/.exec(window.location.hash)
  if (!m && !refused) return
  const url = window.location.pathname + window.location.search
  window.history.replaceState(null, '', url)
  if (refused) {
    signInRefusal = decodeURIComponent(refused[1])
    listeners.forEach((l) => l())
  }
  if (m) setToken(decodeURIComponent(m[1]))
}

/** Why the last single sign-on was refused (a short reason the server sent), read once. */
export function takeSignInRefusal(): string | null {
  const r = signInRefusal
  signInRefusal = null
  return r
}
