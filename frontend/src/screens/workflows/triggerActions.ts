// What a person asks of triggers: write one, turn it on or off, fire it
// now, rotate a webhook's secret, delete it. Each answers what the server
// said and leaves the trigger list (and, for a fire, the conversation it
// reports into) asked for again.
import type { QueryClient } from '@tanstack/react-query'
import { api, ok, type Task } from '../../lib/api'
import { keys, refresh } from '../../lib/queries'
import { upsertTask } from '../../lib/tasks'
import type { Fire, Trigger, TriggerRequest, TriggerSecret } from '../../lib/triggers'

/** Creates a trigger; a webhook's answer carries its secret, shown this once. 400 (fields), 409 (at 50). */
export async function createTrigger(qc: QueryClient, body: TriggerRequest): Promise<TriggerSecret> {
  const t = await ok(api.POST('/api/v1/triggers', { body: body as Required<Pick<TriggerRequest, 'kind' | 'target' | 'session_id' | 'brief'>> & TriggerRequest }))
  await refresh(qc, keys.triggers)
  return t
}

/** Replaces a trigger's spec (its kind stays). 400 (fields). */
export async function updateTrigger(qc: QueryClient, id: string, body: TriggerRequest): Promise<Trigger> {
  const t = await ok(api.PUT('/api/v1/triggers/{id}', { params: { path: { id } }, body: body as Required<Pick<TriggerRequest, 'target' | 'session_id' | 'brief'>> & TriggerRequest }))
  qc.setQueryData<Trigger[]>(keys.triggers, (list) => list?.map((x) => (x.id === id ? t : x)))
  await refresh(qc, keys.triggers)
  return t
}

export async function deleteTrigger(qc: QueryClient, id: string): Promise<void> {
  await ok(api.DELETE('/api/v1/triggers/{id}', { params: { path: { id } } }))
  qc.setQueryData<Trigger[]>(keys.triggers, (list) => list?.filter((x) => x.id !== id))
  await refresh(qc, keys.triggers)
}

/** Mints a webhook trigger a new secret (the old one dead at once); the answer carries it, shown this once. */
export async function rotateSecret(qc: QueryClient, id: string): Promise<TriggerSecret> {
  const t = await ok(api.POST('/api/v1/triggers/{id}/rotate', { params: { path: { id } } }))
  await refresh(qc, keys.triggers)
  return t
}

/**
 * Fires a trigger now. A refusal (400 the target is unusable, 409 disabled,
 * busy or at the task cap) is thrown — and is also the trigger's last_error
 * now, so the list is asked again either way. A fire starts a run or an
 * execution in the trigger's conversation: its transcript (the note before
 * the brief) and task list are asked again too.
 */
export async function fireTrigger(qc: QueryClient, t: Pick<Trigger, 'id' | 'session_id'>): Promise<Fire> {
  try {
    const f = await ok(api.POST('/api/v1/triggers/{id}/fire', { params: { path: { id: t.id } } }))
    if (f.task) qc.setQueryData<Task[]>(keys.tasks(t.session_id), (list) => upsertTask(list, f.task!))
    await Promise.all([
      refresh(qc, keys.messages(t.session_id)),
      refresh(qc, keys.tasks(t.session_id)),
      ...(f.task ? [refresh(qc, ['workflow-runs'])] : []),
    ])
    return f
  } finally {
    await refresh(qc, keys.triggers)
  }
}
