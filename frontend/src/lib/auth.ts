// The bearer token: read once from the sign-in link (#token=…), kept in
// localStorage, and dropped on sign-out or a 401.

const KEY = 'agents.token'

type Listener = () => void
const listeners = new Set<Listener>()

export function getToken(): string | null {
  return localStorage.getItem(KEY)
}

export function setToken(token: string | null) {
  if (token) localStorage.setItem(KEY, token)
  else localStorage.removeItem(KEY)
  listeners.forEach((l) => l())
}

export function onTokenChange(l: Listener): () => void {
  listeners.add(l)
  return () => listeners.delete(l)
}

/** Takes a token from the URL fragment (the server's ready link) and strips it from the address bar. */
export function captureTokenFromHash(): void {
  const m = /(?:^#|&)token=([^&]+)/.exec(window.location.hash)
  if (!m) return
  setToken(decodeURIComponent(m[1]))
  const url = window.location.pathname + window.location.search
  window.history.replaceState(null, '', url)
}
