import type { TimelineItem } from './model'

// Items of a run are keyed by their place in it, the same live and stored,
// so the hand-over to the stored transcript keeps every component (an
// expanded card stays expanded) instead of remounting the conversation.
export function keyByRun(items: TimelineItem[]): TimelineItem[] {
  const n = new Map<string, number>()
  return items.map((it) => {
    if (!it.runId || (it.kind === 'note' && !it.entryId)) return it
    const i = n.get(it.runId) ?? 0
    n.set(it.runId, i + 1)
    const key = `${it.runId}#${i}`
    return it.key === key ? it : { ...it, key }
  })
}


/**
 * A tool call's identity: its run and its call id. A call id alone is not
 * unique — a provider may number every answer's calls from call_1 — so an
 * approval or a result is matched to the call of its own run.
 */
export function callKey(runId: string | undefined, callId: string): string {
  return `${runId ?? ''}:${callId}`
}
