// The app's one polite live region: what a screen reader is told without
// moving focus ("Answer finished", "Approval requested: exec_command",
// errors). Any code may announce; LiveRegion (in App) speaks it.
import { useSyncExternalStore } from 'react'

let message = ''
const listeners = new Set<() => void>()
let pending: ReturnType<typeof setTimeout> | undefined

/** Says text politely. The same text twice in a row is said twice (the region is emptied first). */
export function announce(text: string) {
  message = ''
  listeners.forEach((l) => l())
  clearTimeout(pending)
  // A region whose text changes in one step may swallow a repeat: empty it, then fill it.
  pending = setTimeout(() => {
    message = text
    listeners.forEach((l) => l())
  }, 30)
}

export function useAnnouncement(): string {
  return useSyncExternalStore(
    (l) => {
      listeners.add(l)
      return () => listeners.delete(l)
    },
    () => message,
  )
}
