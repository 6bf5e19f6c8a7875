import { useId } from 'react'
import type { MCPServer, MCPTool } from '../../lib/api'
import { splitToolName, statusPill, useMCPServers } from '../../lib/mcpServers'
import { HINTS_DISCLAIMER, MCPToolHints } from './MCPToolHints'

/** A tool to offer: one a connected server lists, or a selected name nothing offers right now (kept, so a save does not drop it). */
interface Choice { name: string; tool?: MCPTool; unavailable?: string }
interface Group { server: string; row?: MCPServer; choices: Choice[] }

/**
 * The MCP servers whose tools an agent may select, and how they stand: its
 * owner's private ones (for a private agent) and the global ones. Selected
 * names with no tool behind them now — a server not connected, a tool it
 * stopped offering, a server gone — stay listed, checked and marked.
 */
export function groupsFor(servers: MCPServer[], selected: string[], agent: { scope: 'private' | 'global'; ownerId: string }): Group[] {
  const usable = servers.filter((s) => s.scope === 'global' || (agent.scope === 'private' && s.owner_id === agent.ownerId))
  const groups: Group[] = usable.map((row) => ({
    server: row.name, row,
    choices: row.status === 'connected' ? row.tools.map((tool) => ({ name: tool.name, tool })) : [],
  }))
  for (const name of selected) {
    const split = splitToolName(name)
    if (!split) continue
    let g = groups.find((x) => x.server.toLowerCase() === split.server.toLowerCase())
    if (g?.choices.some((c) => c.name === name)) continue
    if (!g) {
      g = { server: split.server, choices: [] }
      groups.push(g)
    }
    const why = !g.row
      ? 'no MCP server of that name is available to this agent'
      : g.row.status === 'connected'
        ? 'the server no longer offers this tool'
        : `the server is ${statusPill(g.row.status).label}${g.row.last_error ? `: ${g.row.last_error}` : ''}`
    g.choices.push({ name, unavailable: why })
  }
  return groups
}

interface Props {
  /** Every tool name the agent selects (built-in ones included; they are left alone). */
  selected: string[]
  agent: { scope: 'private' | 'global'; ownerId: string }
  /** Messages about selected names, by name. */
  errors: Record<string, string>
  onChange: (names: string[]) => void
}

export function MCPToolPicker({ selected, agent, errors, onChange }: Props) {
  const servers = useMCPServers()
  const base = useId()
  const groups = groupsFor(servers.data ?? [], selected, agent)
  const toggle = (name: string, on: boolean) => onChange(on ? [...selected, name] : selected.filter((n) => n !== name))
  return (
    <div className="mcp-picker" role="group" aria-label="MCP tools">
      <p className="muted small">{HINTS_DISCLAIMER}</p>
      {servers.isSuccess && !groups.length && <p className="muted small">No MCP servers this agent may use yet: add one in Settings → MCP servers.</p>}
      {groups.map((g) => {
        const pill = g.row ? statusPill(g.row.status) : undefined
        return (
          <fieldset key={g.server} className="mcp-picker-server" aria-label={`Tools of ${g.server}`} data-mcp-server={g.server}>
            <legend>{g.server} {pill && <span className={`pill pill-${pill.tone}`}>{pill.label}</span>}</legend>
            {g.row && g.row.status !== 'connected' && !g.choices.length && (
              g.row.config.per_person_auth && g.row.status === 'needs_auth'
                ? <p className="muted small">Each person signs in to it with their own account: sign in under Settings → MCP servers to list its tools. A run uses the sign-in of the person it runs for.</p>
                : <p className="muted small">Not connected: its tools are listed once it is.{g.row.last_error && <><br />Last error: {g.row.last_error}</>}</p>
            )}
            {g.row?.status === 'connected' && !g.row.tools.length && <p className="muted small">It offers no tools.</p>}
            {g.choices.map((c, i) => {
              const id = `${base}-${g.server}-${i}`
              const about = c.unavailable ?? [c.tool?.title && c.tool.title !== c.tool.tool ? c.tool.title : '', c.tool?.description ?? ''].filter(Boolean).join(': ')
              return (
                <div key={c.name} className={`mcp-tool-choice${c.unavailable ? ' unavailable' : ''}`}>
                  <input id={id} type="checkbox" checked={selected.includes(c.name)} aria-describedby={about ? `${id}-about` : undefined}
                    onChange={(e) => toggle(c.name, e.target.checked)} />
                  <span>
                    <label htmlFor={id}><code>{c.name}</code></label>
                    {c.unavailable && <> <span className="pill pill-warn">unavailable</span></>}
                    {c.tool && <> <MCPToolHints hints={c.tool.annotations} /></>}
                  </span>
                  {about && <div id={`${id}-about`} className="muted small clamp">{about}</div>}
                  {errors[c.name] && <small className="error-text" role="alert">{errors[c.name]}</small>}
                </div>
              )
            })}
          </fieldset>
        )
      })}
    </div>
  )
}
