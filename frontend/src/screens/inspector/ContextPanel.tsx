import { useQueryClient } from '@tanstack/react-query'
import { useState } from 'react'
import { api, errorText, ok } from '../../lib/api'
import { keys, refresh, useAgents, useContextReport, useSession } from '../../lib/queries'
import { navigate } from '../../lib/router'
import { useLiveSession } from '../../live/store'
import { UsageFacts } from '../usage/UsageFacts'

/** One MCP server's tool definitions, asked live (unavailable: it could not answer within 2 s). */
interface MCPLine { server: string; chars: number; unavailable?: boolean }
interface Prompt { agent?: string; layers?: Record<string, number>; tools?: Record<string, number | string>; mcp?: MCPLine[] }

const fmt = (n: number) => n.toLocaleString()
const layerNames: Record<string, string> = { instructions: 'Instructions', global_prompt: 'Global prompt', memory: 'Memories', skills_index: 'Skills index' }
/** Tool origins whose key says too little: skills is the one read_skill tool. */
const toolNames: Record<string, string> = { skills: 'read_skill' }

/** What occupies the model's window: the last call's input over the declared window, and what it is made of. */
export function ContextPanel({ sessionId }: { sessionId: string }) {
  const ctx = useContextReport(sessionId)
  const live = useLiveSession(sessionId)
  const session = useSession(sessionId)
  const agents = useAgents()
  const agent = agents.data?.find((a) => a.id === session.data?.agent_config_id)
  const busy = live.runs.some((r) => r.status === 'running' || r.status === 'interrupted')
  if (ctx.isLoading) return <p className="muted pad">Loading…</p>
  if (ctx.isError) return <p className="error-text pad">{errorText(ctx.error)}</p>
  const c = ctx.data!
  const prompt = (c.prompt ?? null) as Prompt | null
  const usage = c.usage
  const layers = Object.entries(prompt?.layers ?? {})
  const tools = Object.entries(prompt?.tools ?? {})
  const mcp = prompt?.mcp ?? []
  const promptTokens = [...layers, ...tools].reduce((n, [, v]) => n + (typeof v === 'number' ? v / 4 : 0), 0) +
    mcp.reduce((n, m) => n + m.chars / 4, 0)
  const parts = [
    { key: 'prompt', label: 'Prompt and tools (≈ chars / 4)', tokens: Math.round(promptTokens) },
    { key: 'conversation', label: 'Conversation', tokens: c.conversation_tokens },
  ]
  const window = c.context_window
  const total = Math.max(1, parts.reduce((n, p) => n + p.tokens, 0))
  // After a fold the last call's count no longer describes the context
  // (the server resets it): until the next call, the estimate stands in.
  const estimated = c.input_tokens === 0 && c.conversation_tokens > 0
  const now = estimated ? parts.reduce((n, p) => n + p.tokens, 0) : c.input_tokens
  const pct = window ? Math.min(100, (now / window) * 100) : 0
  const what = estimated ? 'tokens now, estimated: the next call measures it' : 'tokens in the last call'

  return (
    <div className="context-panel">
      <CompactNow sessionId={sessionId} busy={busy} off={agent && !agent.compaction.compaction_enabled ? agent.name : undefined} />
      <div className="ctx-headline">
        <span className="ctx-big">{estimated ? `≈ ${fmt(now)}` : fmt(now)}</span>
        <span className="muted">{window ? ` of ${fmt(window)} ${what} (${pct.toFixed(pct < 10 ? 1 : 0)}%)` : ` ${what} (no window declared)`}</span>
      </div>
      {window > 0 && (
        <div className="ctx-bar" role="img" aria-label={`The last call used ${pct.toFixed(1)}% of the window`}>
          <span className={`ctx-seg seg-used${pct > 85 ? ' seg-high' : ''}`} style={{ width: `${Math.max(pct, 0.5)}%` }} />
        </div>
      )}
      <div className="muted small">What fills it</div>
      <div className="ctx-bar" role="img" aria-label="Prompt and conversation">
        {parts.map((p) => (
          <span key={p.key} className={`ctx-seg seg-${p.key}`} style={{ width: `${(p.tokens / total) * 100}%` }} title={`${p.label}: ${fmt(p.tokens)}`} />
        ))}
      </div>
      <ul className="ctx-legend">
        {parts.map((p) => (
          <li key={p.key}><span className={`swatch seg-${p.key}`} />{p.label}<span className="grow" />{fmt(p.tokens)}</li>
        ))}
      </ul>
      <dl className="ctx-facts">
        <Fact term="Sent in the last call" help="The provider's count of the last call's input" value={c.input_tokens} />
        <Fact term="Cached" help="Of that, what the provider read from its cache" value={c.cached_tokens} />
        <Fact term="Conversation" help="The history the model still sees (characters / 4)" value={c.conversation_tokens} />
        <Fact term="Toward compaction" help="What the compaction threshold is compared with: the last call plus what came after" value={c.compaction_tokens} />
        <Fact term="Every call, summed" help="Input of every call so far; re-sent history counts each time" value={c.session_input_tokens} />
      </dl>
      {usage && (
        <>
          <h3 className="ctx-h">Cost of this conversation <span className="muted small">(every call)</span></h3>
          <UsageFacts usage={usage} label="Cost of this conversation" />
        </>
      )}
      {prompt ? (
        <>
          <h3 className="ctx-h">Prompt layers{prompt.agent ? ` — ${prompt.agent}` : ''} <span className="muted small">(characters)</span></h3>
          <ul className="ctx-list">
            {layers.map(([k, v]) => <li key={k}><span>{layerNames[k] ?? k}</span><span>{fmt(v)}</span></li>)}
          </ul>
          <h3 className="ctx-h">Tools by origin <span className="muted small">(characters)</span></h3>
          <ul className="ctx-list">
            {tools.length || mcp.length ? tools.map(([k, v]) => <li key={k}><span>{toolNames[k] ?? k}</span><span>{typeof v === 'number' ? fmt(v) : String(v)}</span></li>) : <li className="muted">none</li>}
            {mcp.map((m) => (
              <li key={`mcp:${m.server}`}>
                <span>mcp · {m.server}</span>
                <span className={m.unavailable ? 'warn-text' : undefined}>{m.unavailable ? 'unavailable' : fmt(m.chars)}</span>
              </li>
            ))}
          </ul>
        </>
      ) : (
        <p className="muted small">The prompt breakdown appears after the first run.</p>
      )}
    </div>
  )
}

/** One figure of the report, its plain name and a line of what it counts. */
function Fact({ term, help, value }: { term: string; help: string; value: number }) {
  return (
    <div>
      <dt>{term}<span className="ctx-help">{help}</span></dt>
      <dd>{fmt(value)}</dd>
    </div>
  )
}

/**
 * "Compact now": one forced pass (POST /sessions/:id/compact). The server
 * refuses while a run holds the session, so the button waits for it too;
 * with the agent's compaction off (off: its name) it says so and where to
 * turn it on, rather than be refused.
 */
function CompactNow({ sessionId, busy, off }: { sessionId: string; busy: boolean; off?: string }) {
  const qc = useQueryClient()
  const [pending, setPending] = useState(false)
  const [result, setResult] = useState<{ tone: 'ok' | 'error'; text: string } | null>(null)

  async function compact() {
    setPending(true)
    setResult(null)
    try {
      const r = await ok(api.POST('/api/v1/sessions/{id}/compact', { params: { path: { id: sessionId } } }))
      if (r.compacted) await Promise.all([refresh(qc, keys.context(sessionId)), refresh(qc, keys.messages(sessionId))])
      setResult(r.compacted ? { tone: 'ok', text: 'Compacted: the older history is now a summary.' } : { tone: 'ok', text: 'Nothing to fold yet.' })
    } catch (e) {
      setResult({ tone: 'error', text: errorText(e) })
    } finally {
      setPending(false)
    }
  }

  return (
    <div className="ctx-compact">
      <button className="btn btn-sm" disabled={busy || pending || !!off} onClick={() => void compact()} aria-describedby={off ? 'compact-off' : undefined}
        title={busy ? 'Wait for the run to end: it compacts at its own turn boundaries' : 'Fold the older history into a summary now'}>
        {pending ? 'Compacting…' : 'Compact now'}
      </button>
      {off && (
        <span id="compact-off" className="muted small">
          Compaction is off for {off}: turn on “Fold old history” in{' '}
          <a href="/settings/agents" onClick={(e) => { e.preventDefault(); navigate('/settings/agents') }}>its settings</a>.
        </span>
      )}
      {result && <span className={result.tone === 'error' ? 'error-text small' : 'muted small'} role="status">{result.text}</span>}
    </div>
  )
}
