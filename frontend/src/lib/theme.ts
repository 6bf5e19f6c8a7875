// Light and dark themes: the system's choice until the person picks one.
import { useSyncExternalStore } from 'react'

export type Theme = 'light' | 'dark'
const KEY = 'agents.theme'
const listeners = new Set<() => void>()

function initial(): Theme {
  const saved = localStorage.getItem(KEY)
  if (saved === 'light' || saved === 'dark') return saved
  return window.matchMedia?.('(prefers-color-scheme: dark)').matches ? 'dark' : 'light'
}

let theme: Theme = initial()
document.documentElement.dataset.theme = theme

export function setTheme(t: Theme) {
  theme = t
  localStorage.setItem(KEY, t)
  document.documentElement.dataset.theme = t
  listeners.forEach((l) => l())
}

export function useTheme(): Theme {
  return useSyncExternalStore(
    (l) => {
      listeners.add(l)
      return () => listeners.delete(l)
    },
    () => theme,
  )
}
