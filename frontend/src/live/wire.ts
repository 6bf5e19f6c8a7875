// Connects the bus to the live store and the store's effects to the query
// cache: a finished run refetches its transcript and only then hands over
// (no flicker), a gap resubscribes or refetches, a title renames the row.
import type { QueryClient } from '@tanstack/react-query'
import { announce } from '../lib/announce'
import { api, ok, type Schemas, type Session, type Task } from '../lib/api'
import { bus } from '../lib/bus'
import { notify } from '../lib/notices'
import { keys, refresh } from '../lib/queries'
import { newerTask, patchTaskPage, upsertTask } from '../lib/tasks'
import { announcementOf } from '../timeline/announcements'
import type { Effect } from '../timeline/reduce'
import { liveStore } from './store'

export function wireLive(qc: QueryClient): () => void {
  const looked = new Set<string>()
  const timers = new Map<string, ReturnType<typeof setTimeout>>()
  /** Runs f once, a moment after the first of a burst of calls naming key. */
  function soon(key: string, f: () => void, ms = 300) {
    if (timers.has(key)) return
    timers.set(key, setTimeout(() => {
      timers.delete(key)
      f()
    }, ms))
  }

  async function ended(runId: string, sessionId: string) {
    await refresh(qc, keys.messages(sessionId), 'all').catch(() => {})
    // Hand over only to a transcript that holds the run; a failed refetch
    // keeps the live items on screen instead (for a whole run they are the same).
    if (qc.getQueryState(keys.messages(sessionId))?.status !== 'error') liveStore.settle(runId)
    for (const k of [keys.context(sessionId), keys.traces(sessionId), keys.runs(sessionId), keys.approvals(sessionId), keys.session(sessionId), keys.sessions])
      void refresh(qc, k)
    // A trigger's fire is recorded as its run starts: a list read at that
    // start may have missed it.
    void refresh(qc, keys.triggers)
  }

  liveStore.setEffectHandler((e: Effect) => {
    switch (e.type) {
      case 'resubscribe':
        bus.send({ type: 'run.subscribe', payload: { run_id: e.runId, from_seq: e.fromSeq } })
        return
      case 'refetchMessages':
        void refresh(qc, keys.messages(e.sessionId))
        return
      case 'firstSight':
        // A trigger's run leaves a note before its message; and the
        // trigger that fired it now says so (its last result).
        void refresh(qc, keys.messages(e.sessionId))
        void refresh(qc, keys.triggers)
        return
      case 'ended':
        void ended(e.runId, e.sessionId)
        return
      case 'started':
      case 'interrupted':
      case 'toolResult':
        void refresh(qc, keys.approvals(e.sessionId))
        // The runs list labels the trace panel's runs: a new one, and one
        // that waits on a decision, are listed as they stand.
        if (e.type !== 'toolResult') void refresh(qc, keys.runs(e.sessionId))
        if (e.type === 'started') {
          void refresh(qc, keys.sessions)
          // The run may have changed the session's planning phase.
          void refresh(qc, keys.session(e.sessionId))
        }
        return
      case 'title':
        qc.setQueryData<Session[]>(keys.sessions, (list) => list?.map((s) => (s.id === e.sessionId ? { ...s, name: e.title } : s)))
        qc.setQueryData<Session>(keys.session(e.sessionId), (s) => (s ? { ...s, name: e.title } : s))
        return
      case 'sessionChanged':
        void refresh(qc, keys.session(e.sessionId))
        // A project bind moves the project's session count.
        void refresh(qc, keys.projects)
        return
      case 'traces':
        soon(e.sessionId, () => void refresh(qc, keys.traces(e.sessionId)), 1500)
        return
      case 'lookupRun': {
        // A run first seen mid-stream (resumed after a restart or by another
        // tab's decision): learn its session, then replay what is retained.
        if (looked.has(e.runId)) return
        looked.add(e.runId)
        ok(api.GET('/api/v1/runs/{id}', { params: { path: { id: e.runId } } }))
          .then((r) => {
            const t = r.task
            liveStore.adopt(r.run_id, r.session_id, t ? { taskId: t.task_id, parentSessionId: t.parent_session_id, toolCallId: t.tool_call_id, label: t.label } : undefined)
            bus.send({ type: 'run.subscribe', payload: { run_id: r.run_id, from_seq: 0 } })
          })
          .catch(() => {})
        return
      }
      case 'notice':
        notify(e.message, e.tone)
        return
      case 'task':
        // A task's own run is never drawn in its parent's timeline: what it
        // changes there is the task list (and, paused, the approvals the
        // parent lists for it).
        if (e.task) {
          const t = e.task
          // A workflow a person started leaves a note in the conversation
          // that no event announces (the server writes it before it first
          // announces the task): the first sight of the task asks for it.
          const seen = qc.getQueryData<Task[]>(keys.tasks(e.parentSessionId))?.some((x) => x.task_id === t.task_id)
          if (t.kind === 'workflow' && seen === false) {
            void refresh(qc, keys.messages(e.parentSessionId))
            // A trigger may have started it: its last result moved.
            void refresh(qc, keys.triggers)
          }
          qc.setQueryData<Task[]>(keys.tasks(e.parentSessionId), (list) => upsertTask(list, t))
          qc.setQueryData<Task>(keys.task(e.taskId), (cur) => (cur ? newerTask(cur, t) : cur))
          // The hub's Runs: a listed execution moves in place at once, and
          // the list is asked again soon after (a new one is listed, and
          // two updates of one moment cannot leave it showing the older).
          if (t.kind === 'workflow') {
            qc.setQueriesData<Schemas['TaskListView']>({ queryKey: ['workflow-runs'] }, (page) => patchTaskPage(page, t))
            soon('workflow-runs', () => void refresh(qc, ['workflow-runs']))
          }
        }
        void refresh(qc, keys.tasks(e.parentSessionId))
        void refresh(qc, keys.task(e.taskId))
        void refresh(qc, keys.approvals(e.parentSessionId))
        return
    }
  })

  const offEvent = bus.onEvent((ev) => {
    const before = liveStore.get()
    liveStore.dispatch(ev)
    const said = announcementOf(before, liveStore.get(), ev)
    if (said) announce(said)
  })
  const offReconnect = bus.onReconnect(() => {
    // Pick every live stream back up where this tab left it.
    for (const r of Object.values(liveStore.get().runs)) {
      if (r.status === 'running' || r.status === 'interrupted') bus.send({ type: 'run.subscribe', payload: { run_id: r.runId, from_seq: r.lastSeq } })
    }
    void refresh(qc, keys.sessions)
    // Tasks that moved while the socket was down said so to nobody.
    void refresh(qc, ['tasks'])
    void refresh(qc, ['task'])
    void refresh(qc, ['workflow-runs'])
  })
  return () => {
    offEvent()
    offReconnect()
    liveStore.setEffectHandler(() => {})
  }
}
