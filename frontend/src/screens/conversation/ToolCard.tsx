import { useState } from 'react'
import { Icon } from '../../components/Icon'
import { JsonBlock } from '../../components/JsonBlock'
import type { Approval } from '../../lib/api'
import type { ToolItem } from '../../timeline/model'
import { ApprovalControls } from './ApprovalControls'
import { MCPResult, mcpCallOf } from './MCPResult'
import { PatchView } from './PatchView'
import { PlanView } from './PlanView'
import { TerminalOutput } from './TerminalOutput'
import { TodoList } from './TodoList'

/** Renderers this build draws itself; others fall back to the raw result. */
const DRAWN = new Set(['todo', 'terminal', 'plan'])

function status(t: ToolItem, approval?: Approval, live?: boolean) {
  if (approval) return { label: 'Needs approval', tone: 'warn' }
  if (t.output !== undefined) return t.isError ? { label: 'Error', tone: 'error' } : { label: 'Done', tone: 'ok' }
  if (t.needsApproval) return { label: 'Waiting for approval', tone: 'warn' }
  return live ? { label: 'Running', tone: 'run' } : { label: 'No result', tone: 'muted' }
}

/** A tool call and its result, matched by call_id, with the display the tool gave it. */
export function ToolCard({ item, approval, live }: { item: ToolItem; approval?: Approval; live?: boolean }) {
  const [open, setOpen] = useState(false)
  if (item.handoff) {
    return (
      <div className="handoff-note" role="note">
        <Icon name="chevron" size={14} /> {item.display?.title ?? `Handed off (${item.name})`}
      </div>
    )
  }
  const st = status(item, approval, live)
  // What is waiting for a decision is shown, not hidden behind a click.
  const expanded = open || !!approval
  // A plan waiting for approval has no display yet: it is drawn as a plan all the same.
  const renderer = item.display?.renderer ?? (item.name === 'submit_plan' ? 'plan' : undefined)
  // An MCP tool's result carries its server and its parts: drawn as they are, not as raw text.
  const mcp = mcpCallOf(item.display)
  const title = item.display?.title ?? (mcp ? `${mcp.server} · ${mcp.tool}` : item.name || 'Tool result')
  return (
    <div className={`tool-card tone-${st.tone}`} data-tool={item.name} data-call-id={item.callId} data-renderer={renderer} data-mcp-server={mcp?.server}>
      <button className="tool-head" aria-expanded={expanded} onClick={() => setOpen((o) => !o)}>
        <span className={`chev${expanded ? ' open' : ''}`}><Icon name="chevron" size={14} /></span>
        <span className="tool-title" title={title}>{title}</span>
        {item.display?.title && item.name && <code className="tool-name">{item.name}</code>}
        {item.display?.summary && <span className="tool-summary">{item.display.summary}</span>}
        <span className={`pill pill-${st.tone}`}>{st.label}</span>
      </button>
      {renderer === 'todo' && <TodoList todos={item.display?.extra?.todos} args={item.arguments} />}
      {renderer === 'terminal' && <TerminalOutput output={item.output} progress={item.progress} />}
      {renderer === 'plan' && <PlanView extra={item.display?.extra?.plan} args={item.arguments} />}
      {mcp && item.output !== undefined && <MCPResult call={mcp} output={item.output} isError={item.isError} />}
      {expanded && !(renderer === 'plan' && item.output === undefined) && (
        <div className="tool-body">
          {item.name === 'apply_patch' && <PatchView args={item.arguments} />}
          {item.arguments && renderer !== 'plan' && item.name !== 'apply_patch' && <JsonBlock label="Arguments" value={item.arguments} />}
          {renderer !== 'terminal' && item.progress && item.output === undefined && <JsonBlock label="Output so far" value={item.progress} />}
          {mcp?.structured && <JsonBlock label="Structured content" value={mcp.structured} />}
          {renderer !== 'terminal' && !mcp && item.output !== undefined && <JsonBlock label={item.isError ? 'Error' : 'Result'} value={item.output} />}
          {renderer && !DRAWN.has(renderer) && <div className="muted small">renderer: {renderer}</div>}
        </div>
      )}
      {approval && <ApprovalControls approval={approval} />}
    </div>
  )
}

/** A pending approval whose call is not drawn (paged off, or not yet stored). */
export function ApprovalCard({ approval }: { approval: Approval }) {
  return (
    <div className="tool-card tone-warn" data-tool={approval.tool_name} data-call-id={approval.tool_call_id}>
      <div className="tool-head static">
        <span className="tool-title">{approval.tool_name}</span>
        <span className="pill pill-warn">Needs approval</span>
      </div>
      {approval.tool_name === 'submit_plan'
        ? <PlanView args={approval.arguments} />
        : <div className="tool-body"><JsonBlock label="Arguments" value={approval.arguments} /></div>}
      <ApprovalControls approval={approval} />
    </div>
  )
}
