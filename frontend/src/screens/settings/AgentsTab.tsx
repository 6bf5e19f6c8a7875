import { useState } from 'react'
import { Avatar } from '../../components/Avatar'
import type { Agent } from '../../lib/api'
import { useAgents } from '../../lib/queries'
import { AgentForm } from './AgentForm'
import { ScopeButton } from './ScopeButton'

export function AgentsTab() {
  const agents = useAgents()
  const [editing, setEditing] = useState<Agent | 'new' | null>(null)
  if (editing) return <AgentForm key={editing === 'new' ? 'new' : editing.id} agent={editing === 'new' ? undefined : editing} onDone={() => setEditing(null)} />
  return (
    <div className="tab-page">
      <div className="tab-intro">
        <p className="muted">An agent is a model on a provider, with instructions, tools and the rules it runs by.</p>
        <button className="btn btn-primary" onClick={() => setEditing('new')}>New agent</button>
      </div>
      {agents.data?.length === 0 && <p className="empty muted">No agents yet.</p>}
      <ul className="rows">
        {agents.data?.map((a) => (
          <li key={a.id} className="row">
            <Avatar agent={a} size={32} />
            <div className="row-main">
              <b>{a.name}</b> <span className="pill">{a.scope}</span>
              <div className="muted small">{a.model || 'no model'}{a.description ? ` · ${a.description}` : ''}</div>
            </div>
            <ScopeButton kind="agents" id={a.id} scope={a.scope} />
            <button className="btn btn-ghost btn-sm" onClick={() => setEditing(a)}>Edit</button>
          </li>
        ))}
      </ul>
    </div>
  )
}
