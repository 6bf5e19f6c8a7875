// What a person asks of a background task: stop it, retry it, dismiss it.
// Each answers the task as it now stands, which goes straight into the
// cached lists before they are asked again.
import type { QueryClient } from '@tanstack/react-query'
import { api, ok, type Task } from '../../lib/api'
import { keys, refresh } from '../../lib/queries'
import { newerTask, upsertTask } from '../../lib/tasks'

async function settle(qc: QueryClient, t: Task) {
  qc.setQueryData<Task[]>(keys.tasks(t.parent_session_id), (list) => upsertTask(list, t))
  qc.setQueryData<Task>(keys.task(t.task_id), (cur) => newerTask(cur, t))
  await Promise.all([refresh(qc, keys.tasks(t.parent_session_id)), refresh(qc, keys.task(t.task_id))])
  return t
}

/** Stops a live task (409 once it is final). */
export async function stopTask(qc: QueryClient, id: string) {
  return settle(qc, await ok(api.POST('/api/v1/tasks/{id}/stop', { params: { path: { id } } })))
}

/** Runs a failed task again (409: not failed, out of attempts, or the conversation is at its live-task cap). */
export async function retryTask(qc: QueryClient, id: string) {
  return settle(qc, await ok(api.POST('/api/v1/tasks/{id}/retry', { params: { path: { id } } })))
}

/** Hides a final task from the list (409 while it is live). */
export async function dismissTask(qc: QueryClient, id: string) {
  return settle(qc, await ok(api.POST('/api/v1/tasks/{id}/dismiss', { params: { path: { id } } })))
}
