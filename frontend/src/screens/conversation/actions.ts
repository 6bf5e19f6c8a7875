// What the conversation asks of the server. Runs start over REST (a refusal
// comes back as an error to show); their events arrive on the bus.
import type { QueryClient } from '@tanstack/react-query'
import { api, ok, type Schemas } from '../../lib/api'
import { bus } from '../../lib/bus'
import { keys, refresh } from '../../lib/queries'
import { liveStore } from '../../live/store'

/** The WebSocket frame limit: a bigger prompt would close the socket, so the composer refuses it. */
export const MAX_INPUT_BYTES = (1 << 20) - 1024

/**
 * projectId binds an unbound session on this run (the server ignores it once
 * bound); attachmentIds are the images the message carries (uploaded first);
 * model answers this run only, in place of the agent's own.
 */
export interface RunOptions { agentId?: string; plan?: boolean; projectId?: string; attachmentIds?: string[]; model?: string }

export async function startRun(sessionId: string, input: string, o: RunOptions = {}) {
  // JSON: the tab never asks for the start's event stream (Accept:
  // text/event-stream); the bus brings it the run's events.
  const run = (await ok(api.POST('/api/v1/sessions/{id}/runs', {
    params: { path: { id: sessionId } },
    body: {
      input, ...(o.agentId ? { agent_config_id: o.agentId } : {}), ...(o.plan !== undefined ? { plan: o.plan } : {}),
      ...(o.projectId ? { project_id: o.projectId } : {}), ...(o.attachmentIds?.length ? { attachment_ids: o.attachmentIds } : {}),
      ...(o.model ? { model: o.model } : {}),
    },
  }))) as Schemas['RunStateView']
  followRun(run.run_id, sessionId)
  return run
}

/**
 * Makes sure this tab hears a run it started. The bus follows the user's
 * live runs once its socket is signed in, but a run that ends before then
 * (a page just loaded, a short answer) is live no more and would never
 * reach the tab. Subscribing replays what the tab has not heard; what it
 * has is skipped by sequence number.
 */
export function followRun(runId: string, sessionId: string) {
  liveStore.adopt(runId, sessionId)
  const run = liveStore.get().runs[runId]
  if (!run) return // already handed over to the transcript
  bus.send({ type: 'run.subscribe', payload: { run_id: runId, from_seq: run.lastSeq } })
}

/** The branch target before the first message: an edited first message opens a new first branch. */
export const BRANCH_ROOT = 'root'

async function branchTo(qc: QueryClient, sessionId: string, entryId: string) {
  await ok(api.POST('/api/v1/sessions/{id}/branch', { params: { path: { id: sessionId } }, body: { entry_id: entryId } }))
  await qc.refetchQueries({ queryKey: keys.messages(sessionId) })
}

/** Regenerate: branch back to the user's message, then answer the history again (an empty input). */
export async function regenerate(qc: QueryClient, sessionId: string, userEntryId: string, o: RunOptions = {}) {
  await branchTo(qc, sessionId, userEntryId)
  return startRun(sessionId, '', o)
}

/**
 * Edit and resend: branch to the entry before the user's message (BRANCH_ROOT
 * for the first), then run the edited text (with the message's images, in
 * o.attachmentIds). The new message is the old one's sibling, so the branch
 * switcher offers both versions.
 */
export async function editAndResend(qc: QueryClient, sessionId: string, parentEntryId: string, text: string, o: RunOptions = {}) {
  await branchTo(qc, sessionId, parentEntryId)
  return startRun(sessionId, text, o)
}

/** Switches to another attempt at a branch point by branching to its newest entry. */
export async function switchBranch(qc: QueryClient, sessionId: string, tipId: string) {
  await branchTo(qc, sessionId, tipId)
  qc.invalidateQueries({ queryKey: keys.context(sessionId) })
}

export async function fork(qc: QueryClient, sessionId: string, messageId: string) {
  const s = await ok(api.POST('/api/v1/sessions/{id}/fork', { params: { path: { id: sessionId } }, body: { message_id: messageId } }))
  await qc.invalidateQueries({ queryKey: keys.sessions })
  return s
}

export function cancelRun(runId: string) {
  return ok(api.POST('/api/v1/runs/{id}/cancel', { params: { path: { id: runId } }, body: { mode: 'abort' } }))
}

/** Steers the live run: the input joins the current exchange. */
export function steer(runId: string, input: string) {
  bus.send({ type: 'run.inject', payload: { run_id: runId, queue: 'steer', input } })
}

/**
 * After a decision, every approval list shown, not only the approval's own
 * session's: a background task's approval (filed on its hidden session) is
 * listed, and decided, in the conversation that started the task.
 */
function refreshApprovals(qc: QueryClient) {
  return refresh(qc, ['approvals'])
}

export async function approve(qc: QueryClient, _sessionId: string, approvalId: string, scope: 'once' | 'same' | 'all' = 'once') {
  await ok(api.POST('/api/v1/approvals/{id}/approve', { params: { path: { id: approvalId } }, body: { scope } }))
  await refreshApprovals(qc)
}

export async function reject(qc: QueryClient, _sessionId: string, approvalId: string, reason: string) {
  await ok(api.POST('/api/v1/approvals/{id}/reject', { params: { path: { id: approvalId } }, body: reason ? { reason } : {} }))
  await refreshApprovals(qc)
}
