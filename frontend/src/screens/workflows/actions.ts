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

/** The value a conversation picker gives for "a new conversation". */
export const NEW_CONVERSATION = '__new__'

/**
 * Runs work (start) in the conversation chosen, making it first when the
 * choice is a new one — named name, on agentId — and deleting that again
 * should the work be refused, so a refusal leaves nothing half-made.
 * Answers the conversation's id and what work answered.
 */
export async function intoConversation<T>(qc: QueryClient, chosen: string, name: string, agentId: string | undefined,
  work: (sessionId: string) => Promise<T>): Promise<{ sessionId: string; result: T }> {
  if (chosen !== NEW_CONVERSATION) return { sessionId: chosen, result: await work(chosen) }
  const s = await ok(api.POST('/api/v1/sessions', { body: { name, ...(agentId ? { agent_config_id: agentId } : {}) } }))
  try {
    const result = await work(s.id)
    await refresh(qc, keys.sessions)
    return { sessionId: s.id, result }
  } catch (e) {
    await api.DELETE('/api/v1/sessions/{id}', { params: { path: { id: s.id } } }).catch(() => {})
    throw e
  }
}
