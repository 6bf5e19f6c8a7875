// What a person asks of workflows beyond their definitions: starting one
// into a conversation (Run… and /workflow alike).
import type { QueryClient } from '@tanstack/react-query'
import { api, ok, type Task } from '../../lib/api'
import { keys, refresh } from '../../lib/queries'
import { newerTask, upsertTask } from '../../lib/tasks'

/**
 * Starts an execution of a workflow into a conversation, led by the brief;
 * answers its task. Refusals are the server's: 400 (an empty brief, an
 * unknown project), 404, 409 (the conversation is busy with a run or at
 * its task cap). The conversation gains a task and a workflow_started
 * note, which no event announces: both are asked for again here.
 */
export async function startWorkflow(qc: QueryClient, workflowId: string, sessionId: string, brief: string, projectId?: string): Promise<Task> {
  const t = await ok(api.POST('/api/v1/workflows/{id}/runs', {
    params: { path: { id: workflowId } },
    body: { session_id: sessionId, input: brief, ...(projectId ? { project_id: projectId } : {}) },
  }))
  // The execution may have gone on (even ended) while this answer was on
  // its way: it goes in only where nothing newer is, and the task is asked
  // again.
  qc.setQueryData<Task[]>(keys.tasks(sessionId), (list) => upsertTask(list, t))
  qc.setQueryData<Task>(keys.task(t.task_id), (cur) => newerTask(cur, t))
  await Promise.all([
    refresh(qc, keys.messages(sessionId)),
    refresh(qc, keys.tasks(sessionId)),
    refresh(qc, keys.task(t.task_id)),
    refresh(qc, ['workflow-runs']),
    ...(projectId ? [refresh(qc, keys.session(sessionId))] : []),
  ])
  return t
}
