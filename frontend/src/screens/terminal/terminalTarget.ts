// Which project's terminal is open (one at a time, over every screen).
import { useSyncExternalStore } from 'react'

export interface TerminalTarget { projectId: string; name: string }

let target: TerminalTarget | null = null
const listeners = new Set<() => void>()

export function openTerminal(t: TerminalTarget) {
  target = t
  listeners.forEach((l) => l())
}

export function closeTerminal() {
  target = null
  listeners.forEach((l) => l())
}

export function useTerminalTarget(): TerminalTarget | null {
  return useSyncExternalStore(
    (l) => {
      listeners.add(l)
      return () => listeners.delete(l)
    },
    () => target,
  )
}
