import { useQueryClient } from '@tanstack/react-query'
import { useState } from 'react'
import { errorText, type Task } from '../../lib/api'
import { canDismiss, canRetry, canStop, taskChip } from '../../lib/tasks'
import { dismissTask, retryTask, stopTask } from './actions'

/** A task's status chip: working, queued, waiting for approval, completed, failed, cancelled. */
export function TaskChip({ task }: { task: Pick<Task, 'status'> & { queued?: boolean } }) {
  const c = taskChip(task)
  return <span className={`pill pill-${c.tone} task-chip`} data-status={task.status}>{c.label}</span>
}

/** Stop (live), Retry (failed, attempts left), Dismiss (final); a refusal shows the server's message. */
export function TaskActions({ task }: { task: Task }) {
  const qc = useQueryClient()
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState('')

  async function act(f: (id: string) => Promise<unknown>) {
    setBusy(true)
    setError('')
    try {
      await f(task.task_id)
    } catch (e) {
      setError(errorText(e))
    } finally {
      setBusy(false)
    }
  }

  const name = task.label || 'the task'
  return (
    <span className="task-actions">
      {canStop(task) && (
        <button className="btn btn-ghost btn-xs" disabled={busy} aria-label={`Stop ${name}`} onClick={() => act((id) => stopTask(qc, id))}>Stop</button>
      )}
      {canRetry(task) && (
        <button className="btn btn-ghost btn-xs" disabled={busy} aria-label={`Retry ${name}`} onClick={() => act((id) => retryTask(qc, id))}>Retry</button>
      )}
      {canDismiss(task) && (
        <button className="btn btn-ghost btn-xs" disabled={busy} aria-label={`Dismiss ${name}`} onClick={() => act((id) => dismissTask(qc, id))}>Dismiss</button>
      )}
      {error && <span className="error-text" role="alert">{error}</span>}
    </span>
  )
}
