import { useQueryClient } from '@tanstack/react-query'
import { useEffect, useMemo, useState } from 'react'
import { Avatar } from '../../components/Avatar'
import { Icon } from '../../components/Icon'
import { errorText } from '../../lib/api'
import { useBusStatus } from '../../lib/bus'
import { notify } from '../../lib/notices'
import { keys, useAgents, useApprovals, useMessages, useSession, useSessionTasks, useWorkflows } from '../../lib/queries'
import { navigate } from '../../lib/router'
import { inDialog, isTyping } from '../../lib/shortcuts'
import { useLiveSession } from '../../live/store'
import { composeTimeline } from '../../timeline/compose'
import { fromEntries } from '../../timeline/fromEntries'
import { TasksContext, type ConversationTasks } from '../tasks/TaskContext'
import { TaskList } from '../tasks/TaskList'
import { startWorkflow } from '../workflows/actions'
import { cancelRun, startRun, steer } from './actions'
import { Composer } from './Composer'
import { useMessageTarget } from './messageTarget'
import { ExportMenu } from './ExportMenu'
import { ModelPicker } from './ModelPicker'
import { ProjectChip, ProjectPicker, ProjectTerminalButton } from './ProjectPicker'
import { Timeline } from './Timeline'

interface Props { sessionId: string; inspectorOpen: boolean; onToggleInspector: () => void }

export function Conversation({ sessionId, inspectorOpen, onToggleInspector }: Props) {
  const qc = useQueryClient()
  const session = useSession(sessionId)
  const messages = useMessages(sessionId)
  const approvals = useApprovals(sessionId)
  const tasks = useSessionTasks(sessionId)
  const agents = useAgents()
  const workflows = useWorkflows()
  const live = useLiveSession(sessionId)
  const busStatus = useBusStatus()
  const [agentChoice, setAgentChoice] = useState<string | null>(null)
  const [modelChoice, setModelChoice] = useState('')
  const [planChoice, setPlanChoice] = useState<boolean | null>(null)
  const [projectChoice, setProjectChoice] = useState('')

  const entries = useMemo(() => (messages.data ? messages.data.pages.slice().reverse().flat() : []), [messages.data])
  const stored = useMemo(() => fromEntries(entries), [entries])
  const target = useMessageTarget(sessionId, messages, entries)
  const items = useMemo(() => composeTimeline(stored, live.runs, live.notes), [stored, live])
  const liveRun = live.runs.find((r) => r.status === 'running' || r.status === 'interrupted')
  const taskList = useMemo(() => tasks.data ?? [], [tasks.data])
  const conversationTasks = useMemo<ConversationTasks>(() => ({ sessionId, byId: new Map(taskList.map((t) => [t.task_id, t])) }), [sessionId, taskList])

  const agentList = agents.data ?? []
  const agentId = agentChoice ?? session.data?.agent_config_id ?? agentList[0]?.id ?? ''
  // While a run is live its current agent (after a handoff, the new one) answers.
  const agent = (liveRun?.agentName && agentList.find((a) => a.name === liveRun.agentName)) || agentList.find((a) => a.id === agentId)
  const planning = session.data?.planning ?? false
  const plan = planChoice ?? planning
  const boundProject = session.data?.project_id
  const runOptions = {
    agentId: agentId && agentId !== session.data?.agent_config_id ? agentId : undefined,
    plan: plan !== planning ? plan : undefined,
    projectId: !boundProject && projectChoice ? projectChoice : undefined,
    model: modelChoice || undefined,
  }

  const liveRunId = liveRun?.runId
  const stop = useMemo(() => liveRunId
    ? () => void cancelRun(liveRunId).catch((e) => notify(errorText(e))).then(() => qc.invalidateQueries({ queryKey: ['approvals', sessionId] }))
    : undefined, [liveRunId, qc, sessionId])

  // Esc stops the running answer: from anywhere but a dialog or another
  // text field (the rename box's Esc is its own), and only when nothing
  // else handled the key (an open menu, an edit box).
  useEffect(() => {
    if (!stop) return
    function onKey(e: KeyboardEvent) {
      if (e.key !== 'Escape' || e.shiftKey || e.ctrlKey || e.metaKey || e.altKey || e.defaultPrevented) return
      if (inDialog(e.target) || (isTyping(e.target) && !(e.target as Element).closest('.composer'))) return
      e.preventDefault()
      stop!()
    }
    window.addEventListener('keydown', onKey)
    return () => window.removeEventListener('keydown', onKey)
  }, [stop])

  async function send(text: string, attachmentIds: string[], o: { plan?: boolean } = {}) {
    try {
      // /plan sends in plan mode whatever the toggle showed when it was typed.
      const plan = o.plan === undefined ? runOptions.plan : o.plan !== planning ? o.plan : undefined
      await startRun(sessionId, text, { ...runOptions, plan, attachmentIds })
      if (plan !== undefined) qc.invalidateQueries({ queryKey: keys.session(sessionId) })
      setPlanChoice(null)
      // A model was for that answer only.
      setModelChoice('')
      return true
    } catch (e) {
      notify(errorText(e))
      return false
    }
  }

  if (session.isError) {
    return (
      <div className="empty-state">
        <h2>Conversation not found</h2>
        <p className="muted">{errorText(session.error)}</p>
        <button className="btn" onClick={() => navigate('/')}>Start a new one</button>
      </div>
    )
  }

  const empty = messages.isSuccess && !items.length
  return (
    <TasksContext.Provider value={conversationTasks}>
      <section className="conversation" aria-label="Conversation" data-run-status={liveRun?.status ?? 'idle'}>
        <header className="conv-head">
          <Avatar agent={agent} name={session.data?.name} size={26} />
          <h1 className="conv-title">{session.data?.name || 'New conversation'}</h1>
          {planning && <span className="pill pill-warn">Planning</span>}
          {liveRun && <span className={`pill ${liveRun.status === 'interrupted' ? 'pill-warn' : 'pill-run'}`}>{liveRun.status === 'interrupted' ? 'Waiting for approval' : 'Running'}</span>}
          <span className="grow" />
          <ModelPicker agents={agentList} agentId={agentId} onAgent={setAgentChoice} model={modelChoice} onModel={setModelChoice} disabled={!!liveRun} />
          {boundProject && <ProjectTerminalButton projectId={boundProject} />}
          {session.data && <ExportMenu session={session.data} agentName={agentList.find((a) => a.id === session.data.agent_config_id)?.name} />}
          {busStatus !== 'open' && <span className="pill pill-muted" role="status">{busStatus === 'closed' ? 'Offline — reconnecting…' : 'Connecting…'}</span>}
          <button className={`icon-btn${inspectorOpen ? ' active' : ''}`} aria-label="Toggle the inspector" aria-pressed={inspectorOpen} title="Inspector" onClick={onToggleInspector}>
            <Icon name="panel" size={18} />
          </button>
        </header>
        {messages.isLoading ? (
          <div className="timeline"><div className="timeline-inner muted pad">Loading the conversation…</div></div>
        ) : empty ? (
          <div className="timeline"><div className="empty-state"><h2>Say hello</h2><p className="muted">Your first message starts the conversation.</p></div></div>
        ) : (
          <Timeline sessionId={sessionId} items={items} agent={agent} approvals={approvals.data ?? []} live={!!liveRun} runOptions={runOptions} target={target}
            hasEarlier={!!messages.hasNextPage} loadingEarlier={messages.isFetchingNextPage} onLoadEarlier={() => void messages.fetchNextPage()} />
        )}
        <TaskList sessionId={sessionId} tasks={taskList} />
        <Composer
          agentId={agentId}
          plan={plan}
          onPlan={setPlanChoice}
          onSend={send}
          workflows={workflows.data}
          onStartWorkflow={(id, brief) => startWorkflow(qc, id, sessionId, brief, runOptions.projectId)}
          autoFocus
          project={boundProject ? <ProjectChip projectId={boundProject} /> : session.isSuccess && <ProjectPicker value={projectChoice} onChange={setProjectChoice} disabled={!!liveRun} />}
          liveRun={liveRun && {
            status: liveRun.status,
            onStop: () => stop?.(),
            onSteer: (t) => steer(liveRun.runId, t),
          }}
        />
      </section>
    </TasksContext.Provider>
  )
}
