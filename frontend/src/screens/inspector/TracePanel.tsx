import { useQuery } from '@tanstack/react-query'
import { useMemo, useState } from 'react'
import { JsonBlock } from '../../components/JsonBlock'
import { api, errorText, ok } from '../../lib/api'
import { UsageFacts } from '../usage/UsageFacts'
import type { UsageTotals } from '../../lib/usage'
import { useSessionRuns, useTraces } from '../../lib/queries'
import { spanOutcome, waterfall } from './waterfall'

const ms = (n: number) => (n < 1000 ? `${n} ms` : `${(n / 1000).toFixed(n < 10_000 ? 2 : 1)} s`)

const tones: Record<string, string> = { running: 'run', interrupted: 'warn', error: 'error', cancelled: 'muted' }

/** How a run stands, when it did not simply complete. */
function RunStatus({ status, code }: { status?: string; code?: string }) {
  if (!status || status === 'completed') return null
  return <span className={`pill pill-${tones[status] ?? 'muted'}`} title={code}>{status}</span>
}

/** Every run's spans as a waterfall; a span's payload is fetched when it is opened. */
export function TracePanel({ sessionId }: { sessionId: string }) {
  const traces = useTraces(sessionId)
  const runs = useSessionRuns(sessionId)
  const [open, setOpen] = useState<string | null>(null)
  const groups = useMemo(() => waterfall(traces.data ?? []), [traces.data])
  const byRun = useMemo(() => new Map((runs.data ?? []).map((r) => [r.run_id, r])), [runs.data])

  if (traces.isLoading) return <p className="muted pad">Loading traces…</p>
  if (traces.isError) return <p className="error-text pad">{errorText(traces.error)}</p>
  if (!groups.length) return <p className="muted pad">No traces yet. Each run records its model calls and tool calls here.</p>
  return (
    <div className="traces">
      {groups.map((g) => (
        <section key={g.runId} className="trace-group">
          <h3 className="trace-run">
            <span className="trace-q" title={byRun.get(g.runId)?.question || g.runId}>{byRun.get(g.runId)?.question || (byRun.has(g.runId) ? '(regenerated)' : `Run ${g.runId.slice(-6)}`)}</span>
            <RunStatus status={byRun.get(g.runId)?.status} code={byRun.get(g.runId)?.error_code} />
            <span className="muted small">{ms(g.durationMs)}</span>
          </h3>
          <RunUsage usage={byRun.get(g.runId)?.usage} />
          <ul className="waterfall">
            {g.rows.map((r) => {
              const outcome = spanOutcome(r.span, byRun.get(g.runId)?.status)
              return (
              <li key={r.span.span_id}>
                <button className={`span-row${open === r.span.span_id ? ' open' : ''}${outcome !== 'ok' ? ` has-${outcome}` : ''}`} aria-expanded={open === r.span.span_id}
                  data-outcome={outcome} onClick={() => setOpen(open === r.span.span_id ? null : r.span.span_id)}>
                  <span className="span-label" style={{ paddingLeft: r.depth * 12 }}>
                    <span className={`kind kind-${r.span.kind}`}>{r.span.kind}</span> {r.span.name}
                    {outcome === 'cancelled' && <span className="span-outcome">cancelled</span>}
                    {outcome === 'error' && <span className="visually-hidden"> (failed)</span>}
                  </span>
                  <span className="span-track">
                    <span className={`span-bar kind-${r.span.kind}`} style={{ left: `${r.left}%`, width: `${r.width}%` }} />
                  </span>
                  <span className="span-ms">{ms(r.span.duration_ms)}</span>
                </button>
                {open === r.span.span_id && <SpanDetail sessionId={sessionId} spanId={r.span.span_id} cancelled={outcome === 'cancelled'} />}
              </li>
              )
            })}
          </ul>
        </section>
      ))}
    </div>
  )
}

/** A run's tokens and cost, as the conversation's run list reports them. */
function RunUsage({ usage }: { usage?: UsageTotals }) {
  if (!usage || !usage.calls) return null
  return <div className="trace-usage"><UsageFacts usage={usage} label="This run's usage" /></div>
}

function SpanDetail({ sessionId, spanId, cancelled }: { sessionId: string; spanId: string; cancelled: boolean }) {
  const span = useQuery({
    queryKey: ['span', sessionId, spanId],
    queryFn: () => ok(api.GET('/api/v1/sessions/{id}/traces/{span_id}', { params: { path: { id: sessionId, span_id: spanId } } })),
    staleTime: Infinity,
  })
  if (span.isLoading) return <div className="span-detail muted">Loading the span…</div>
  if (span.isError) return <div className="span-detail error-text">{errorText(span.error)}</div>
  const s = span.data!
  const data = (s.data ?? {}) as Record<string, unknown>
  const known = ['system_instructions', 'input', 'output', 'tools', 'arguments'] as const
  const rest = Object.fromEntries(Object.entries(data).filter(([k]) => !(known as readonly string[]).includes(k)))
  return (
    <div className="span-detail" data-span-id={s.span_id}>
      {s.error && (cancelled ? <p className="cancelled-text">Cancelled: {s.error}</p> : <p className="error-text">{s.error}</p>)}
      <JsonBlock label="Meta" value={s.meta} />
      {typeof data.system_instructions === 'string' && data.system_instructions && <JsonBlock label="Instructions" value={data.system_instructions} />}
      {data.input !== undefined && <JsonBlock label="Input" value={data.input} />}
      {data.arguments !== undefined && <JsonBlock label="Arguments" value={data.arguments} />}
      {data.output !== undefined && <JsonBlock label="Output" value={data.output} />}
      {Array.isArray(data.tools) && data.tools.length > 0 && (
        <details><summary>{data.tools.length} tool definitions</summary><JsonBlock value={data.tools} /></details>
      )}
      {Object.keys(rest).length > 0 && <JsonBlock label="More" value={rest} />}
      {s.payload_omitted && <p className="muted small">The payload was not stored (trace_include_sensitive_data is off, or it was too large).</p>}
    </div>
  )
}
