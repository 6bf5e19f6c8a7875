// Transient notices (toasts): refused commands, failed writes.
import { useSyncExternalStore } from 'react'
import { announce } from './announce'

export interface Notice { id: number; tone: 'error' | 'info'; message: string }
let notices: Notice[] = []
let next = 1
const listeners = new Set<() => void>()
const emit = () => listeners.forEach((l) => l())

export function notify(message: string, tone: Notice['tone'] = 'error') {
  const n = { id: next++, tone, message }
  notices = [...notices, n]
  emit()
  announce(message)
  setTimeout(() => dismiss(n.id), 6000)
}

export function dismiss(id: number) {
  notices = notices.filter((n) => n.id !== id)
  emit()
}

export function useNotices(): Notice[] {
  return useSyncExternalStore(
    (l) => {
      listeners.add(l)
      return () => listeners.delete(l)
    },
    () => notices,
  )
}
