import { useState } from 'react'
import { Icon } from '../../components/Icon'
import type { Task } from '../../lib/api'
import { attemptText, splitDismissed, tally } from '../../lib/tasks'
import { openTask } from '../inspector/inspectorState'
import { TaskActions, TaskChip } from './TaskControls'

/**
 * The conversation's background tasks, over the composer: each with its
 * status, attempt and summary and what can be done with it; a task opens in
 * the inspector. Dismissed tasks are tucked away behind a toggle.
 */
export function TaskList({ sessionId, tasks }: { sessionId: string; tasks: Task[] }) {
  const [open, setOpen] = useState(true)
  const [showDismissed, setShowDismissed] = useState(false)
  if (!tasks.length) return null
  const { shown, dismissed } = splitDismissed(tasks)
  const summary = [tally(shown), dismissed.length ? `${dismissed.length} dismissed` : ''].filter(Boolean).join(' · ')
  return (
    <section className="task-strip" aria-label="Background tasks">
      <button className="task-strip-head" aria-expanded={open} onClick={() => setOpen((o) => !o)}>
        <span className={`chev${open ? ' open' : ''}`}><Icon name="chevron" size={14} /></span>
        <span className="task-strip-title">Background tasks</span>
        <span className="muted small">{summary}</span>
      </button>
      {open && (
        <ul className="task-list">
          {shown.map((t) => <TaskRow key={t.task_id} sessionId={sessionId} task={t} />)}
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
