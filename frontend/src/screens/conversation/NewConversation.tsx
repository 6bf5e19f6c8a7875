import { useQueryClient } from '@tanstack/react-query'
import { useState } from 'react'
import { Avatar } from '../../components/Avatar'
import { api, errorText, ok } from '../../lib/api'
import { notify } from '../../lib/notices'
import { keys, useAgents } from '../../lib/queries'
import { navigate, sessionPath } from '../../lib/router'
import { startRun } from './actions'
import { Composer } from './Composer'
import { ProjectPicker } from './ProjectPicker'

const LAST_AGENT = 'agents.lastAgent'

/** The start screen: pick an agent and write; the conversation is created with the first message. */
export function NewConversation() {
  const qc = useQueryClient()
  const agents = useAgents()
  const [choice, setChoice] = useState<string | null>(null)
  const [plan, setPlan] = useState(false)
  const [projectId, setProjectId] = useState('')
  const list = agents.data ?? []
  const saved = localStorage.getItem(LAST_AGENT)
  const agentId = choice ?? (list.some((a) => a.id === saved) ? saved! : list[0]?.id ?? '')
  const agent = list.find((a) => a.id === agentId)

  async function send(text: string, attachmentIds: string[], o: { plan?: boolean } = {}) {
    try {
      const s = await ok(api.POST('/api/v1/sessions', { body: { agent_config_id: agentId } }))
      localStorage.setItem(LAST_AGENT, agentId)
      qc.setQueryData(keys.session(s.id), s)
      await startRun(s.id, text, { ...(plan || o.plan ? { plan: true } : {}), ...(projectId ? { projectId } : {}), attachmentIds })
      // The run set the session's planning phase and maybe its project.
      qc.invalidateQueries({ queryKey: keys.session(s.id) })
      qc.invalidateQueries({ queryKey: keys.sessions })
      navigate(sessionPath(s.id))
      return true
    } catch (e) {
      notify(errorText(e))
      return false
    }
  }

  return (
    <section className="conversation new-conversation" aria-label="New conversation">
      <div className="timeline">
        <div className="empty-state">
          {agent ? <Avatar agent={agent} size={56} /> : <img src="/favicon.svg" alt="" width={56} height={56} />}
          <h2>{agent ? `Chat with ${agent.name}` : 'Welcome to agents-server'}</h2>
          {agent?.description && <p className="muted">{agent.description}</p>}
          {agents.isSuccess && !list.length && (
            <p className="muted">
              No agents yet. Add a provider and an agent in <a href="/settings/providers" onClick={(e) => { e.preventDefault(); navigate('/settings/providers') }}>Settings</a> to start.
            </p>
          )}
        </div>
      </div>
      <Composer agents={list} agentId={agentId} onAgent={setChoice} plan={plan} onPlan={setPlan} onSend={send} autoFocus
        project={<ProjectPicker value={projectId} onChange={setProjectId} />} />
    </section>
  )
}
