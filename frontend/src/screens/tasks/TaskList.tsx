import { useQueryClient } from '@tanstack/react-query'
import { useState } from 'react'
import { Icon } from '../../components/Icon'
import { errorText, type Task } from '../../lib/api'
import { notify } from '../../lib/notices'
import { attemptText, isLive, splitDismissed, tally } from '../../lib/tasks'
import { openTask } from '../inspector/inspectorState'
import { dismissTask } from './actions'
import { TaskActions, TaskChip } from './TaskControls'

/** Up to this many finished tasks are listed open; more are grouped, closed. */
const OPEN_FINISHED = 2

/**
 * The conversation's background tasks, over the composer, in a strip of
 * bounded height: each with its status, attempt and summary and what can
 * be done with it; a task opens in the inspector. The live ones come
 * first; the finished ones are a group (closed past a few) that can be
 * dismissed at once; dismissed tasks are tucked away behind a toggle.
 */
export function TaskList({ sessionId, tasks }: { sessionId: string; tasks: Task[] }) {
  const qc = useQueryClient()
  const [open, setOpen] = useState(true)
  const [showDismissed, setShowDismissed] = useState(false)
  const [showFinished, setShowFinished] = useState<boolean | null>(null)
  const [dismissing, setDismissing] = useState(false)
  if (!tasks.length) return null
  const { shown, dismissed } = splitDismissed(tasks)
  const live = shown.filter(isLive)
  const finished = shown.filter((t) => !isLive(t))
  const finishedOpen = showFinished ?? finished.length <= OPEN_FINISHED
  const summary = [tally(shown), dismissed.length ? `${dismissed.length} dismissed` : ''].filter(Boolean).join(' · ')

  async function dismissFinished() {
    setDismissing(true)
    try {
      for (const t of finished) await dismissTask(qc, t.task_id)
    } catch (e) {
      notify(errorText(e))
    } finally {
      setDismissing(false)
    }
  }

  return (
    <section className="task-strip" aria-label="Background tasks">
      <button className="task-strip-head" aria-expanded={open} onClick={() => setOpen((o) => !o)}>
        <span className={`chev${open ? ' open' : ''}`}><Icon name="chevron" size={14} /></span>
        <span className="task-strip-title">Background tasks</span>
        <span className="muted small">{summary}</span>
      </button>
      {open && (
        <ul className="task-list">
          {live.map((t) => <TaskRow key={t.task_id} sessionId={sessionId} task={t} />)}
          {finished.length > 0 && (
            <li className="task-group">
              <button className="btn btn-ghost btn-xs" aria-expanded={finishedOpen} onClick={() => setShowFinished(!finishedOpen)}>
                <span className={`chev${finishedOpen ? ' open' : ''}`}><Icon name="chevron" size={12} /></span>
                {finished.length} finished
              </button>
              <button className="btn btn-ghost btn-xs" disabled={dismissing} onClick={() => void dismissFinished()}>Dismiss all finished</button>
            </li>
          )}
          {finishedOpen && finished.map((t) => <TaskRow key={t.task_id} sessionId={sessionId} task={t} />)}
          {dismissed.length > 0 && (
            <li className="task-dismissed-toggle">
              <button className="btn btn-ghost btn-xs" aria-expanded={showDismissed} onClick={() => setShowDismissed((s) => !s)}>
                {showDismissed ? 'Hide' : 'Show'} {dismissed.length} dismissed
              </button>
            </li>
          )}
          {showDismissed && dismissed.map((t) => <TaskRow key={t.task_id} sessionId={sessionId} task={t} />)}
        </ul>
      )}
    </section>
  )
}

function TaskRow({ sessionId, task }: { sessionId: string; task: Task }) {
  return (
    <li className={`task-row${task.dismissed ? ' dismissed' : ''}`} data-task-id={task.task_id} data-status={task.status}>
      <TaskChip task={task} />
      <button className="task-open" title="Open the task in the inspector" onClick={() => openTask(sessionId, task.task_id)}>
        {task.label || 'Background task'}
      </button>
      <span className="muted small task-attempt">{attemptText(task)}</span>
      <span className="task-summary muted small" title={task.summary}>{task.summary}</span>
      <TaskActions task={task} />
    </li>
  )
}
