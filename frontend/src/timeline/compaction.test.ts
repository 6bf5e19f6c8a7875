// A compaction as both sources draw it: the stored checkpoint (an inline
// marker where the fold happened, folded entries flagged) and the live
// run.compaction events (a pending note, then the same marker).
import { describe, expect, it } from 'vitest'
import type { Entry } from '../lib/api'
import { parseFrame, type ServerEvent } from '../lib/events'
import { fromEntries } from './fromEntries'
import { contentOf } from './model'
import { applyEvent, emptyLive, type LiveState } from './reduce'

function fold(frames: unknown[], state: LiveState = emptyLive()) {
  for (const f of frames) state = applyEvent(state, parseFrame(f) as ServerEvent).state
  return state
}

const base = { created_at: '', compacted: false, on_path: true, seq: 1 }
const msg = (id: string, role: string, text: string, compacted = false, run_id = 'r0'): Entry =>
  ({ ...base, id, row_id: id, run_id, kind: 'item', compacted, item: { type: 'message', role, content: [{ type: 'output_text', text }] } }) as unknown as Entry
const checkpoint = (id: string, run_id = ''): Entry => ({
  ...base, id, row_id: id, run_id, kind: 'compaction',
  checkpoint: { summary: 'SUMMARY: three questions.', excluded_ids: ['u1', 'a1'] },
  display: { kind: 'compaction', title: 'Conversation compacted', summary: '~12.3k → ~2.1k', extra: { folded: '2', before_tokens: '12300', after_tokens: '2100' } },
}) as unknown as Entry

describe('a stored compaction', () => {
  const items = fromEntries([msg('u1', 'user', 'first', true), msg('a1', 'assistant', 'one', true), msg('u2', 'user', 'second'), msg('a2', 'assistant', 'two'), checkpoint('c1')])

  it('draws the marker at its place, with the sizes, the count and the summary', () => {
    expect(items.map((i) => i.kind)).toEqual(['user', 'assistant', 'user', 'assistant', 'compaction'])
    expect(items[4]).toMatchObject({ kind: 'compaction', detail: '~12.3k → ~2.1k', summary: 'SUMMARY: three questions.', count: 2, entryId: 'c1' })
    expect(items[4].folded).toBeUndefined()
  })

  it('keeps folded entries, flagged, and the rest unflagged', () => {
    expect(items.map((i) => !!i.folded)).toEqual([true, true, false, false, false])
    expect(items[0]).toMatchObject({ kind: 'user', text: 'first' })
  })
})

describe('run.compaction', () => {
  const started = [
    { type: 'run.started', seq: 1, payload: { run_id: 'r1', session_id: 's1', input: 'third' } },
    { type: 'run.compaction', seq: 2, payload: { run_id: 'r1', phase: 'started' } },
  ]

  it('started puts a pending note in the running turn', () => {
    const run = fold(started).runs.r1
    expect(run.compacting).toBe(true)
    expect(run.items[1]).toMatchObject({ kind: 'compaction', pending: true })
  })

  it('finished turns it into the marker the reload draws', () => {
    const state = fold([...started,
      { type: 'run.compaction', seq: 3, payload: { run_id: 'r1', phase: 'finished', detail: '~12.3k → ~2.1k' } },
      { type: 'run.message', seq: 4, payload: { run_id: 'r1', text: 'three' } },
      { type: 'run.output', seq: 5, payload: { run_id: 'r1', output: 'three' } },
    ])
    const run = state.runs.r1
    expect(run.compacting).toBe(false)
    expect(run.items.filter((i) => i.kind === 'compaction')).toHaveLength(1)
    const reloaded = fromEntries([msg('u3', 'user', 'third', false, 'r1'), checkpoint('c1', 'r1'), msg('a3', 'assistant', 'three', false, 'r1')])
    expect(run.items.map(contentOf)).toEqual(reloaded.map(contentOf))
  })

  it('a pass that folded nothing leaves a note, not a marker', () => {
    const run = fold([...started, { type: 'run.compaction', seq: 3, payload: { run_id: 'r1', phase: 'finished', detail: 'failed: the model is down' } }]).runs.r1
    expect(run.items.some((i) => i.kind === 'compaction')).toBe(false)
    expect(run.notes).toEqual([expect.objectContaining({ kind: 'note', tone: 'warn', text: 'failed: the model is down' })])
  })

  it('a run that ends mid-pass drops the pending note', () => {
    const run = fold([...started, { type: 'run.cancelled', seq: 3, payload: { run_id: 'r1', reason: 'stopped' } }]).runs.r1
    expect(run.items.some((i) => i.kind === 'compaction')).toBe(false)
    expect(run.compacting).toBe(false)
  })
})

describe('an answer a stop cut short', () => {
  it('is kept, labelled as stopped', () => {
    const stopped = { ...msg('a1', 'assistant', 'one two thr'), display: { kind: 'stopped', title: 'Stopped', summary: 'The answer was cut short.' } } as Entry
    const items = fromEntries([msg('u1', 'user', 'count'), stopped])
    expect(items[1]).toMatchObject({ kind: 'assistant', text: 'one two thr', label: 'Stopped' })
  })
})
