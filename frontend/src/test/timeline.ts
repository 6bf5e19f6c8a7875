// Recorded runs (timeline/fixtures: a run's bus events and the entries the
// store kept of it) as component tests need them: the stored timeline, the
// events to replay, and the live state after some of them.
import type { Entry } from '../lib/api'
import { parseFrame, type ServerEvent } from '../lib/events'
import exec from '../timeline/fixtures/exec.json'
import handoff from '../timeline/fixtures/handoff.json'
import think from '../timeline/fixtures/think.json'
import todo from '../timeline/fixtures/todo.json'
import unknownTool from '../timeline/fixtures/unknown-tool.json'
import { fromEntries } from '../timeline/fromEntries'
import type { TimelineItem, ToolItem } from '../timeline/model'
import { applyEvent, emptyLive, type LiveRun } from '../timeline/reduce'

export interface Recorded { runId: string; sessionId: string; events: ServerEvent[]; entries: Entry[] }

function recorded(fx: { events: unknown[]; entries: unknown[] }): Recorded {
  const events = fx.events.map((f) => parseFrame(f) as ServerEvent)
  const first = events[0].payload as { run_id: string; session_id: string }
  return { runId: first.run_id, sessionId: first.session_id, events, entries: fx.entries as Entry[] }
}

export const runs = {
  todo: recorded(todo),
  exec: recorded(exec),
  handoff: recorded(handoff),
  think: recorded(think),
  unknownTool: recorded(unknownTool),
}

/** The timeline a reload draws from the stored entries. */
export const storedItems = (r: Recorded): TimelineItem[] => fromEntries(r.entries)

/** The events up to and including the first that matches (all of them without a match). */
export function eventsThrough(r: Recorded, match: (ev: ServerEvent) => boolean): ServerEvent[] {
  const i = r.events.findIndex(match)
  return i < 0 ? r.events : r.events.slice(0, i + 1)
}

/** The live run after the events given. */
export function liveRun(r: Recorded, events: ServerEvent[] = r.events): LiveRun {
  let state = emptyLive()
  for (const ev of events) state = applyEvent(state, ev).state
  return state.runs[r.runId]
}

/** The tool item of a timeline (the first, or the one named). */
export function toolOf(items: TimelineItem[], name?: string): ToolItem {
  const t = items.find((i): i is ToolItem => i.kind === 'tool' && (!name || i.name === name))
  if (!t) throw new Error(`no tool item${name ? ` named ${name}` : ''}`)
  return t
}
