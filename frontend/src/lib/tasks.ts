// Background tasks as the UI reads them: how a status is shown, which
// actions a task allows, and how a task.updated folds into a list held in
// the query cache. Pure, so it is unit-tested.
import type { Task, TaskInfo } from './api'

export type TaskStatus = Task['status']

/** The tone classes of .pill (pill-ok, pill-run…). */
export type Tone = 'ok' | 'run' | 'warn' | 'error' | 'muted'

/** A task's status chip: queued is a working task waiting behind the conversation's live-task cap. */
export function taskChip(t: Pick<Task, 'status'> & { queued?: boolean }): { label: string; tone: Tone } {
  switch (t.status) {
    case 'working':
      return t.queued ? { label: 'Queued', tone: 'muted' } : { label: 'Working', tone: 'run' }
    case 'input_required':
      return { label: 'Waiting for approval', tone: 'warn' }
    case 'completed':
      return { label: 'Completed', tone: 'ok' }
    case 'failed':
      return { label: 'Failed', tone: 'error' }
    case 'cancelled':
      return { label: 'Cancelled', tone: 'muted' }
    default:
      return { label: String(t.status), tone: 'muted' }
  }
}

/** Still working or waiting on a decision (a queued one included). */
export const isLive = (t: Pick<Task, 'status'>) => t.status === 'working' || t.status === 'input_required'
/** Stop: only a live task. */
export const canStop = isLive
/** Retry: a failed task with attempts left (the cap may still refuse: the server says so). */
export const canRetry = (t: Pick<Task, 'status' | 'attempt' | 'max_attempts'>) => t.status === 'failed' && t.attempt < (t.max_attempts || 3)
/** Dismiss: a final task not yet dismissed. */
export const canDismiss = (t: Pick<Task, 'status' | 'dismissed'>) => !isLive(t) && !t.dismissed

/** "attempt 2/3". */
export const attemptText = (t: Pick<Task, 'attempt' | 'max_attempts'>) => `attempt ${t.attempt}/${t.max_attempts || 3}`

/**
 * Whether timestamp a is before b. Compared as instants, not as text: the
 * server trims trailing zeros from fractions ("…28.84Z" is before
 * "…28.844Z", though it sorts after it as text).
 */
export const isBefore = (a: string, b: string) => Date.parse(a) < Date.parse(b)

/**
 * The task to cache: cur unless t is at least as new (an answer that left
 * the server before the bus said more — a start's "working" after the run
 * already failed — never overwrites what the bus said). Without cur, t.
 */
export function newerTask(cur: Task | undefined, t: TaskInfo | Task): Task {
  return cur && isBefore(t.updated_at, cur.updated_at) ? cur : ({ ...cur, ...t } as Task)
}

const newestFirst = (a: Task, b: Task) => (a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : 0)

/**
 * A session's task list with one task as the server now has it: replaced in
 * place (keeping what the event does not carry, the parent's name) unless
 * the list's copy is newer, or added newest first. No list yet stays none.
 */
export function upsertTask(list: Task[] | undefined, t: TaskInfo | Task): Task[] | undefined {
  if (!list) return list
  const i = list.findIndex((x) => x.task_id === t.task_id)
  if (i < 0) return [...list, { ...t } as Task].sort(newestFirst)
  // An older row (events can cross a refetch) never overwrites a newer one.
  const merged = newerTask(list[i], t)
  if (merged === list[i]) return list
  const out = list.slice()
  out[i] = merged
  return out
}

/** The tasks to list: the live and final ones, and (apart) the dismissed ones. */
export function splitDismissed(list: Task[]): { shown: Task[]; dismissed: Task[] } {
  return { shown: list.filter((t) => !t.dismissed), dismissed: list.filter((t) => t.dismissed) }
}

/** "1 working · 2 completed": what the list holds, by chip, in the order chips first appear. */
export function tally(list: Task[]): string {
  const counts = new Map<string, number>()
  for (const t of list) {
    const l = taskChip(t).label.toLowerCase()
    counts.set(l, (counts.get(l) ?? 0) + 1)
  }
  return [...counts].map(([l, n]) => `${n} ${l}`).join(' · ')
}

/**
 * A page of a cross-conversation task list with one task as the server now
 * has it: replaced in place when the page holds it (keeping the
 * conversation's name the event does not carry) and the row is not newer;
 * otherwise the page as it was (a new task's place is the server's to say).
 */
export function patchTaskPage<P extends { tasks: Task[] }>(page: P | undefined, t: TaskInfo | Task): P | undefined {
  if (!page) return page
  const i = page.tasks.findIndex((x) => x.task_id === t.task_id)
  const merged = i < 0 ? undefined : newerTask(page.tasks[i], t)
  if (!merged || merged === page.tasks[i]) return page
  const tasks = page.tasks.slice()
  tasks[i] = merged
  return { ...page, tasks }
}
