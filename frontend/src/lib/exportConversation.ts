// A conversation as a file: the ACTIVE branch only (an abandoned attempt is
// still stored, but it is not what the conversation says), as Markdown for
// people or as JSON with the entries exactly as the API returned them.
import { fromEntries } from '../timeline/fromEntries'
import type { TimelineItem } from '../timeline/model'
import type { Entry, Session } from './api'

export interface ExportSource {
  session: Session
  /** The agent that answers, for the speaker lines; "Assistant" when unknown. */
  agentName?: string
  /** Every entry of the session, oldest first, on and off the active branch. */
  entries: Entry[]
  now?: Date
}

/** The entries of the active branch: what the conversation says now. Leaf markers only move the branch. */
export function activeBranch(entries: Entry[]): Entry[] {
  return entries.filter((e) => e.on_path !== false && e.kind !== 'leaf')
}

/** A file name from a title: lower case, words joined by dashes, never empty. */
export function slugOf(title: string): string {
  const slug = title
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60)
    .replace(/-+$/, '')
  return slug || 'conversation'
}

export const titleOf = (s: Session) => s.name || 'New conversation'

/** The file name of an export: `<title-slug>.md` or `.json`. */
export const exportFileName = (s: Session, ext: 'md' | 'json') => `${slugOf(titleOf(s))}.${ext}`

/** A fence longer than any backtick run inside the text, so code never closes it early. */
function fence(text: string, lang = ''): string {
  const longest = Math.max(2, ...Array.from(text.matchAll(/`+/g), (m) => m[0].length))
  const f = '`'.repeat(longest + 1)
  return `${f}${lang}\n${text}\n${f}`
}

function prettyJSON(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2)
  } catch {
    return text
  }
}

/** A tool result in a line: its card's summary, else the start of its output. */
function resultLine(output: string | undefined, summary: string | undefined, isError: boolean | undefined): string {
  if (output === undefined) return '_No result._'
  const text = (summary || output).replace(/\s+/g, ' ').trim()
  const short = text.length > 200 ? `${text.slice(0, 200)}…` : text
  return `${isError ? 'Error' : 'Result'}: ${short || '(empty)'}`
}

function itemMarkdown(item: TimelineItem, agent: string): string | null {
  switch (item.kind) {
    case 'user': {
      const n = item.images?.length ?? 0
      const images = n ? `_(${n} image${n === 1 ? '' : 's'})_` : ''
      return `**You**\n\n${[item.text, images].filter(Boolean).join('\n\n')}`
    }
    case 'assistant':
      return `**${agent}**${item.label ? ` _(${item.label})_` : ''}\n\n${item.text}`
    case 'tool': {
      const name = item.display?.title && item.display.title !== item.name ? `${item.name} — ${item.display.title}` : item.name || 'tool'
      const args = item.arguments && item.arguments !== '{}' ? `\n\n${fence(prettyJSON(item.arguments), 'json')}` : ''
      return `**Tool call:** \`${name}\`${args}\n\n${resultLine(item.output, item.display?.summary, item.isError)}`
    }
    case 'note':
      return `> _${item.title}${item.text ? `: ${item.text.replace(/\n+/g, ' ')}` : ''}_`
    case 'compaction':
      return `> _Conversation compacted${item.detail ? ` · ${item.detail}` : ''}_`
    case 'task_notice':
      return `**${item.title}**${item.summary ? ` · ${item.summary}` : ''}`
    case 'workflow_start':
      return `> _▶ ${item.workflow}${item.who ? ` (${item.who})` : ''}_`
    case 'trigger_fired':
      return `> _⚡ ${item.trigger} asked ${item.agent}_`
    case 'reasoning':
    case 'unknown':
      // The model's private notes and what this build cannot read are not the conversation.
      return null
  }
}

/** The active branch as Markdown: a title line, then each message with its speaker. */
export function toMarkdown({ session, agentName, entries, now = new Date() }: ExportSource): string {
  const agent = agentName || 'Assistant'
  const parts = [`# ${titleOf(session)}`, `_Exported from agents-server on ${now.toISOString()}_`]
  for (const item of fromEntries(activeBranch(entries))) {
    const md = itemMarkdown(item, agent)
    if (md) parts.push(md)
  }
  return `${parts.join('\n\n')}\n`
}

/** The active branch as JSON: the session, when, and its entries as the API returned them. */
export function toJSON({ session, agentName, entries, now = new Date() }: ExportSource): string {
  const doc = {
    session: {
      id: session.id,
      title: titleOf(session),
      agent: agentName ?? null,
      agent_config_id: session.agent_config_id ?? null,
      project_id: session.project_id ?? null,
      created_at: session.created_at,
      updated_at: session.updated_at,
    },
    exported_at: now.toISOString(),
    messages: activeBranch(entries),
  }
  return `${JSON.stringify(doc, null, 2)}\n`
}
