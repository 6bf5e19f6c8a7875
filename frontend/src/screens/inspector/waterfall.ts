// Spans → waterfall rows: grouped per run, ordered as a tree (parents before
// children, siblings by start), each with its offset and width on the run's
// time axis.
import type { Span } from '../../lib/api'

export interface Row { span: Span; depth: number; left: number; width: number }
export interface TraceGroup { runId: string; start: number; durationMs: number; rows: Row[] }

export function waterfall(spans: Span[]): TraceGroup[] {
  const byRun = new Map<string, Span[]>()
  for (const s of spans) {
    const list = byRun.get(s.trace_id || s.run_id) ?? []
    list.push(s)
    byRun.set(s.trace_id || s.run_id, list)
  }
  const groups: TraceGroup[] = []
  for (const [runId, list] of byRun) {
    const t = (s: Span) => Date.parse(s.started_at)
    const start = Math.min(...list.map(t))
    const end = Math.max(...list.map((s) => Math.max(Date.parse(s.ended_at), t(s) + s.duration_ms)))
    const total = Math.max(1, end - start)
    const ids = new Set(list.map((s) => s.span_id))
    const children = new Map<string, Span[]>()
    for (const s of list) {
      const parent = s.parent_id && ids.has(s.parent_id) ? s.parent_id : ''
      children.set(parent, [...(children.get(parent) ?? []), s])
    }
    const rows: Row[] = []
    const walk = (parent: string, depth: number) => {
      for (const s of (children.get(parent) ?? []).sort((a, b) => t(a) - t(b))) {
        rows.push({ span: s, depth, left: ((t(s) - start) / total) * 100, width: Math.max(0.6, (s.duration_ms / total) * 100) })
        walk(s.span_id, depth + 1)
      }
    }
    walk('', 0)
    groups.push({ runId, start, durationMs: end - start, rows })
  }
  return groups.sort((a, b) => a.start - b.start)
}

export type SpanOutcome = 'ok' | 'error' | 'cancelled'

/**
 * How a span ended. A stop cancels the model call in flight, and the call
 * records the cancellation as its error ("context canceled"): that is the
 * person's choice, not a failure, so it is told apart from real errors.
 */
export function spanOutcome(span: Pick<Span, 'error'>, runStatus?: string): SpanOutcome {
  if (!span.error) return 'ok'
  if (/\bcancel(?:l)?ed\b|\bcancellation\b/i.test(span.error)) return 'cancelled'
  if (runStatus === 'cancelled' && /\bcontext\b/i.test(span.error)) return 'cancelled'
  return 'error'
}
