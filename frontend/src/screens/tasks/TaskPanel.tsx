import { useMemo } from 'react'
import { Icon } from '../../components/Icon'
import { Markdown } from '../../components/Markdown'
import { errorText } from '../../lib/api'
import { useAgents, useApprovals, useMessages, useTask } from '../../lib/queries'
import { attemptText } from '../../lib/tasks'
import { useLiveSession } from '../../live/store'
import { composeTimeline } from '../../timeline/compose'
import { fromEntries } from '../../timeline/fromEntries'
import { ItemView } from '../conversation/ItemView'
import { closeTask } from '../inspector/inspectorState'
import { TaskActions, TaskChip } from './TaskControls'

/**
 * A background task in the inspector: how it stands, what it was asked and
 * what it answered, and its transcript — the hidden session its attempts
 * ran on — drawn read-only with the conversation's own components, live
 * while an attempt runs.
 */
export function TaskPanel({ taskId }: { taskId: string }) {
  const task = useTask(taskId)
  const agents = useAgents()
  if (task.isLoading) return <p className="muted pad">Loading the task…</p>
  if (task.isError) return <p className="error-text pad">{errorText(task.error)}</p>
  const t = task.data!
  const agent = agents.data?.find((a) => a.id === t.agent_config_id)
  return (
    <div className="task-panel" data-task-id={t.task_id} data-status={t.status}>
      <div className="task-panel-head">
        <h2 className="task-panel-title" title={t.label}>{t.label || 'Background task'}</h2>
        <TaskChip task={t} />
        <span className="grow" />
        <button className="icon-btn" aria-label="Close the task" title="Back to the trace" onClick={closeTask}><Icon name="x" size={14} /></button>
      </div>
      <div className="task-facts muted small">
        <span>{attemptText(t)}</span>
        {t.kind === 'workflow' && <span>workflow</span>}
        {agent && <span>{agent.name}</span>}
      </div>
      <TaskActions task={t} />
      <details className="task-prompt">
        <summary>Prompt</summary>
        <div className="reasoning-text">{t.prompt}</div>
      </details>
      {t.result && (
        <section className={`task-result${t.status === 'failed' ? ' failed' : ''}`} aria-label="Result">
          <h3 className="ctx-h">Result</h3>
          <Markdown text={t.result} />
        </section>
      )}
      <h3 className="ctx-h">Transcript</h3>
      <TaskTranscript sessionId={t.child_session_id} agent={agent} />
    </div>
  )
}

function TaskTranscript({ sessionId, agent }: { sessionId: string; agent?: Parameters<typeof ItemView>[0]['agent'] }) {
  const messages = useMessages(sessionId)
  const approvals = useApprovals(sessionId)
  const live = useLiveSession(sessionId)
  const entries = useMemo(() => (messages.data ? messages.data.pages.slice().reverse().flat() : []), [messages.data])
  const stored = useMemo(() => fromEntries(entries), [entries])
  const items = useMemo(() => composeTimeline(stored, live.runs, live.notes), [stored, live])
  const byCall = useMemo(() => new Map((approvals.data ?? []).map((a) => [a.tool_call_id, a])), [approvals.data])
  const running = live.runs.some((r) => r.status === 'running' || r.status === 'interrupted')

  if (messages.isLoading) return <p className="muted small">Loading the transcript…</p>
  if (messages.isError) return <p className="error-text">{errorText(messages.error)}</p>
  if (!items.length) return <p className="muted small">Nothing yet: the task has not started.</p>
  return (
    <div className="task-transcript" aria-label="Task transcript">
      {messages.hasNextPage && (
        <button className="btn btn-ghost btn-sm load-earlier" disabled={messages.isFetchingNextPage} onClick={() => void messages.fetchNextPage()}>
          {messages.isFetchingNextPage ? 'Loading…' : 'Load earlier messages'}
        </button>
      )}
      {items.map((item) => (
        <div className="item" key={item.key}>
          <ItemView item={item} agent={agent} approval={item.kind === 'tool' ? byCall.get(item.callId) : undefined} live={running} />
        </div>
      ))}
    </div>
  )
}
