import { useState } from 'react'
import { errorText, type Task } from '../../lib/api'
import { HUB_PAGE, useWorkflowRuns, useWorkflows } from '../../lib/queries'
import { navigate, sessionPath, workflowPath, type Route } from '../../lib/router'
import { progressText, workflowState } from '../../lib/workflows'
import { openTask } from '../inspector/inspectorState'
import { TaskChip } from '../tasks/TaskControls'
import { Pager } from './Pager'
import { TriggersSection } from './Triggers'
import { WorkflowDetail } from './WorkflowDetail'
import { WorkflowEditor } from './WorkflowEditor'

/**
 * The workflows' own place in the middle column: the definitions (each
 * opening to its description, flowchart, editor and Run…), the triggers
 * that start work with nobody asking, and every execution across the
 * caller's conversations, live.
 */
export function WorkflowsHub({ route }: { route: Extract<Route, { name: 'workflows' }> }) {
  const page = route.id === 'new'
    ? <WorkflowEditor key="new" />
    : route.id && route.edit
      ? <WorkflowEditor key={route.id} workflowId={route.id} />
      : route.id
        ? <WorkflowDetail key={route.id} id={route.id} />
        : <HubLists />
  return (
    <section className="workflows" aria-label="Workflows">
      <header className="settings-head workflows-head">
        <h1>Workflows</h1>
        <p className="muted small">Fixed sequences of steps, each run by the agent it names, on one hidden session: authored once, then watched.</p>
      </header>
      <div className="settings-body workflows-body">{page}</div>
    </section>
  )
}

function HubLists() {
  return (
    <div className="tab-page">
      <Definitions />
      <TriggersSection />
      <Runs />
    </div>
  )
}

function Definitions() {
  const workflows = useWorkflows()
  const [offset, setOffset] = useState(0)
  const list = workflows.data ?? []
  const shown = list.slice(offset, offset + HUB_PAGE)
  return (
    <section className="hub-section" aria-labelledby="wf-defs">
      <div className="tab-intro">
        <div>
          <h2 id="wf-defs">Definitions</h2>
          <p className="muted small">An agent starts one by its description; you start one with Run… or <code>/workflow &lt;name&gt; &lt;brief&gt;</code> in a conversation.</p>
        </div>
        <button className="btn btn-primary" onClick={() => navigate(workflowPath('new'))}>New workflow</button>
      </div>
      {workflows.isLoading && <p className="muted">Loading…</p>}
      {workflows.isError && <p className="error-text">{errorText(workflows.error)}</p>}
      {workflows.isSuccess && !list.length && <p className="empty muted">No workflows yet.</p>}
      <ul className="rows" aria-label="Workflow definitions">
        {shown.map((w) => (
          <li key={w.id} className="row wf-def-row" data-workflow={w.name}>
            <div className="row-main">
              <button className="row-open" onClick={() => navigate(workflowPath(w.id))}>{w.name}</button>{' '}
              <span className="pill">{w.scope}</span>{' '}
              <span className="muted small">{w.steps.length} {w.steps.length === 1 ? 'step' : 'steps'}</span>
              <div className="muted small clamp">{w.description}</div>
            </div>
          </li>
        ))}
      </ul>
      <Pager label="Definitions pages" offset={offset} size={HUB_PAGE} total={list.length} onOffset={setOffset} />
    </section>
  )
}

function Runs() {
  const [offset, setOffset] = useState(0)
  const runs = useWorkflowRuns(offset)
  const tasks = runs.data?.tasks ?? []
  return (
    <section className="hub-section" aria-labelledby="wf-runs">
      <div className="tab-intro">
        <div>
          <h2 id="wf-runs">Runs</h2>
          <p className="muted small">Every execution across your conversations, live; one opens in its conversation with its steps in the inspector.</p>
        </div>
      </div>
      {runs.isLoading && <p className="muted">Loading…</p>}
      {runs.isError && <p className="error-text">{errorText(runs.error)}</p>}
      {runs.isSuccess && !tasks.length && <p className="empty muted">No workflow has run yet.</p>}
      {tasks.length > 0 && (
        <div className="table-scroll">
          <table className="table table-stack wf-runs" aria-label="Workflow runs">
            <thead>
              <tr><th scope="col">Workflow</th><th scope="col">Conversation</th><th scope="col">Status</th><th scope="col">Progress</th><th scope="col">Started</th></tr>
            </thead>
            <tbody>
              {tasks.map((t) => <RunRow key={t.task_id} task={t} />)}
            </tbody>
          </table>
        </div>
      )}
      <Pager label="Runs pages" offset={offset} size={HUB_PAGE} total={runs.data?.total ?? 0} onOffset={setOffset} />
    </section>
  )
}

const when = (iso: string) => {
  const d = new Date(iso)
  return Number.isNaN(d.getTime()) ? '' : d.toLocaleString(undefined, { dateStyle: 'short', timeStyle: 'short' })
}

function RunRow({ task }: { task: Task }) {
  const st = workflowState(task)
  const name = st?.name || task.label || 'Workflow'
  function open() {
    navigate(sessionPath(task.parent_session_id))
    openTask(task.parent_session_id, task.task_id)
  }
  return (
    <tr className="wf-run-row" data-task-id={task.task_id} data-status={task.status}>
      <td><button className="row-open" title="Open it in its conversation" onClick={open}>{name}</button></td>
      <td className="wf-run-session" data-label="Conversation">{task.session_name || 'New conversation'}</td>
      <td data-label="Status"><TaskChip task={task} /></td>
      <td className="wf-run-progress" data-label="Progress">{st ? progressText(st) : ''}</td>
      <td className="muted" data-label="Started"><time dateTime={task.created_at}>{when(task.created_at)}</time></td>
    </tr>
  )
}
