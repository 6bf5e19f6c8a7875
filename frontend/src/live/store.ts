// The live runs of every session, folded from the bus (timeline/reduce),
// published to React through useSyncExternalStore. Updates are flushed once
// per animation frame, so a fast stream repaints smoothly, not per token.
import { useCallback, useSyncExternalStore } from 'react'
import type { ServerEvent } from '../lib/events'
import type { NoteItem } from '../timeline/model'
import { adoptRun, applyEvent, emptyLive, settleRun, type Effect, type LiveRun, type LiveState, type TaskLink } from '../timeline/reduce'

type EffectHandler = (e: Effect) => void

let state: LiveState = emptyLive()
const listeners = new Set<() => void>()
let handler: EffectHandler = () => {}
let scheduled = false

function notify() {
  if (scheduled) return
  scheduled = true
  const flush = () => {
    scheduled = false
    listeners.forEach((l) => l())
  }
  if (typeof requestAnimationFrame === 'function' && document.visibilityState === 'visible') requestAnimationFrame(flush)
  else setTimeout(flush, 16)
}

export const liveStore = {
  get: () => state,
  subscribe(l: () => void) {
    listeners.add(l)
    return () => listeners.delete(l)
  },
  setEffectHandler(h: EffectHandler) {
    handler = h
  },
  dispatch(ev: ServerEvent) {
    const r = applyEvent(state, ev)
    state = r.state
    notify()
    r.effects.forEach((e) => handler(e))
  },
  adopt(runId: string, sessionId: string, task?: TaskLink) {
    state = adoptRun(state, runId, sessionId, task)
    notify()
  },
  settle(runId: string) {
    state = settleRun(state, runId)
    notify()
  },
  reset() {
    state = emptyLive()
    notify()
  },
}

export interface LiveSession { runs: LiveRun[]; notes: NoteItem[] }
const EMPTY: LiveSession = { runs: [], notes: [] }
const lastBySession = new Map<string, LiveSession>()

const same = <T,>(a: T[], b: T[]) => a.length === b.length && a.every((x, i) => x === b[i])

/**
 * The live runs drawn in a session's timeline: its own. A background task's
 * run works on the task's hidden session, so it is drawn only where that
 * session's transcript is (the task's view), never in the conversation that
 * started it.
 */
export function runsOfSession(s: LiveState, sessionId: string): LiveRun[] {
  return Object.values(s.runs).filter((r) => r.sessionId === sessionId)
}

// The same object while the session's runs are unchanged, so other sessions'
// streams do not re-render this one.
function forSession(s: LiveState, sessionId: string): LiveSession {
  const runs = runsOfSession(s, sessionId)
  const notes = Object.values(s.settledNotes).filter((n) => n.sessionId === sessionId).flatMap((n) => n.notes)
  const prev = lastBySession.get(sessionId)
  if (prev && same(prev.runs, runs) && same(prev.notes, notes)) return prev
  const v = runs.length || notes.length ? { runs, notes } : EMPTY
  lastBySession.set(sessionId, v)
  return v
}

/** The session's live runs and the kept notes of its finished ones. */
export function useLiveSession(sessionId: string | undefined): LiveSession {
  const get = useCallback(() => (sessionId ? forSession(liveStore.get(), sessionId) : EMPTY), [sessionId])
  return useSyncExternalStore(liveStore.subscribe, get)
}

/** The live (running or paused) run of each session, for the sidebar. */
export function useBusySessions(): Record<string, LiveRun['status']> {
  const v = useSyncExternalStore(liveStore.subscribe, () => busyOf(liveStore.get()))
  return v
}

const busyCache = new WeakMap<LiveState, Record<string, LiveRun['status']>>()
function busyOf(s: LiveState) {
  let v = busyCache.get(s)
  if (!v) {
    v = {}
    for (const r of Object.values(s.runs)) if (r.status === 'running' || r.status === 'interrupted') v[r.sessionId] = r.status
    busyCache.set(s, v)
  }
  return v
}
