// Live runs folded from bus events. Pure: applyEvent returns the next state
// and the side effects the caller performs (resubscribe, refetch, …), so the
// same code is unit-tested against recorded streams.
import { imagesOfAttachments } from '../lib/attachments'
import type { ServerEvent } from '../lib/events'
import { runIdOf } from '../lib/events'
import type { EventPayload } from '../lib/events'
import type { AssistantItem, CompactionItem, NoteItem, ReasoningItem, TimelineItem, ToolItem } from './model'
import { TASK_NOTIFICATION, taskNotice } from './taskNotice'

export type RunStatus = 'running' | 'interrupted' | 'completed' | 'error' | 'cancelled'

/** How the diagnostics this build knows read as a note's title; any other shows its type. */
const DIAGNOSTIC_TITLES: Record<string, string> = {
  mcp_unavailable: 'MCP server unavailable',
  settings_dropped: 'Settings the provider does not take were left out',
  budget_near: 'A budget is nearly used up',
}

/** What a background task's run is an attempt of (run.started, GET /runs/:id). */
export interface TaskLink { taskId: string; parentSessionId: string; toolCallId?: string; label?: string }

export interface LiveRun {
  runId: string
  /** The session the run works on: for a background task, its hidden child session. */
  sessionId: string
  /** Set on a background task's run: its events go to the parent's task list, never a chat timeline. */
  task?: TaskLink
  status: RunStatus
  agentName?: string
  /** The highest seq applied: events at or below it are duplicates (replays). */
  lastSeq: number
  /** True when every event since run.started is held, so the items are the whole run. */
  fromStart: boolean
  /** The cursor of the last resubscribe this state asked for (a second gap there is unrecoverable). */
  resubscribedFrom?: number
  items: TimelineItem[]
  /** What the transcript does not keep: errors, diagnostics, cancellations, unknown events. */
  notes: NoteItem[]
  openText?: number
  openReasoning?: number
  compacting?: boolean
}

export interface LiveState {
  runs: Record<string, LiveRun>
  /** Notes of runs whose items were replaced by the stored transcript, by run id. */
  settledNotes: Record<string, { sessionId: string; notes: NoteItem[] }>
  /** Runs already handed over to the stored transcript: their late duplicates are ignored. */
  settled: Record<string, true>
}

export type Effect =
  | { type: 'resubscribe'; runId: string; fromSeq: number }
  | { type: 'refetchMessages'; sessionId: string }
  | { type: 'ended'; runId: string; sessionId: string }
  | { type: 'interrupted'; runId: string; sessionId: string }
  | { type: 'started'; runId: string; sessionId: string }
  | { type: 'title'; sessionId: string; title: string }
  | { type: 'sessionChanged'; sessionId: string }
  | { type: 'traces'; sessionId: string }
  | { type: 'toolResult'; runId: string; sessionId: string; callId: string }
  | { type: 'lookupRun'; runId: string }
  /**
   * A conversation's run this tab hears of first from its run.started,
   * not having started it: a trigger's, another tab's. What the server
   * filed before its message (a trigger's note) rides no event, so the
   * transcript is asked again.
   */
  | { type: 'firstSight'; runId: string; sessionId: string }
  | { type: 'notice'; tone: 'error' | 'info'; message: string; sessionId?: string }
  /** A background task moved (task.updated carries it whole) or its run did: its parent's task list is stale. */
  | { type: 'task'; parentSessionId: string; taskId: string; task?: EventPayload<'task.updated'> }

// Events that only a running run emits: after a pause they mean it resumed
// (titles and trace spans may trail the pause itself).
const RESUMES = new Set(['run.agent_start', 'run.step', 'run.reasoning', 'run.message', 'run.reasoning_item', 'run.tool_call', 'run.tool_progress', 'run.tool_result', 'run.handoff', 'run.injected', 'run.compaction'])

export const emptyLive = (): LiveState => ({ runs: {}, settledNotes: {}, settled: {} })

export function newRun(runId: string, sessionId: string, fromStart = false, task?: TaskLink): LiveRun {
  return { runId, sessionId, status: 'running', lastSeq: 0, fromStart, items: [], notes: [], ...(task ? { task } : {}) }
}

/** The task link a run.started carries, when the run is a background task's. */
function taskLinkOf(p: Record<string, unknown>): TaskLink | undefined {
  if (typeof p.task_id !== 'string' || !p.task_id || typeof p.parent_session_id !== 'string') return undefined
  return {
    taskId: p.task_id, parentSessionId: p.parent_session_id,
    ...(typeof p.tool_call_id === 'string' && p.tool_call_id ? { toolCallId: p.tool_call_id } : {}),
    ...(typeof p.label === 'string' && p.label ? { label: p.label } : {}),
  }
}

/** The parent's task list goes stale whenever a task's run starts, pauses or ends. */
function taskMoved(run: LiveRun, effects: Effect[]) {
  if (run.task) effects.push({ type: 'task', parentSessionId: run.task.parentSessionId, taskId: run.task.taskId })
}

interface Result { state: LiveState; effects: Effect[] }

/** Folds one event into the state. The state is treated as immutable. */
export function applyEvent(state: LiveState, ev: ServerEvent): Result {
  const effects: Effect[] = []
  const p = (ev.payload ?? {}) as Record<string, unknown>
  if (ev.type === 'session.title_updated') effects.push({ type: 'title', sessionId: String(p.session_id), title: String(p.title) })
  if (ev.type === 'session.project_bound') effects.push({ type: 'sessionChanged', sessionId: String(p.session_id) })
  if (ev.type === 'task.updated' && !('unknown' in ev)) {
    const t = ev.payload
    effects.push({ type: 'task', parentSessionId: t.parent_session_id, taskId: t.task_id, task: t })
    // Unnumbered, it was broadcast outside any run's stream (the task's run
    // ended, or has not started): nothing of a run to fold or look up.
    // Numbered, it counts in its run's sequence like any event of it.
    if (!ev.seq) return { state, effects }
  }
  // Session events ride their run's stream (and its numbering) without
  // naming the run: they count against the session's live run.
  const runId = runIdOf(ev) ?? (ev.seq ? Object.values(state.runs).find((r) => r.sessionId === p.session_id)?.runId : undefined)
  if (ev.type === 'run.error' && !ev.seq) {
    // A refused command (run.create on a busy session, an inject to a
    // finished run…): not part of any run's stream.
    const sid = typeof p.session_id === 'string' ? p.session_id : undefined
    return { state, effects: [{ type: 'notice', tone: 'error', message: `${p.message} (${p.code})`, sessionId: sid }] }
  }
  if (!runId || state.settled[runId]) return { state, effects }

  let run = state.runs[runId]
  if (!run) {
    if (ev.type !== 'run.started') return { state, effects: [...effects, { type: 'lookupRun', runId }] }
    run = newRun(runId, String(p.session_id), false, taskLinkOf(p))
    if (!run.task) effects.push({ type: 'firstSight', runId, sessionId: run.sessionId })
  }
  if (ev.seq && ev.seq <= run.lastSeq) return { state, effects } // a replayed duplicate

  run = { ...run, items: run.items.slice(), notes: run.notes }
  if (ev.seq) {
    if (ev.seq === 1 && ev.type === 'run.started') run.fromStart = true
    else if (run.fromStart && firstSeqOf(ev) > run.lastSeq + 1) {
      // A hole in a stream we hold whole: ask for the missing events once;
      // until they come (or a gap says they are gone) later ones wait.
      if (run.resubscribedFrom !== run.lastSeq) {
        run.resubscribedFrom = run.lastSeq
        effects.push({ type: 'resubscribe', runId, fromSeq: run.lastSeq })
        return { state: { ...state, runs: { ...state.runs, [runId]: run } }, effects }
      }
      return { state, effects }
    }
    run.lastSeq = ev.seq
    if (run.status === 'interrupted' && RESUMES.has(ev.type)) run.status = 'running'
  }
  fold(run, ev, effects)
  return { state: { ...state, runs: { ...state.runs, [runId]: run } }, effects }
}

/**
 * The first sequence an event stands for: a replay merges a stretch of old
 * fragments into one event covering first_seq…seq, which is no hole.
 */
function firstSeqOf(ev: ServerEvent): number {
  const p = ev.payload as { first_seq?: unknown } | null
  return typeof p?.first_seq === 'number' && p.first_seq > 0 ? p.first_seq : (ev.seq ?? 0)
}

function fold(run: LiveRun, ev: ServerEvent, effects: Effect[]) {
  const sid = run.sessionId
  if ('unknown' in ev) {
    run.notes = [...run.notes, { key: `${run.runId}:ev:${ev.seq ?? run.notes.length}`, kind: 'note', tone: 'info', runId: run.runId, title: `Event ${ev.type}`, text: JSON.stringify(ev.payload, null, 2) }]
    return
  }
  switch (ev.type) {
    case 'run.started': {
      const p = ev.payload
      // A run adopted mid-stream learns its task from the pinned run.started.
      run.task ??= taskLinkOf(p)
      const base = { key: `${run.runId}:user`, runId: run.runId }
      // A message may be images alone; a run with neither (a regenerate) has no message.
      const images = imagesOfAttachments(p.attachments)
      if (p.input && p.source === TASK_NOTIFICATION) run.items.push(taskNotice(base, p.input))
      else if (p.input || images.length) run.items.push({ ...base, kind: 'user', text: p.input, ...(images.length ? { images } : {}) })
      effects.push({ type: 'started', runId: run.runId, sessionId: sid })
      taskMoved(run, effects)
      return
    }
    case 'run.agent_start':
      run.agentName = ev.payload.agent_name
      return
    case 'run.reasoning': {
      if (run.openReasoning === undefined) {
        run.openReasoning = run.items.length
        run.items.push({ key: `${run.runId}:r:${ev.seq}`, kind: 'reasoning', runId: run.runId, text: '', streaming: true })
      }
      const r = run.items[run.openReasoning] as ReasoningItem
      run.items[run.openReasoning] = { ...r, text: r.text + ev.payload.delta }
      return
    }
    case 'run.step': {
      if (run.openText === undefined) {
        run.openText = run.items.length
        run.items.push({ key: `${run.runId}:t:${ev.seq}`, kind: 'assistant', runId: run.runId, text: '', streaming: true })
      }
      const a = run.items[run.openText] as AssistantItem
      run.items[run.openText] = { ...a, text: a.text + ev.payload.delta }
      return
    }
    case 'run.reasoning_item': {
      const text = ev.payload.text
      if (run.openReasoning !== undefined) {
        run.items[run.openReasoning] = { ...(run.items[run.openReasoning] as ReasoningItem), text, streaming: false }
        run.openReasoning = undefined
      } else if (text) {
        // No deltas came (a non-streaming block): it still precedes the turn's text.
        const item: ReasoningItem = { key: `${run.runId}:r:${ev.seq}`, kind: 'reasoning', runId: run.runId, text }
        if (run.openText !== undefined) {
          run.items.splice(run.openText, 0, item)
          run.openText++
        } else run.items.push(item)
      }
      return
    }
    case 'run.message': {
      const text = ev.payload.text
      if (run.openText !== undefined) {
        const a = run.items[run.openText] as AssistantItem
        if (text) run.items[run.openText] = { ...a, text, streaming: false }
        else run.items.splice(run.openText, 1)
        run.openText = undefined
      } else if (text) run.items.push({ key: `${run.runId}:m:${ev.seq}`, kind: 'assistant', runId: run.runId, text })
      return
    }
    case 'run.tool_call':
      closeStreams(run)
      run.items.push({
        key: `${run.runId}:c:${ev.payload.tool_call_id}`, kind: 'tool', runId: run.runId, callId: ev.payload.tool_call_id,
        name: ev.payload.tool_name, arguments: ev.payload.arguments, needsApproval: ev.payload.needs_approval || undefined,
      })
      return
    case 'run.tool_progress': {
      const i = findTool(run, ev.payload.call_id)
      if (i < 0) return
      const t = run.items[i] as ToolItem
      run.items[i] = { ...t, progress: (t.progress ?? '') + ev.payload.delta, display: ev.payload.renderer ? { ...t.display, renderer: ev.payload.renderer } : t.display }
      return
    }
    case 'run.tool_result': {
      const r = ev.payload
      const display: ToolItem['display'] = {}
      if (r.title) display.title = r.title
      if (r.summary) display.summary = r.summary
      if (r.renderer) display.renderer = r.renderer
      if (r.extra && Object.keys(r.extra).length) display.extra = r.extra
      const done = { output: r.output, isError: !!r.is_error, display: Object.keys(display).length ? display : undefined }
      const i = findTool(run, r.tool_call_id)
      if (i >= 0) run.items[i] = { ...(run.items[i] as ToolItem), ...done, handoff: false }
      else run.items.push({ key: `${run.runId}:c:${r.tool_call_id}`, kind: 'tool', runId: run.runId, callId: r.tool_call_id, name: '', arguments: '', orphan: true, ...done })
      effects.push({ type: 'toolResult', runId: run.runId, sessionId: sid, callId: r.tool_call_id })
      return
    }
    case 'run.handoff': {
      for (let i = run.items.length - 1; i >= 0; i--) {
        const t = run.items[i]
        if (t.kind === 'tool') {
          run.items[i] = { ...t, handoff: true }
          break
        }
      }
      return
    }
    case 'run.compaction':
      compaction(run, ev.payload.phase, ev.payload.detail ?? '', ev.seq)
      return
    case 'run.injected':
      closeStreams(run)
      run.items.push({ key: `${run.runId}:inj:${ev.payload.index}`, kind: 'user', runId: run.runId, text: ev.payload.input })
      return
    case 'run.diagnostic':
      run.notes = [...run.notes, {
        key: `${run.runId}:d:${ev.seq}`, kind: 'note', tone: 'warn', runId: run.runId, title: DIAGNOSTIC_TITLES[ev.payload.type] ?? ev.payload.type,
        code: ev.payload.code, text: ev.payload.message, details: ev.payload.details,
      }]
      return
    case 'run.interrupted':
      closeStreams(run)
      run.status = 'interrupted'
      effects.push({ type: 'interrupted', runId: run.runId, sessionId: sid })
      taskMoved(run, effects)
      return
    case 'run.output':
      end(run, 'completed', effects)
      return
    case 'run.error': {
      const e = ev.payload
      const where = e.guardrail ? ` — guardrail ${e.guardrail}${e.stage ? ` at ${e.stage}` : ''}` : ''
      run.notes = [...run.notes, { key: `${run.runId}:err`, kind: 'note', tone: 'error', runId: run.runId, title: 'The run failed', code: e.code, text: e.message + where, ending: true }]
      end(run, 'error', effects)
      return
    }
    case 'run.cancelled':
      run.notes = [...run.notes, { key: `${run.runId}:cancel`, kind: 'note', tone: 'info', runId: run.runId, title: 'Cancelled', text: ev.payload.reason, ending: true }]
      end(run, 'cancelled', effects)
      return
    case 'run.gap':
      gap(run, ev.payload.last_good, ev.payload.next, effects)
      return
    case 'trace.span':
      effects.push({ type: 'traces', sessionId: sid })
      return
    case 'task.updated':
    case 'session.title_updated':
    case 'session.project_bound':
      return
  }
}

/**
 * A pass at a turn boundary: "started" puts a pending marker in the turn,
 * "finished" turns it into the marker the reload draws (its detail is the
 * "~X → ~Y" of the stored checkpoint), or, when nothing was folded (the
 * summarizer failed, another pass won), into a note saying why.
 */
function compaction(run: LiveRun, phase: string, detail: string, seq?: number) {
  const at = run.items.findIndex((i) => i.kind === 'compaction' && i.pending)
  if (phase === 'started') {
    run.compacting = true
    closeStreams(run)
    if (at < 0) run.items.push({ key: `${run.runId}:compaction:${seq ?? run.items.length}`, kind: 'compaction', runId: run.runId, summary: '', detail: '', pending: true })
    return
  }
  run.compacting = false
  const done = detail.includes('→')
  if (at >= 0) {
    const pending = run.items[at] as CompactionItem
    if (done) run.items[at] = { ...pending, detail, pending: false }
    else run.items.splice(at, 1)
  } else if (done) run.items.push({ key: `${run.runId}:compaction:${seq ?? run.items.length}`, kind: 'compaction', runId: run.runId, summary: '', detail })
  if (!done && detail) {
    run.notes = [...run.notes, { key: `${run.runId}:compaction-note:${seq ?? run.notes.length}`, kind: 'note', tone: 'warn', runId: run.runId, title: 'Compaction', text: detail }]
  }
}

function findTool(run: LiveRun, callId: string): number {
  return run.items.findIndex((i) => i.kind === 'tool' && i.callId === callId)
}

function closeStreams(run: LiveRun) {
  if (run.openReasoning !== undefined) {
    const r = run.items[run.openReasoning]
    if (r?.kind === 'reasoning') run.items[run.openReasoning] = { ...r, streaming: false }
  }
  if (run.openText !== undefined) {
    const a = run.items[run.openText] as AssistantItem
    if (a.text) run.items[run.openText] = { ...a, streaming: false }
    else run.items.splice(run.openText, 1)
  }
  run.openText = undefined
  run.openReasoning = undefined
}

function end(run: LiveRun, status: RunStatus, effects: Effect[]) {
  closeStreams(run)
  run.status = status
  run.compacting = false
  // A pass the run never finished folded nothing.
  run.items = run.items.filter((i) => !(i.kind === 'compaction' && i.pending))
  effects.push({ type: 'ended', runId: run.runId, sessionId: run.sessionId })
  taskMoved(run, effects)
}

/**
 * A gap: events after lastGood up to next were dropped for this connection.
 * Nothing lost for us → ignore. A slow-subscriber gap (lastGood > 0) → the
 * ring still holds them: resubscribe from our cursor, once. lastGood 0 means
 * the ring moved past the run's start before we attached: nothing to ask
 * for, so the stored transcript stands in for what was lost and we keep
 * following from next.
 */
function gap(run: LiveRun, lastGood: number, next: number, effects: Effect[]) {
  if (run.lastSeq >= next - 1) return
  if (lastGood > 0 && run.fromStart && run.resubscribedFrom !== run.lastSeq) {
    run.resubscribedFrom = run.lastSeq
    effects.push({ type: 'resubscribe', runId: run.runId, fromSeq: run.lastSeq })
    return
  }
  run.fromStart = false
  run.items = []
  run.openText = undefined
  run.openReasoning = undefined
  run.lastSeq = next - 1
  effects.push({ type: 'refetchMessages', sessionId: run.sessionId })
}

/** Adopts a run first seen mid-stream (e.g. resumed by an approval in another tab); task is its task link, if any. */
export function adoptRun(state: LiveState, runId: string, sessionId: string, task?: TaskLink): LiveState {
  if (state.runs[runId] || state.settled[runId]) return state
  return { ...state, runs: { ...state.runs, [runId]: newRun(runId, sessionId, false, task) } }
}

/** Hands a finished run over to the stored transcript, keeping its notes. */
export function settleRun(state: LiveState, runId: string): LiveState {
  const run = state.runs[runId]
  if (!run) return state
  const runs = { ...state.runs }
  delete runs[runId]
  const settledNotes = run.notes.length ? { ...state.settledNotes, [runId]: { sessionId: run.sessionId, notes: run.notes } } : state.settledNotes
  return { runs, settledNotes, settled: { ...state.settled, [runId]: true } }
}
