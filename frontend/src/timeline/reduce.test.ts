import { describe, expect, it } from 'vitest'
import type { Entry } from '../lib/api'
import { parseFrame, type ServerEvent } from '../lib/events'
import { composeTimeline } from './compose'
import { fromEntries } from './fromEntries'
import { contentOf } from './model'
import { applyEvent, emptyLive, settleRun, type Effect, type LiveState } from './reduce'
import exec from './fixtures/exec.json'
import handoff from './fixtures/handoff.json'
import think from './fixtures/think.json'
import todo from './fixtures/todo.json'
import unknownTool from './fixtures/unknown-tool.json'

interface Fixture { events: unknown[]; entries: unknown[] }

function fold(frames: unknown[], state: LiveState = emptyLive()) {
  const effects: Effect[] = []
  for (const f of frames) {
    const ev = parseFrame(f) as ServerEvent
    const r = applyEvent(state, ev)
    state = r.state
    effects.push(...r.effects)
  }
  return { state, effects }
}

const runOf = (fx: Fixture) => (fx.events[0] as { payload: { run_id: string } }).payload.run_id

describe('a streamed turn equals its reload', () => {
  for (const [name, fx] of Object.entries({ todo, think, handoff, unknownTool, exec }) as [string, Fixture][]) {
    it(name, () => {
      const { state, effects } = fold(fx.events)
      const run = state.runs[runOf(fx)]
      expect(run.status).toBe('completed')
      expect(run.fromStart).toBe(true)
      expect(run.items.some((i) => 'streaming' in i && i.streaming)).toBe(false)
      const reloaded = fromEntries(fx.entries as Entry[])
      expect(run.items.map(contentOf)).toEqual(reloaded.map(contentOf))
      expect(effects.filter((e) => e.type === 'ended')).toHaveLength(1)
    })
  }

  it('the composed timeline shows a whole live run once, over its stored entries', () => {
    const fx = todo as Fixture
    const { state } = fold(fx.events)
    const stored = fromEntries(fx.entries as Entry[])
    const live = composeTimeline(stored, Object.values(state.runs))
    expect(live.map(contentOf)).toEqual(stored.map(contentOf))
    // After the hand-over the stored transcript alone is drawn.
    const settled = settleRun(state, runOf(fx))
    expect(settled.runs).toEqual({})
    expect(composeTimeline(stored, []).map(contentOf)).toEqual(stored.map(contentOf))
  })

  it('a failed run reads the same after a reload: its stored ending note replaces the live one', () => {
    const run = 'rf'
    const { state } = fold([
      { type: 'run.started', seq: 1, payload: { run_id: run, session_id: 's1', input: 'hi' } },
      { type: 'run.error', seq: 2, payload: { run_id: run, code: 'guardrail_tripwire', message: 'the output tripped', guardrail: 'no_secrets', stage: 'output' } },
    ])
    const live = state.runs[run].notes
    const settled = settleRun(state, run)
    const base = { created_at: '', compacted: false, on_path: true, seq: 1, run_id: run }
    const stored = fromEntries([
      { ...base, id: 'u', row_id: 'u', kind: 'item', source: 'user', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] } },
      { ...base, id: 'n', row_id: 'n', kind: 'annotation', text: 'the output tripped',
        display: { kind: 'run_error', title: 'The run failed', is_error: true, extra: { code: 'guardrail_tripwire', guardrail: 'no_secrets', stage: 'output' } } },
    ] as Entry[])
    const notes = composeTimeline(stored, [], settled.settledNotes[run].notes).filter((i) => i.kind === 'note')
    expect(notes).toHaveLength(1)
    expect(contentOf(notes[0])).toEqual(contentOf(live[0]))
    // Before the store has it, the live note stays.
    expect(composeTimeline(stored.slice(0, 1), [], settled.settledNotes[run].notes).filter((i) => i.kind === 'note')).toHaveLength(1)
  })

  it('a settled ending whose run is not on the branch shown (a stop, then an edit) is not drawn', () => {
    const run = 'rs'
    const { state } = fold([
      { type: 'run.started', seq: 1, payload: { run_id: run, session_id: 's1', input: 'count' } },
      { type: 'run.cancelled', seq: 2, payload: { run_id: run, reason: 'stopped' } },
    ])
    const notes = settleRun(state, run).settledNotes[run].notes
    expect(notes).toHaveLength(1)
    const base = { created_at: '', compacted: false, on_path: true, seq: 3, run_id: 'r2' }
    const edited = fromEntries([
      { ...base, id: 'u2', row_id: 'u2', kind: 'item', source: 'user', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'count more' }] } },
    ] as Entry[])
    expect(composeTimeline(edited, [], notes).filter((i) => i.kind === 'note')).toEqual([])
    const before = fromEntries([{ ...base, run_id: run, id: 'u1', row_id: 'u1', kind: 'item', source: 'user',
      item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'count' }] } }] as Entry[])
    expect(composeTimeline(before, [], notes).filter((i) => i.kind === 'note'), 'on its own branch').toHaveLength(1)
  })

  it('a selected MCP server that cannot serve the run is a warning note naming it, kept after the run', () => {
    const run = 'rm'
    const { state } = fold([
      { type: 'run.started', seq: 1, payload: { run_id: run, session_id: 's1', input: 'hi' } },
      { type: 'run.diagnostic', seq: 2, payload: { run_id: run, type: 'mcp_unavailable', code: 'upstream',
        message: 'The MCP server calc is unavailable: the server is disabled', details: { server: 'calc', tools: 'calc__add' } } },
      { type: 'run.output', seq: 3, payload: { run_id: run, output: 'done' } },
    ])
    const [note] = state.runs[run].notes
    expect(note).toMatchObject({ kind: 'note', tone: 'warn', title: 'MCP server unavailable', code: 'upstream',
      text: 'The MCP server calc is unavailable: the server is disabled', details: { server: 'calc', tools: 'calc__add' } })
    expect(settleRun(state, run).settledNotes[run].notes).toEqual([note])
  })

  it('a budget nearly used up is a warning note with the server\'s words, kept after the run', () => {
    const run = 'rb'
    const { state } = fold([
      { type: 'run.started', seq: 1, payload: { run_id: run, session_id: 's1', input: 'hi' } },
      { type: 'run.diagnostic', seq: 2, payload: { run_id: run, type: 'budget_near', message: 'Your daily budget is 80% used: $0.20 of $1.00 left.' } },
      { type: 'run.output', seq: 3, payload: { run_id: run, output: 'done' } },
    ])
    const [note] = state.runs[run].notes
    expect(note).toMatchObject({ kind: 'note', tone: 'warn', title: 'A budget is nearly used up', text: 'Your daily budget is 80% used: $0.20 of $1.00 left.' })
    expect(settleRun(state, run).settledNotes[run].notes).toEqual([note])
  })

  it('an MCP result keeps its server, tool and parts on the tool item, live and reloaded alike', () => {
    const run = 'rt'
    const extra = { server: 'everything', tool: 'echo', content: '[{"type":"text","text":"Echo: hi"}]' }
    const { state } = fold([
      { type: 'run.started', seq: 1, payload: { run_id: run, session_id: 's1', input: 'hi' } },
      { type: 'run.tool_call', seq: 2, payload: { run_id: run, tool_call_id: 'c1', tool_name: 'everything__echo', arguments: '{"message":"hi"}' } },
      { type: 'run.tool_result', seq: 3, payload: { run_id: run, tool_call_id: 'c1', output: 'Echo: hi', title: 'everything · echo', extra } },
    ])
    const base = { created_at: '', compacted: false, on_path: true, seq: 1, run_id: run }
    const stored = fromEntries([
      { ...base, id: 'c', row_id: 'c', kind: 'item', source: 'model', item: { type: 'function_call', call_id: 'c1', name: 'everything__echo', arguments: '{"message":"hi"}' } },
      { ...base, id: 'o', row_id: 'o', kind: 'item', source: 'tool', item: { type: 'function_call_output', call_id: 'c1', output: 'Echo: hi' },
        display: { kind: 'mcp', title: 'everything · echo', extra } },
    ] as Entry[])
    const live = state.runs[run].items.find((i) => i.kind === 'tool')
    expect(live?.kind === 'tool' && live.display?.extra).toEqual(extra)
    expect(contentOf(live!)).toEqual(contentOf(stored[0]))
  })

  it('a call id two runs share is two calls: a result never lands on another run\'s call', () => {
    const at = (run: string, seq: number) => ({ created_at: '', compacted: false, on_path: true, seq, run_id: run })
    const stored = fromEntries([
      { ...at('r1', 1), id: 'c1', row_id: 'c1', kind: 'item', source: 'model', item: { type: 'function_call', call_id: 'call_1', name: 'todo_write', arguments: '{}' } },
      // r2's call of the same id is not in view (paged off): its result stands alone.
      { ...at('r2', 5), id: 'o2', row_id: 'o2', kind: 'item', source: 'tool', item: { type: 'function_call_output', call_id: 'call_1', output: 'second' } },
    ] as Entry[])
    const tools = stored.filter((i) => i.kind === 'tool')
    expect(tools.map((t) => t.kind === 'tool' && [t.runId, t.name, t.output ?? null, !!t.orphan])).toEqual([['r1', 'todo_write', null, false], ['r2', '', 'second', true]])
  })

  it('renders the todo checklist data on the tool card', () => {
    const items = fromEntries((todo as Fixture).entries as Entry[])
    const tool = items.find((i) => i.kind === 'tool')
    expect(tool?.kind === 'tool' && tool.display?.renderer).toBe('todo')
    expect(tool?.kind === 'tool' && JSON.parse(tool.display?.extra?.todos ?? '[]')).toHaveLength(3)
  })
})

describe('replays and gaps', () => {
  const fx = todo as Fixture
  const frames = fx.events as { seq: number }[]

  it('drops duplicates when the bus replays a run after a reconnect', () => {
    const half = fold(frames.slice(0, 20))
    const again = fold(frames, half.state) // the replay from seq 1, then the rest
    const once = fold(frames)
    expect(again.state.runs[runOf(fx)].items.map(contentOf)).toEqual(once.state.runs[runOf(fx)].items.map(contentOf))
  })

  it('resubscribes from its cursor on a gap and ends whole', () => {
    const { state, effects } = fold([...frames.slice(0, 10), { type: 'run.gap', payload: { run_id: runOf(fx), dropped: 5, last_good: 10, next: 16 } }, ...frames.slice(15)])
    expect(effects).toContainEqual({ type: 'resubscribe', runId: runOf(fx), fromSeq: 10 })
    // The later events wait for the missing ones: nothing past the hole is applied.
    expect(state.runs[runOf(fx)].lastSeq).toBe(10)
    const resumed = fold(frames.slice(10), state)
    const once = fold(frames)
    expect(resumed.state.runs[runOf(fx)].items.map(contentOf)).toEqual(once.state.runs[runOf(fx)].items.map(contentOf))
  })

  it('refetches the transcript when the start is gone (last_good 0)', () => {
    const run = runOf(fx)
    // A late attach: run.started (pinned), then the ring from seq 40.
    const { state, effects } = fold([frames[0], { type: 'run.gap', payload: { run_id: run, dropped: 38, last_good: 0, next: 40 } }, ...frames.slice(39)])
    expect(effects.filter((e) => e.type === 'resubscribe')).toEqual([])
    expect(effects).toContainEqual({ type: 'refetchMessages', sessionId: state.runs[run].sessionId })
    const r = state.runs[run]
    expect(r.fromStart).toBe(false)
    expect(r.status).toBe('completed')
    // What follows the gap is still drawn, after the stored entries.
    expect(r.items.length).toBeGreaterThan(0)
    expect(r.items.every((i) => i.kind !== 'user')).toBe(true)
  })

  it('a second gap at the same cursor gives up and refetches', () => {
    const run = runOf(fx)
    const g = { type: 'run.gap', payload: { run_id: run, dropped: 5, last_good: 10, next: 16 } }
    const { effects } = fold([...frames.slice(0, 10), g, g])
    expect(effects.filter((e) => e.type === 'resubscribe')).toHaveLength(1)
    expect(effects.filter((e) => e.type === 'refetchMessages')).toHaveLength(1)
  })

  it('a run a restart ended: the stored ending after a reconnect, then the transcript', () => {
    const run = runOf(fx)
    // The server died at seq 10; the resubscribe answers from the run row.
    const g = { type: 'run.gap', payload: { run_id: run, dropped: 2, last_good: 10, next: 13 } }
    const end = { type: 'run.error', seq: 13, payload: { run_id: run, code: 'server_restarted', message: 'the server restarted during this run' } }
    const first = fold([...frames.slice(0, 10), g])
    expect(first.effects).toContainEqual({ type: 'resubscribe', runId: run, fromSeq: 10 })
    const { state, effects } = fold([g, end], first.state)
    expect(effects).toContainEqual({ type: 'refetchMessages', sessionId: state.runs[run].sessionId })
    expect(state.runs[run].status).toBe('error')
    expect(state.runs[run].notes.at(-1)).toMatchObject({ code: 'server_restarted' })
  })

  it('a hole without a gap event asks for the missing events once', () => {
    const { effects } = fold([...frames.slice(0, 5), ...frames.slice(8, 12)])
    expect(effects.filter((e) => e.type === 'resubscribe')).toEqual([{ type: 'resubscribe', runId: runOf(fx), fromSeq: 5 }])
  })
})

describe('a replay that merged old fragments', () => {
  const run = 'r1'
  const started = { type: 'run.started', seq: 1, payload: { run_id: run, session_id: 's1', input: 'hi' } }
  const step = (seq: number, delta: string, first?: number) =>
    ({ type: 'run.step', seq, payload: { run_id: run, delta, ...(first ? { first_seq: first } : {}) } })

  it('is no hole: its text joins the answer and later events apply', () => {
    const merged = fold([started, step(40, 'one two three ', 2), step(41, 'four'),
      { type: 'run.output', seq: 42, payload: { run_id: run, final_output: 'one two three four' } }])
    expect(merged.effects.filter((e) => e.type === 'resubscribe')).toEqual([])
    expect(merged.state.runs[run].status).toBe('completed')
    const oneByOne = fold([started, step(2, 'one '), step(3, 'two three '), step(4, 'four'),
      { type: 'run.output', seq: 5, payload: { run_id: run, final_output: 'one two three four' } }])
    expect(merged.state.runs[run].items.map(contentOf)).toEqual(oneByOne.state.runs[run].items.map(contentOf))
  })

  it('that starts past the cursor is still a hole', () => {
    const { effects } = fold([started, step(40, 'late', 5)])
    expect(effects.filter((e) => e.type === 'resubscribe')).toEqual([{ type: 'resubscribe', runId: run, fromSeq: 1 }])
  })
})

describe('unknowns are shown, never dropped', () => {
  const run = 'r1'
  const started = { type: 'run.started', seq: 1, payload: { run_id: run, session_id: 's1', input: 'hi' } }

  it('an unknown event type becomes a generic note', () => {
    const { state } = fold([started, { type: 'run.brand_new', seq: 2, payload: { run_id: run, x: 1 } }])
    const note = state.runs[run].notes[0]
    expect(note.title).toBe('Event run.brand_new')
    expect(note.text).toContain('"x": 1')
  })

  it('an unknown error code is kept with its code', () => {
    const { state } = fold([started, { type: 'run.error', seq: 2, payload: { run_id: run, code: 'quantum_flux', message: 'odd' } }])
    expect(state.runs[run].status).toBe('error')
    expect(state.runs[run].notes[0]).toMatchObject({ tone: 'error', code: 'quantum_flux', text: 'odd' })
    // …and outlives the hand-over to the stored transcript.
    const settled = settleRun(state, run)
    expect(settled.settledNotes[run].notes[0].code).toBe('quantum_flux')
  })

  it('a refused command is a notice, not the end of a run', () => {
    const { state, effects } = fold([started, { type: 'run.error', payload: { run_id: run, code: 'run_not_found', message: 'gone' } }])
    expect(state.runs[run].status).toBe('running')
    expect(effects).toContainEqual({ type: 'notice', tone: 'error', message: 'gone (run_not_found)', sessionId: undefined })
  })

  it('unknown entry kinds and item types become generic items', () => {
    const base = { created_at: '', compacted: false, on_path: true, seq: 1 }
    const items = fromEntries([
      { ...base, id: 'a', row_id: 'a', kind: 'hologram', data: { beam: 1 } },
      { ...base, id: 'b', row_id: 'b', kind: 'item', item: { type: 'web_search_call', query: 'q' } },
      { ...base, id: 'c', row_id: 'c', kind: 'annotation', text: 'restarted', display: { kind: 'error', title: 'Run interrupted by a restart' } },
      { ...base, id: 'd', row_id: 'd', kind: 'item', on_path: false, item: { type: 'message', role: 'user', content: 'hidden' } },
    ] as Entry[])
    expect(items.map((i) => i.kind)).toEqual(['unknown', 'unknown', 'note'])
    expect(items[0]).toMatchObject({ label: 'entry kind "hologram"', data: { beam: 1 } })
    expect(items[2]).toMatchObject({ tone: 'error', title: 'Run interrupted by a restart', text: 'restarted' })
  })

  it('branch points carry their switcher', () => {
    const base = { created_at: '', compacted: false, on_path: true, seq: 1, kind: 'item' }
    const siblings = { index: 1, count: 2, heads: ['x', 'y'], tips: ['x2', 'y2'] }
    const items = fromEntries([
      { ...base, id: 'u', row_id: 'u', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'q' }] } },
      { ...base, id: 'y', row_id: 'y', siblings, item: { type: 'reasoning', summary: [] } },
      { ...base, id: 'y2', row_id: 'y2', item: { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'a' }] } },
    ] as Entry[])
    expect(items[1]).toMatchObject({ kind: 'assistant', siblings })
  })
})

describe('sandbox commands (exec_command, the terminal renderer)', () => {
  const fx = exec as Fixture
  const frames = fx.events as { type: string; seq: number; payload: Record<string, unknown> }[]
  const at = (type: string) => frames.findIndex((f) => f.type === type)
  const toolOf = (state: LiveState) => state.runs[runOf(fx)].items.find((i) => i.kind === 'tool')

  it('appends each progress delta to the running call, then the result replaces it', () => {
    const progress = frames.filter((f) => f.type === 'run.tool_progress')
    expect(progress.length).toBeGreaterThan(1)
    const first = fold(frames.slice(0, at('run.tool_progress') + 1)).state
    expect(toolOf(first)).toMatchObject({ progress: 'hi-from-sandbox\n', display: { renderer: 'terminal' } })
    expect(toolOf(first)).not.toHaveProperty('output')
    const running = fold(frames.slice(0, at('run.tool_result'))).state
    expect(toolOf(running)).toMatchObject({ progress: progress.map((f) => f.payload.delta).join('') })
    const done = fold(frames.slice(0, at('run.tool_result') + 1)).state
    expect(toolOf(done)).toMatchObject({
      output: 'exit_code: 0\nstdout:\nhi-from-sandbox\nsecond-line', isError: false,
      display: { renderer: 'terminal', title: 'echo hi-from-sandbox; sleep 2; echo second-line', summary: 'exit 0' },
    })
  })

  it('progress for a call this view never saw is dropped, not drawn as a stray card', () => {
    const stray = { type: 'run.tool_progress', seq: at('run.tool_call') + 1, payload: { run_id: runOf(fx), call_id: 'nope', tool_name: 'exec_command', delta: 'x', renderer: 'terminal' } }
    const { state } = fold([...frames.slice(0, at('run.tool_call')), stray])
    expect(state.runs[runOf(fx)].items.filter((i) => i.kind === 'tool')).toEqual([])
  })

  it('a command that exited non-zero is an error, live and reloaded', () => {
    const fail = (o: string) => o.replace('exit_code: 0', 'exit_code: 3')
    const events = frames.map((f) => f.type === 'run.tool_result'
      ? { ...f, payload: { ...f.payload, output: fail(String(f.payload.output)), summary: 'exit 3', is_error: true } }
      : f)
    const entries = (fx.entries as Entry[]).map((e) => e.display?.renderer === 'terminal'
      ? { ...e, display: { ...e.display, summary: 'exit 3', is_error: true }, item: { ...(e.item as object), output: fail(String((e.item as { output: string }).output)) } }
      : e)
    const live = fold(events).state.runs[runOf(fx)].items
    const reloaded = fromEntries(entries as Entry[])
    expect(live.map(contentOf)).toEqual(reloaded.map(contentOf))
    expect(reloaded.find((i) => i.kind === 'tool')).toMatchObject({ isError: true })
  })
})

describe("a run this tab did not start (a trigger's, another tab's)", () => {
  const started = { type: 'run.started', seq: 1, payload: { run_id: 'tr-run', session_id: 's1', input: 'Review what was pushed' } }

  it('asks for the transcript again at its first sight: a trigger files its note before the message', () => {
    const { state, effects } = fold([started])
    expect(effects).toContainEqual({ type: 'firstSight', runId: 'tr-run', sessionId: 's1' })
    expect(state.runs['tr-run'].items.map((i) => i.kind)).toEqual(['user'])
  })

  it('is not asked for a run the tab started (adopted first) or a background task\'s', () => {
    const adopted = { ...emptyLive(), runs: { 'tr-run': { runId: 'tr-run', sessionId: 's1', status: 'running' as const, lastSeq: 0, fromStart: false, items: [], notes: [] } } }
    expect(fold([started], adopted).effects.filter((e) => e.type === 'firstSight')).toEqual([])
    const task = { type: 'run.started', seq: 1, payload: { run_id: 'k1', session_id: 'child', input: 'x', task_id: 't1', parent_session_id: 's1' } }
    expect(fold([task]).effects.filter((e) => e.type === 'firstSight')).toEqual([])
  })
})
