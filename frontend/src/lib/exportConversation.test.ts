// Exports: only the active branch, each speaker named, tool calls as a line
// and their arguments, the JSON carrying the entries as the API gave them.
import { describe, expect, it } from 'vitest'
import type { Entry, Session } from './api'
import { activeBranch, exportFileName, slugOf, toJSON, toMarkdown } from './exportConversation'

let n = 0
function entry(item: unknown, extra: Partial<Entry> = {}): Entry {
  n++
  return { id: `e${n}`, row_id: `r${n}`, seq: n, kind: 'item', compacted: false, created_at: '2025-01-01T00:00:00Z', on_path: true, item, ...extra }
}
const user = (text: string, extra?: Partial<Entry>) => entry({ type: 'message', role: 'user', content: [{ type: 'input_text', text }] }, extra)
const answer = (text: string, extra?: Partial<Entry>) => entry({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text }] }, extra)

const session: Session = {
  id: 's1', name: 'Release plan: v2 (draft)', owner_id: 'u1', pinned: false, planning: false, agent_config_id: 'a1',
  created_at: '2025-01-01T00:00:00Z', updated_at: '2025-01-02T00:00:00Z',
}
const now = new Date('2025-02-03T04:05:06Z')

const entries = [
  user('Plan the release'),
  answer('An abandoned attempt', { on_path: false }),
  entry({}, { kind: 'leaf' }),
  answer('Here is the plan:\n\n```go\nfunc main() {}\n```'),
  entry({ type: 'function_call', call_id: 'c1', name: 'todo_write', arguments: '{"todos":[{"content":"Ship it"}]}' }),
  entry({ type: 'function_call_output', call_id: 'c1', output: 'Checklist saved' }, { display: { summary: '1 item' } as Entry['display'] }),
  entry({ type: 'reasoning', summary: [{ text: 'private thoughts' }] }),
]

describe('exporting a conversation', () => {
  it('keeps the active branch only, without leaf markers', () => {
    expect(activeBranch(entries).map((e) => e.id)).toEqual(['e1', 'e4', 'e5', 'e6', 'e7'])
  })

  it('writes Markdown with a title and each speaker', () => {
    const md = toMarkdown({ session, agentName: 'Planner', entries, now })
    expect(md.startsWith('# Release plan: v2 (draft)\n')).toBe(true)
    expect(md).toContain('**You**\n\nPlan the release')
    expect(md).toContain('**Planner**\n\nHere is the plan:\n\n```go\nfunc main() {}\n```')
    expect(md).toContain('**Tool call:** `todo_write`\n\n```json\n{\n  "todos": [')
    expect(md).toContain('Result: 1 item')
    expect(md).not.toContain('An abandoned attempt')
    expect(md).not.toContain('private thoughts')
  })

  it('says how many images a message carried', () => {
    const withImages = entry({ type: 'message', role: 'user', content: [
      { type: 'input_text', text: 'look' },
      { type: 'input_image', attachment_id: 'a1', mime: 'image/png', width: 1, height: 1 },
      { type: 'input_image', attachment_id: 'a2', mime: 'image/png', width: 1, height: 1 },
    ] })
    expect(toMarkdown({ session, entries: [withImages], now })).toContain('**You**\n\nlook\n\n_(2 images)_')
  })

  it("writes a trigger's note as its label, before the brief it sent", () => {
    const note = entry({}, { kind: 'annotation', text: 'Trigger "nightly" asked Reviewer.', display: { kind: 'trigger_fired', title: 'nightly', summary: 'Reviewer' } as Entry['display'] })
    const md = toMarkdown({ session, entries: [note, user('Review the day')], now })
    expect(md).toContain('> _⚡ nightly asked Reviewer_\n\n**You**\n\nReview the day')
  })

  it('fences arguments that hold backticks with a longer fence', () => {
    const md = toMarkdown({ session, entries: [entry({ type: 'function_call', call_id: 'c9', name: 'write', arguments: '"```"' })], now })
    expect(md).toContain('````json\n"```"\n````')
  })

  it('writes JSON with the session, the time and the on-path entries as given', () => {
    const doc = JSON.parse(toJSON({ session, agentName: 'Planner', entries, now }))
    expect(doc.session).toMatchObject({ id: 's1', title: 'Release plan: v2 (draft)', agent: 'Planner', agent_config_id: 'a1' })
    expect(doc.exported_at).toBe('2025-02-03T04:05:06.000Z')
    expect(doc.messages).toEqual(activeBranch(entries))
  })

  it('names files after the title', () => {
    expect(slugOf('Release plan: v2 (draft)')).toBe('release-plan-v2-draft')
    expect(slugOf('Café — ünïcode')).toBe('cafe-unicode')
    expect(slugOf('!!!')).toBe('conversation')
    expect(exportFileName(session, 'md')).toBe('release-plan-v2-draft.md')
    expect(exportFileName({ ...session, name: '' }, 'json')).toBe('new-conversation.json')
  })
})
