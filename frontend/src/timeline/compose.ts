// One timeline from the stored transcript and the session's live runs. A
// live run held from its start replaces its stored entries (so a reload
// mid-run shows each item once); a run joined midway adds to them.
import type { NoteItem, TimelineItem } from './model'
import { callKey, keyByRun } from './keys'
import type { LiveRun } from './reduce'

export function composeTimeline(stored: TimelineItem[], runs: LiveRun[], settledNotes: NoteItem[] = []): TimelineItem[] {
  const whole = new Set(runs.filter((r) => r.fromStart).map((r) => r.runId))
  let out = keyByRun(whole.size ? stored.filter((i) => !i.runId || !whole.has(i.runId)) : stored)
  for (const run of runs) {
    let items = run.fromStart ? keyByRun(run.items) : run.items
    if (!run.fromStart) {
      // A result whose call is already on screen completes that card.
      items = items.filter((it) => {
        if (it.kind !== 'tool' || !it.orphan) return true
        const i = out.findIndex((o) => o.kind === 'tool' && callKey(o.runId, o.callId) === callKey(it.runId, it.callId))
        if (i < 0) return true
        const o = out[i]
        if (o.kind === 'tool') out[i] = { ...o, output: it.output, isError: it.isError, display: it.display ?? o.display }
        return false
      })
    }
    out = out.concat(items, run.notes)
  }
  // A run whose ending the store already holds needs no live copy of it.
  const storedEnding = new Set(stored.filter((i) => i.kind === 'note' && i.ending).map((i) => i.runId))
  for (const note of settledNotes) {
    if (note.ending && storedEnding.has(note.runId)) continue
    let at = -1
    for (let i = out.length - 1; i >= 0; i--) {
      if (out[i].runId === note.runId) {
        at = i
        break
      }
    }
    // Nothing of its run is on screen: the run is on another branch (a
    // stop, then an edit) or off the loaded page, and so is its ending.
    if (at >= 0) out.splice(at + 1, 0, note)
  }
  return out
}
