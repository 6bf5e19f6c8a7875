// Stored entries (GET /sessions/:id/messages) → timeline items: the active
// branch only, a tool call joined with its output by call_id, unknown kinds
// and item types kept as generic items.
import type { Entry } from '../lib/api'
import { imagesOfContent } from '../lib/attachments'
import { callKey, keyByRun } from './keys'
import type { TimelineItem, ToolDisplay, ToolItem } from './model'
import { TASK_NOTIFICATION, taskNotice } from './taskNotice'

interface ItemShape {
  type?: string
  role?: string
  content?: unknown
  summary?: unknown
  call_id?: string
  name?: string
  arguments?: string
  output?: unknown
}

/** The text of a Responses content list (or a plain string). */
export function textOf(content: unknown): string {
  if (typeof content === 'string') return content
  if (!Array.isArray(content)) return ''
  return content
    .map((c) => (c && typeof c === 'object' && typeof (c as { text?: unknown }).text === 'string' ? (c as { text: string }).text : ''))
    .join('')
}

function reasoningText(it: ItemShape): string {
  const parts = Array.isArray(it.summary) ? it.summary : Array.isArray(it.content) ? it.content : []
  return parts
    .map((p) => (p && typeof p === 'object' ? String((p as { text?: unknown }).text ?? '') : ''))
    .filter(Boolean)
    .join('\n\n')
}

export function toolDisplay(d: Entry['display']): ToolDisplay | undefined {
  if (!d) return undefined
  const out: ToolDisplay = {}
  if (d.title) out.title = d.title
  if (d.summary) out.summary = d.summary
  if (d.renderer) out.renderer = d.renderer
  if (d.extra && Object.keys(d.extra).length) out.extra = d.extra
  return Object.keys(out).length ? out : undefined
}

/**
 * A card's display: the output's, with the call's over it. The read path
 * folds later updates of a card (a background task's ending on its
 * spawn_task call) onto the function_call entry, so what the call says is
 * newer: each field it sets wins, extras merge per key.
 */
export function mergeDisplay(output: ToolDisplay | undefined, call: ToolDisplay | undefined): ToolDisplay | undefined {
  if (!call) return output
  if (!output) return call
  const out: ToolDisplay = { ...output, ...call }
  if (output.extra || call.extra) out.extra = { ...output.extra, ...call.extra }
  return out
}

export function fromEntries(entries: Entry[]): TimelineItem[] {
  const out: TimelineItem[] = []
  const calls = new Map<string, ToolItem>()
  // A branch point's switcher rides on the attempt's first entry; when that
  // entry draws nothing (an empty message), the next item carries it.
  let carried: Entry['siblings'] = undefined
  for (const e of entries) {
    if (e.on_path === false || e.kind === 'update' || e.kind === 'leaf') continue
    const siblings: Entry['siblings'] = e.siblings ?? carried
    carried = siblings
    const before = out.length
    pushEntry(e, siblings)
    if (out.length > before || (e.item as ItemShape | undefined)?.type === 'function_call_output') carried = undefined
  }
  return keyByRun(out)

  function pushEntry(e: Entry, siblings: Entry['siblings']) {
    const base = { key: e.id, entryId: e.id, runId: e.run_id || undefined, siblings: siblings ?? undefined, ...(e.compacted ? { folded: true } : {}) }
    if (e.kind === 'annotation') {
      const d = e.display
      if (d?.kind === 'workflow_started') {
        const x = d.extra ?? {}
        out.push({ ...base, kind: 'workflow_start', workflow: d.title || x.workflow || 'a workflow', who: d.summary || x.started_by || '', taskId: x.task_id ?? '' })
        return
      }
      if (d?.kind === 'trigger_fired') {
        const x = d.extra ?? {}
        out.push({ ...base, kind: 'trigger_fired', trigger: d.title || x.trigger || 'a trigger', agent: d.summary || x.agent || 'an agent', triggerId: x.trigger_id ?? '' })
        return
      }
      const ending = d?.kind === 'run_error' || d?.kind === 'run_cancelled'
      const tone = d?.kind === 'error' || d?.kind === 'run_error' ? 'error' : 'info'
      const x = d?.extra ?? {}
      // The same words the live run.error note used.
      const where = x.guardrail ? ` — guardrail ${x.guardrail}${x.stage ? ` at ${x.stage}` : ''}` : ''
      out.push({
        ...base, kind: 'note', tone, title: d?.title || (tone === 'error' ? 'Error' : 'Note'), text: (e.text || d?.summary || '') + where,
        ...(ending ? { ending: true, code: d?.kind === 'run_error' ? x.code : undefined } : {}),
      })
      return
    }
    if (e.kind === 'compaction') {
      const count = Number(e.display?.extra?.folded)
      out.push({
        ...base, kind: 'compaction', summary: e.checkpoint?.summary ?? '', detail: e.display?.summary ?? '',
        ...(Number.isFinite(count) && count > 0 ? { count } : {}),
      })
      return
    }
    if (e.kind !== 'item') {
      out.push({ ...base, kind: 'unknown', label: `entry kind "${e.kind}"`, data: e.data ?? e })
      return
    }
    const it = (e.item ?? {}) as ItemShape
    switch (it.type) {
      case 'message': {
        const text = textOf(it.content)
        if (it.role === 'user' && e.source === TASK_NOTIFICATION) out.push(taskNotice(base, text, e.display))
        else if (it.role === 'user') {
          const images = imagesOfContent(it.content)
          out.push({ ...base, kind: 'user', text, ...(images.length ? { images } : {}), ...(e.parent_id ? { parentId: e.parent_id } : {}) })
        }
        else if (it.role === 'assistant') {
          // A static answer and an answer a stop cut short say so.
          const labelled = e.source === 'error_handler' || e.display?.kind === 'stopped'
          if (text) out.push({ ...base, kind: 'assistant', text, label: labelled ? e.display?.title : undefined })
        } else out.push({ ...base, kind: 'note', tone: 'info', title: `${it.role ?? 'system'} message`, text })
        break
      }
      case 'reasoning': {
        const text = reasoningText(it)
        if (text) out.push({ ...base, kind: 'reasoning', text })
        break
      }
      case 'function_call': {
        const tool: ToolItem = { ...base, kind: 'tool', callId: it.call_id ?? '', name: it.name ?? '', arguments: it.arguments ?? '' }
        const display = toolDisplay(e.display)
        if (display) tool.display = display
        calls.set(callKey(tool.runId, tool.callId), tool)
        out.push(tool)
        break
      }
      case 'function_call_output': {
        const output = typeof it.output === 'string' ? it.output : JSON.stringify(it.output)
        const found = calls.get(callKey(base.runId, it.call_id ?? ''))
        const tool: ToolItem = found ?? { ...base, kind: 'tool', callId: it.call_id ?? '', name: '', arguments: '', orphan: true }
        tool.output = output
        tool.display = mergeDisplay(toolDisplay(e.display), found?.display)
        tool.isError = e.display?.is_error === true || e.display?.kind === 'error'
        tool.handoff = e.display?.kind === 'handoff'
        if (!found) out.push(tool)
        break
      }
      default:
        out.push({ ...base, kind: 'unknown', label: `item type "${it.type ?? '?'}"`, data: e.item })
    }
  }
}
