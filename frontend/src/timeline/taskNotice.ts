// A wake-up run's input: the results of background tasks, written for the
// model as a user message starting "[task-notification] ". People are shown
// a compact note instead of a chat bubble; stored and live alike.
import type { TaskNoticeItem } from './model'

/** The entry source (and run.started source) of a wake-up's input. */
export const TASK_NOTIFICATION = 'task_notification'
export const NOTICE_TITLE = 'Background task results'

/** One task line of a notification, as the server writes it. */
export interface ReportedTask { taskId: string; status: string; attempt: number; label: string }

// task_id=<id> status=<status> attempt=<n> label="<Go-quoted>" result="<Go-quoted>"
const LINE = /^task_id=(\S+) status=(\S+) attempt=(\d+) label=("(?:[^"\\]|\\.)*") result=/gm

function unquote(q: string): string {
  try {
    return JSON.parse(q) as string
  } catch {
    return q.slice(1, -1)
  }
}

/** The tasks a notification reports, in its order. */
export function reportedTasks(text: string): ReportedTask[] {
  return [...text.matchAll(LINE)].map((m) => ({ taskId: m[1], status: m[2], attempt: Number(m[3]), label: unquote(m[4]) }))
}

/**
 * How many results a notification carries, in the server's words (the
 * entry's display.summary): `"label" status` for one, `N tasks reported`
 * for more. The label is quoted exactly as the text quotes it.
 */
export function noticeSummary(text: string): string {
  const lines = [...text.matchAll(LINE)]
  if (lines.length === 1) return `${lines[0][4]} ${lines[0][2]}`
  return `${lines.length} tasks reported`
}

/** The note drawn for a wake-up's input; display (stored entries) wins over what the text says. */
export function taskNotice(base: Omit<TaskNoticeItem, 'kind' | 'title' | 'summary' | 'text'>, text: string, display?: { title?: string; summary?: string } | null): TaskNoticeItem {
  return { ...base, kind: 'task_notice', title: display?.title || NOTICE_TITLE, summary: display?.summary || noticeSummary(text), text }
}
