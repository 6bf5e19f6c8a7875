// What the live region says about a run as its events arrive: the answer is
// finished, an approval waits (and for which tool), it failed or stopped.
// Only the conversation's own runs speak (a background task reports through
// its task list), and a replayed event, which changes nothing, says nothing.
import type { ServerEvent } from '../lib/events'
import { runIdOf } from '../lib/events'
import type { LiveState } from './reduce'

export function announcementOf(before: LiveState, after: LiveState, ev: ServerEvent): string | null {
  const runId = runIdOf(ev)
  if (!runId) return null
  const run = after.runs[runId]
  if (!run || run === before.runs[runId] || run.task) return null
  switch (ev.type) {
    case 'run.output':
      return 'Answer finished'
    case 'run.interrupted': {
      const waiting = run.items.flatMap((i) => (i.kind === 'tool' && i.needsApproval && i.output === undefined ? [i.name] : []))
      return waiting.length ? `Approval requested: ${[...new Set(waiting)].join(', ')}` : 'Approval requested'
    }
    case 'run.error': {
      const p = ev.payload as { message?: string }
      return `The run failed${p.message ? `: ${p.message}` : ''}`
    }
    case 'run.cancelled':
      return 'Answer stopped'
  }
  return null
}
