// A small path router: / (new conversation), /s/<session> (?m=<entry> opens it
// at that message, as a search hit does), /settings/<tab>,
// /workflows (the hub), /workflows/new, /workflows/<id> and /workflows/<id>/edit,
// /usage (everyone's, admins) and /usage/me (the caller's own).
// The server answers index.html for every UI path, so reloads keep the place.
import { useSyncExternalStore } from 'react'
import { BASE } from './base'

export type Route =
  | { name: 'home' }
  | { name: 'session'; id: string; m?: string }
  | { name: 'settings'; tab: string }
  | { name: 'workflows'; id?: string; edit?: boolean }
  | { name: 'usage'; mine: boolean }

const listeners = new Set<() => void>()
let current = parse(appPath())

/** The address bar's path (and query) within the app: the mount prefix taken off. */
function appPath(): string {
  const p = window.location.pathname
  return (BASE && p.startsWith(BASE) ? p.slice(BASE.length) || '/' : p) + window.location.search
}

function parse(full: string): Route {
  const [path, search = ''] = full.split('?', 2)
  const s = /^\/s\/([^/]+)/.exec(path)
  if (s) {
    const m = new URLSearchParams(search).get('m')
    return { name: 'session', id: decodeURIComponent(s[1]), ...(m ? { m } : {}) }
  }
  const t = /^\/settings(?:\/([^/]+))?/.exec(path)
  if (t) return { name: 'settings', tab: t[1] ?? 'providers' }
  const w = /^\/workflows(?:\/([^/]+)(\/edit)?)?\/?$/.exec(path)
  if (w) return { name: 'workflows', ...(w[1] ? { id: decodeURIComponent(w[1]) } : {}), ...(w[2] ? { edit: true } : {}) }
  const u = /^\/usage(\/me)?\/?$/.exec(path)
  if (u) return { name: 'usage', mine: !!u[1] }
  return { name: 'home' }
}

window.addEventListener('popstate', () => {
  current = parse(appPath())
  listeners.forEach((l) => l())
})

export function navigate(path: string, replace = false) {
  if (path === appPath()) return
  if (replace) window.history.replaceState(null, '', BASE + path)
  else window.history.pushState(null, '', BASE + path)
  current = parse(path)
  listeners.forEach((l) => l())
}

export function useRoute(): Route {
  return useSyncExternalStore(
    (l) => {
      listeners.add(l)
      return () => listeners.delete(l)
    },
    () => current,
  )
}

/** A conversation's path; with entryId, opened at that message (scrolled to it, marked). */
export const sessionPath = (id: string, entryId?: string) => `/s/${encodeURIComponent(id)}${entryId ? `?m=${encodeURIComponent(entryId)}` : ''}`
export const workflowPath = (id?: string, edit = false) => (id ? `/workflows/${encodeURIComponent(id)}${edit ? '/edit' : ''}` : '/workflows')
