// The inspector column's state, over every screen: open or not, which tab,
// and which background task its Task tab shows. A module store (like the
// terminal's target), so a task list row or a spawn_task card anywhere in
// the conversation can open a task there.
import { useSyncExternalStore } from 'react'

export type InspectorTab = 'trace' | 'context' | 'task'

/** A task opened in the inspector, with the conversation it belongs to. */
export interface OpenTask { sessionId: string; taskId: string }

export interface InspectorState { open: boolean; tab: InspectorTab; task: OpenTask | null }

let state: InspectorState = { open: typeof window !== 'undefined' && window.innerWidth >= 1100, tab: 'trace', task: null }
const listeners = new Set<() => void>()

function set(next: Partial<InspectorState>) {
  state = { ...state, ...next }
  listeners.forEach((l) => l())
}

export const toggleInspector = () => set({ open: !state.open })
export const closeInspector = () => set({ open: false })
export const showTab = (tab: InspectorTab) => set({ tab })

/** Opens a task's view in the inspector (opening the inspector). */
export const openTask = (sessionId: string, taskId: string) => set({ open: true, tab: 'task', task: { sessionId, taskId } })

/** Closes the task's view: the trace is shown again. */
export const closeTask = () => set({ tab: state.tab === 'task' ? 'trace' : state.tab, task: null })

/** The tab to show in sessionId's inspector: the Task tab only for a task of that conversation. */
export function tabFor(s: InspectorState, sessionId: string): InspectorTab {
  if (s.tab !== 'task') return s.tab
  return s.task?.sessionId === sessionId ? 'task' : 'trace'
}

export function useInspector(): InspectorState {
  return useSyncExternalStore(
    (l) => {
      listeners.add(l)
      return () => listeners.delete(l)
    },
    () => state,
  )
}

/** The state now (outside React). */
export const inspectorNow = () => state

/** For tests: back to a closed inspector on the trace. */
export function resetInspector(open = false) {
  set({ open, tab: 'trace', task: null })
}
