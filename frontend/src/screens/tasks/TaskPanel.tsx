import { useMemo } from 'react'
import { Icon } from '../../components/Icon'
import { Markdown } from '../../components/Markdown'
import { errorText, type Agent, type Task } from '../../lib/api'
import { useAgents, useApprovals, useMessages, useTask } from '../../lib/queries'
import { navigate, workflowPath } from '../../lib/router'
import { attemptText, isLive } from '../../lib/tasks'
import { endingChip, launchCounts, progressText, stepName, workflowState, type WorkflowState } from '../../lib/workflows'
import { useLiveSession } from '../../live/store'
import { composeTimeline } from '../../timeline/compose'
import { fromEntries } from '../../timeline/fromEntries'
import { callKey } from '../../timeline/keys'
import { ItemView } from '../conversation/ItemView'
import { closeTask } from '../inspector/inspectorState'
import { WorkflowChart } from '../workflows/WorkflowChart'
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
  const flow = workflowState(t)
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
        <summary>{flow ? 'Brief' : 'Prompt'}</summary>
        <div className="reasoning-text">{t.prompt}</div>
      </details>
      {flow && <WorkflowSteps task={t} state={flow} agents={agents.data ?? []} />}
      {t.result && (
        <section className={`task-result${t.status === 'failed' ? ' failed' : ''}`} aria-label="Result">
          <h3 className="ctx-h">Result</h3>
          <Markdown text={t.result} />
        </section>
      )}
      <h3 className="ctx-h">Transcript</h3>
      {flow && <p className="muted small">Every step's turn, in order, on the execution's one session.</p>}
      <TaskTranscript sessionId={t.child_session_id} agent={agent} />
    </div>
  )
}

/**
 * A workflow execution's steps: where it is, its sequence drawn with the
 * current step marked and how often each ran, and every launch with how it
 * ended (the launch log, retries included).
 */
function WorkflowSteps({ task, state, agents }: { task: Task; state: WorkflowState; agents: Agent[] }) {
  const live = isLive(task)
  const steps = useMemo(() => state.steps.map((s) => ({ ...s, agent: agents.find((a) => a.id === s.agent)?.name })), [state.steps, agents])
  const visits = useMemo(() => launchCounts(state), [state])
  const laps = Object.values(state.laps).reduce((n, x) => n + x, 0)
  return (
    <section className="wf-exec" aria-label="Workflow steps">
      <div className="task-facts muted small">
        <span className="wf-exec-progress">{progressText(state)}</span>
        <span>{state.step_runs.length} {state.step_runs.length === 1 ? 'launch' : 'launches'}</span>
        {laps > 0 && <span>{laps} {laps === 1 ? 'loop' : 'loops'} taken</span>}
        {state.workflow_id && (
          <a href={workflowPath(state.workflow_id)} onClick={(e) => { e.preventDefault(); navigate(workflowPath(state.workflow_id)) }}>the definition</a>
        )}
      </div>
      {state.bound && <p className="warn-text small">Ended on a bound: {state.bound}</p>}
      {steps.length > 0 && (
        <WorkflowChart steps={steps} label={`Flowchart of ${state.name}, at ${progressText(state)}`} current={live ? state.step_id : undefined} visits={visits} maxHeight={360} />
      )}
      <h3 className="ctx-h">Step launches</h3>
      {state.step_runs.length === 0 ? (
        <p className="muted small">{task.status === 'input_required' ? 'Waiting for your approval before the first step.' : 'No step has started yet.'}</p>
      ) : (
        <ol className="wf-launches">
          {state.step_runs.map((r, i) => {
            const c = endingChip(r.ending, live && i === state.step_runs.length - 1)
            return (
              <li key={r.run_id || i} className="wf-launch" data-step={stepName(state, r.step_id)} data-ending={r.ending || 'running'}>
                <span className="wf-launch-name">{stepName(state, r.step_id)}</span>
                <span className={`pill pill-${c.tone}`}>{c.label}</span>
                <span className="muted small">{r.retry ? `retry, attempt ${r.attempt}` : r.attempt > 1 ? `attempt ${r.attempt}` : ''}</span>
                <span className="muted small wf-launch-time">{clock(r.started_at)}{r.ended_at ? `–${clock(r.ended_at)}` : ''}</span>
              </li>
            )
          })}
        </ol>
      )}
    </section>
  )
}

const clock = (iso: string) => {
  const d = new Date(iso)
  return Number.isNaN(d.getTime()) ? '' : d.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit' })
}

function TaskTranscript({ sessionId, agent }: { sessionId: string; agent?: Parameters<typeof ItemView>[0]['agent'] }) {
  const messages = useMessages(sessionId)
  const approvals = useApprovals(sessionId)
  const live = useLiveSession(sessionId)
  const entries = useMemo(() => (messages.data ? messages.data.pages.slice().reverse().flat() : []), [messages.data])
  const stored = useMemo(() => fromEntries(entries), [entries])
  const items = useMemo(() => composeTimeline(stored, live.runs, live.notes), [stored, live])
  const byCall = useMemo(() => new Map((approvals.data ?? []).map((a) => [callKey(a.run_id, a.tool_call_id), a])), [approvals.data])
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
          <ItemView item={item} agent={agent} approval={item.kind === 'tool' ? byCall.get(callKey(item.runId, item.callId)) : undefined} live={running} />
        </div>
      ))}
    </div>
  )
}
