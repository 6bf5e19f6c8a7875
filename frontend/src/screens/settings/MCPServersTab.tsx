import { useState } from 'react'
import { errorText, type MCPServer } from '../../lib/api'
import { useMCPServers } from '../../lib/mcpServers'
import { useMe } from '../../lib/queries'
import { MCPServerForm } from './MCPServerForm'
import { MCPServerRow, type MCPRights } from './MCPServerRow'
import { useOwnProjects } from './MCPStdioFields'

/** MCP servers lend agents their tools. Each row shows its live status; the list is polled while one settles. */
export function MCPServersTab() {
  const me = useMe()
  const admin = me.data?.role === 'admin'
  const servers = useMCPServers()
  const [editing, setEditing] = useState<MCPServer | 'new' | null>(null)
  const rights = (s: MCPServer): MCPRights => {
    const own = s.owner_id === me.data?.id
    return { edit: own || (s.scope === 'global' && admin), remove: own || admin }
  }
  // A stdio server that runs in a project names it: the caller's projects are asked only then.
  const projects = useOwnProjects(!!servers.data?.some((s) => s.config.project_id))
  const projectNames = new Map(projects.map((p) => [p.id, p.name]))
  const live = editing && editing !== 'new' ? servers.data?.find((s) => s.id === editing.id) : undefined
  return (
    <div className="tab-page">
      <div className="tab-intro">
        <p className="muted">
          An MCP server lends agents its tools, over streamable HTTP or as a local program the workbench starts (stdio). Its tools are named <code>server__tool</code>; an agent uses the ones its form selects.
        </p>
        <button className="btn btn-primary" onClick={() => setEditing('new')}>Add MCP server</button>
      </div>
      {editing && (
        <MCPServerForm key={editing === 'new' ? 'new' : editing.id} server={editing === 'new' ? undefined : editing} live={live} admin={admin}
          onDone={() => setEditing(null)} />
      )}
      {servers.isError && <p className="error-text" role="alert">{errorText(servers.error)}</p>}
      {servers.data?.length === 0 && !editing && <p className="empty muted">No MCP servers yet. Add one with its endpoint or the program that runs it.</p>}
      <ul className="rows" aria-label="MCP servers">
        {servers.data?.map((s) => <MCPServerRow key={s.id} server={s} rights={rights(s)} projectNames={projectNames} onEdit={() => setEditing(s)} />)}
      </ul>
    </div>
  )
}
