import { useQueryClient } from '@tanstack/react-query'
import { useState } from 'react'
import { Avatar } from '../../components/Avatar'
import { api, errorText, ok } from '../../lib/api'
import { notify } from '../../lib/notices'
import { keys, useAgents, useWorkflows } from '../../lib/queries'
import { navigate, sessionPath } from '../../lib/router'
import { startWorkflow } from '../workflows/actions'
import { startRun } from './actions'
import { Composer } from './Composer'
import { Onboarding } from './Onboarding'
import { needsOnboarding } from './firstChat'
import { ProjectPicker } from './ProjectPicker'
import { at } from '../../lib/base'

const LAST_AGENT = 'agents.lastAgent'

/** The start screen: pick an agent and write; the conversation is created with the first message. */
export function NewConversation() {
  const qc = useQueryClient()
  const agents = useAgents()
  const workflows = useWorkflows()
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

  /** /workflow here: the conversation is made first (with the chosen agent, for what follows), then the workflow starts into it. */
  async function runWorkflow(workflowId: string, brief: string) {
    const s = await ok(api.POST('/api/v1/sessions', { body: { agent_config_id: agentId } }))
    localStorage.setItem(LAST_AGENT, agentId)
    qc.setQueryData(keys.session(s.id), s)
    try {
      await startWorkflow(qc, workflowId, s.id, brief, projectId || undefined)
    } catch (e) {
      // A conversation made for nothing is not left behind.
      await ok(api.DELETE('/api/v1/sessions/{id}', { params: { path: { id: s.id } } })).catch(() => {})
      throw e
    }
    qc.invalidateQueries({ queryKey: keys.sessions })
    navigate(sessionPath(s.id))
  }

  // Nothing to chat with yet: the first-run screen makes the first agent.
  if (needsOnboarding(agents.data)) return <Onboarding />

  return (
    <section className="conversation new-conversation" aria-label="New conversation">
      <div className="timeline">
        <div className="empty-state">
          {agent ? <Avatar agent={agent} size={56} /> : <img src={at('/favicon.svg')} alt="" width={56} height={56} />}
          <h2>{agent ? `Chat with ${agent.name}` : 'Welcome to agents-server'}</h2>
          {agent?.description && <p className="muted">{agent.description}</p>}
        </div>
      </div>
      <Composer agents={list} agentId={agentId} onAgent={setChoice} plan={plan} onPlan={setPlan} onSend={send} autoFocus
        workflows={workflows.data} onStartWorkflow={agentId ? runWorkflow : undefined}
        project={<ProjectPicker value={projectId} onChange={setProjectId} />} />
    </section>
  )
}
