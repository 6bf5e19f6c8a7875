// The conversation as the UI draws it. Both sources produce these items:
// stored entries (fromEntries) and live events (reduce), so a streamed turn
// and its reload render through the same components.

export interface Siblings { index: number; count: number; heads: string[]; tips: string[] }

interface Base {
  key: string
  runId?: string
  /** The stored entry behind the item (branch, fork and regenerate need it); absent while live. */
  entryId?: string
  siblings?: Siblings | null
  /** Folded into a compaction summary (entry.compacted): still shown, but the model no longer sees it. */
  folded?: boolean
}

import type { MessageImage } from '../lib/attachments'

export interface ToolDisplay { title?: string; summary?: string; renderer?: string; extra?: Record<string, string> }

/**
 * images: what the message carried besides its text (input_image parts, run.started attachments).
 * parentId: the entry before it on its branch (stored only): editing branches there, so the
 * edit becomes its sibling.
 */
export interface UserItem extends Base { kind: 'user'; text: string; images?: MessageImage[]; parentId?: string }
export interface AssistantItem extends Base { kind: 'assistant'; text: string; streaming?: boolean; label?: string }
export interface ReasoningItem extends Base { kind: 'reasoning'; text: string; streaming?: boolean }
export interface ToolItem extends Base {
  kind: 'tool'
  callId: string
  name: string
  arguments: string
  output?: string
  isError?: boolean
  handoff?: boolean
  display?: ToolDisplay
  /** Partial output a running tool streamed (run.tool_progress). */
  progress?: string
  needsApproval?: boolean
  /** A result whose call this view never saw (paged off, or joined mid-run). */
  orphan?: boolean
}
export interface NoteItem extends Base {
  kind: 'note'
  tone: 'info' | 'warn' | 'error'
  title: string
  text?: string
  code?: string
  details?: Record<string, string>
  /** How its run ended (error or cancellation): the stored note replaces the live one. */
  ending?: boolean
}
/**
 * A compaction marker where the fold happened: "Conversation compacted ·
 * ~12.3k → ~2.1k", opening to the summary the model reads instead. Live,
 * pending while the summarizer works; the summary only comes with the reload.
 */
export interface CompactionItem extends Base {
  kind: 'compaction'
  summary: string
  /** The sizes before and after ("~12.3k → ~2.1k"). */
  detail: string
  /** How many entries were folded (reload only). */
  count?: number
  pending?: boolean
}
/**
 * A wake-up's input: the background task results the model reads as a user
 * message. People see a compact note (title · summary) that opens to the raw text.
 */
export interface TaskNoticeItem extends Base { kind: 'task_notice'; title: string; summary: string; text: string }
/**
 * A workflow a person (or, later, a trigger) started into the conversation:
 * the note the start left (display.kind workflow_started). Drawn as a chip
 * naming what started and who asked, opening the execution; the brief is
 * read there, not repeated here.
 */
export interface WorkflowStartItem extends Base { kind: 'workflow_start'; workflow: string; who: string; taskId: string }
/**
 * A trigger asked an agent in the conversation: the note the fire left
 * (display.kind trigger_fired) right before the message holding the brief.
 * Drawn as a chip naming the trigger and the agent, people-only; the brief
 * is the message that follows.
 */
export interface TriggerFiredItem extends Base { kind: 'trigger_fired'; trigger: string; agent: string; triggerId: string }
/** Something this build does not know (an entry kind, an item type, an event): shown as its raw data. */
export interface UnknownItem extends Base { kind: 'unknown'; label: string; data: unknown }

export type TimelineItem = UserItem | AssistantItem | ReasoningItem | ToolItem | NoteItem | CompactionItem | TaskNoticeItem | WorkflowStartItem | TriggerFiredItem | UnknownItem

/** The comparable content of an item, without keys, ids and streaming flags. */
export function contentOf(item: TimelineItem): Record<string, unknown> {
  switch (item.kind) {
    case 'user':
      return { kind: item.kind, text: item.text, images: item.images ?? [] }
    case 'assistant':
    case 'reasoning':
      return { kind: item.kind, text: item.text }
    case 'tool':
      return {
        kind: 'tool', callId: item.callId, name: item.name, arguments: item.arguments, output: item.output,
        isError: !!item.isError, handoff: !!item.handoff, display: item.display ?? null,
      }
    case 'note':
      return { kind: 'note', tone: item.tone, title: item.title, text: item.text, code: item.code }
    case 'compaction':
      // The live marker has no summary (the event carries only the sizes).
      return { kind: 'compaction', detail: item.detail }
    case 'task_notice':
      return { kind: 'task_notice', title: item.title, summary: item.summary, text: item.text }
    case 'workflow_start':
      return { kind: 'workflow_start', workflow: item.workflow, who: item.who, taskId: item.taskId }
    case 'trigger_fired':
      return { kind: 'trigger_fired', trigger: item.trigger, agent: item.agent, triggerId: item.triggerId }
    case 'unknown':
      return { kind: 'unknown', label: item.label, data: item.data }
  }
}
