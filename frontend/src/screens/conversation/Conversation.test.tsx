// @vitest-environment jsdom
// The conversation view as a user sees it: a stored conversation (what a
// reload draws), and live runs replayed from recorded bus events into the
// live store — streaming text, tool cards filling in, a run that waits for
// approval, one that fails and one that is cancelled. The server's answers
// sit in the query cache; nothing is fetched.
import { act, screen, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { beforeEach, describe, expect, it } from 'vitest'
import type { Agent, Approval, Entry, Session } from '../../lib/api'
import type { ServerEvent } from '../../lib/events'
import { keys } from '../../lib/queries'
import { liveStore } from '../../live/store'
import { renderWithData } from '../../test/render'
import { eventsThrough, runs, type Recorded } from '../../test/timeline'
import { Conversation } from './Conversation'

const agent = { id: 'a1', name: 'Planner', avatar: '/avatars/owl.svg', model: 'todo' } as Agent

function show(r: Recorded, { entries = [] as Entry[], approvals = [] as Approval[], name = '' } = {}) {
  const session = { id: r.sessionId, name, agent_config_id: agent.id, owner_id: 'u1', pinned: false, planning: false, created_at: '', updated_at: '' } satisfies Session
  return renderWithData(<Conversation sessionId={r.sessionId} inspectorOpen={false} onToggleInspector={() => {}} />, [
    [keys.session(r.sessionId), session],
    [keys.messages(r.sessionId), { pages: [entries], pageParams: [''] }],
    [keys.approvals(r.sessionId), approvals],
    [keys.tasks(r.sessionId), []],
    [keys.agents, [agent]],
    [keys.workflows, []],
    [keys.projectList(false), []],
  ])
}

/** Replays events into the live store, as the bus would deliver them. */
function replay(events: ServerEvent[]) {
  act(() => events.forEach((ev) => liveStore.dispatch(ev)))
}

const view = () => screen.getByRole('region', { name: 'Conversation' })
const header = () => view().querySelector('.conv-head') as HTMLElement
const assistant = () => [...view().querySelectorAll<HTMLElement>('.msg-assistant')]

beforeEach(() => {
  liveStore.reset()
})

describe('a stored conversation', () => {
  it('reads as it was written: question, thought, checklist card, answer', () => {
    show(runs.todo, { entries: runs.todo.entries, name: 'Release checklist' })
    expect(screen.getByRole('heading', { level: 1 })).toHaveTextContent('Release checklist')
    expect(view()).toHaveAttribute('data-run-status', 'idle')
    expect(within(header()).queryByText('Running')).not.toBeInTheDocument()

    expect(view().querySelector('.msg-user .bubble')).toHaveTextContent('make a plan')
    const thought = screen.getByText('Thought').closest('details')
    expect(thought).not.toHaveAttribute('open')
    expect(thought).toHaveTextContent('The user wants a plan; a checklist keeps it honest.')

    const card = view().querySelector('.tool-card[data-tool="todo_write"]') as HTMLElement
    expect(within(card).getByText('Checklist')).toBeInTheDocument()
    expect(within(card).getByText('1/3 done')).toBeInTheDocument()
    expect(within(card).getByText('Done')).toBeInTheDocument()
    expect(within(card).getByRole('list', { name: 'Checklist' })).toHaveTextContent('Stream the answer')

    const [first, answer] = assistant()
    expect(first).toHaveTextContent('Let me write that down as a checklist.')
    // The answer's Markdown: a numbered list with bold words and highlighted code.
    expect(within(answer).getByRole('list')).toHaveTextContent('Sketch the layout')
    expect(within(answer).getByText('Sketch').tagName).toBe('STRONG')
    expect(answer.querySelector('pre code .hljs-keyword')).toHaveTextContent('func')
    // A finished answer can be copied, regenerated and forked from.
    for (const label of ['Copy message', 'Regenerate the answer', 'Fork from this message']) {
      expect(within(answer).getByRole('button', { name: label })).toBeInTheDocument()
    }
    expect(screen.queryByRole('button', { name: 'Stop' })).not.toBeInTheDocument()
    expect(screen.getByLabelText('Message')).toHaveAttribute('placeholder', 'Message the agent… (Enter sends, Shift+Enter for a new line, / for commands)')
  })

  it('a handoff reads as a line between the two agents\u2019 words', () => {
    show(runs.handoff, { entries: runs.handoff.entries })
    expect(screen.getByRole('note')).toHaveTextContent('Handed off to reviewer')
    expect(assistant().map((a) => a.querySelector('.markdown')?.textContent)).toEqual(['Let me ask the reviewer.', 'LGTM, ship it.'])
  })

  it('an empty one invites the first message', () => {
    show(runs.todo)
    expect(screen.getByRole('heading', { name: 'Say hello' })).toBeInTheDocument()
    expect(screen.getByRole('heading', { level: 1 })).toHaveTextContent('New conversation')
  })
})

describe('a live run', () => {
  const r = runs.todo
  const steps = r.events.filter((e) => e.type === 'run.step')

  it('streams its thinking and its answer, fills in the tool card, and ends', async () => {
    show(r)
    // Mid-answer: the question, the thought still open, part of the text.
    replay(eventsThrough(r, (e) => e === steps[5]))
    expect(await within(header()).findByText('Running')).toBeInTheDocument()
    expect(view()).toHaveAttribute('data-run-status', 'running')
    expect(view().querySelector('.msg-user .bubble')).toHaveTextContent('make a plan')
    const thinking = screen.getByText('Thinking…').closest('details')
    expect(thinking).toHaveAttribute('open')
    expect(thinking).toHaveTextContent('The user wants a plan')
    const streaming = view().querySelector('.msg-assistant.streaming') as HTMLElement
    const partial = steps.slice(0, 6).map((e) => (e.payload as { delta: string }).delta).join('')
    expect(streaming).toHaveTextContent(partial.trim())
    expect(streaming).not.toHaveTextContent('Let me write that down as a checklist.')
    // No actions on text still being written; Stop and Steer in the composer.
    expect(within(streaming).queryByRole('button')).not.toBeInTheDocument()
    expect(screen.getByRole('button', { name: 'Stop' })).toBeInTheDocument()
    expect(screen.getByRole('button', { name: 'Steer' })).toBeDisabled()
    // The header's picker takes a choice for the next answer, not this one.
    await userEvent.click(within(header()).getByRole('button', { name: /Agent and model/ }))
    expect(within(header()).getByLabelText('Agent')).toBeDisabled()
    expect(within(header()).getByText(/applies to the next one/)).toBeInTheDocument()
    await userEvent.keyboard('{Escape}')

    // The tool is called: its card runs.
    replay(eventsThrough(r, (e) => e.type === 'run.tool_call').filter((e) => (e.seq ?? 0) > (steps[5].seq ?? 0)))
    const card = await screen.findByText('todo_write', { selector: '.tool-title' }).then((t) => t.closest('.tool-card') as HTMLElement)
    expect(within(card).getByText('Running')).toBeInTheDocument()
    expect(screen.getByText('Thought')).toBeInTheDocument()
    expect(view().querySelector('.msg-assistant.streaming')).not.toBeInTheDocument()
    expect(assistant()[0]).toHaveTextContent('Let me write that down as a checklist.')

    // The rest of the run: the result (the checklist, drawn), the answer, the end.
    replay(r.events.filter((e) => (e.seq ?? 0) > (r.events.find((x) => x.type === 'run.tool_call')?.seq ?? 0)))
    expect(await within(card).findByText('Done')).toBeInTheDocument()
    expect(within(card).getByText('1/3 done')).toBeInTheDocument()
    expect(within(card).getByRole('list', { name: 'Checklist' })).toHaveTextContent('Ship it')
    expect(view()).toHaveAttribute('data-run-status', 'idle')
    expect(within(header()).queryByText('Running')).not.toBeInTheDocument()
    expect(assistant()[1]).toHaveTextContent('Here is the plan:')
    expect(screen.queryByRole('button', { name: 'Stop' })).not.toBeInTheDocument()
  })

  it('streams a shell command\u2019s output into its card', async () => {
    const x = runs.exec
    show(x)
    replay(eventsThrough(x, (e) => e.type === 'run.tool_progress'))
    const out = await screen.findByLabelText('Output so far')
    expect(out).toHaveTextContent('hi-from-sandbox')
    expect(out.closest('.tool-card')).toHaveTextContent('Running')
    replay(x.events.slice(x.events.findIndex((e) => e.type === 'run.tool_progress') + 1))
    expect(await screen.findByLabelText('Command output')).toHaveTextContent('second-line')
    expect(screen.getByText('exit 0')).toBeInTheDocument()
    expect(assistant().at(-1)).toHaveTextContent('The command printed hi-from-sandbox.')
  })

  it('waiting for approval says so, and the card offers the decision', async () => {
    const call = r.events.find((e) => e.type === 'run.tool_call') as Extract<ServerEvent, { type: 'run.tool_call' }>
    const approval: Approval = {
      id: 'ap1', run_id: r.runId, session_id: r.sessionId, tool_call_id: call.payload.tool_call_id, tool_name: 'todo_write', arguments: call.payload.arguments, created_at: '',
    }
    show(r, { approvals: [approval] })
    // The run starts, calls the gated tool and pauses (numbered on from the start: a hole would wait for the missing events).
    replay([r.events[0], r.events[1], { ...call, seq: 3, payload: { ...call.payload, needs_approval: true } }, { type: 'run.interrupted', seq: 4, payload: { run_id: r.runId } }])
    expect(await within(header()).findByText('Waiting for approval')).toBeInTheDocument()
    expect(view()).toHaveAttribute('data-run-status', 'interrupted')
    const controls = screen.getByRole('group', { name: 'Approval for todo_write' })
    expect(controls.closest('.tool-card')).toHaveTextContent('Needs approval')
    expect(within(controls).getByRole('button', { name: 'Approve once' })).toBeEnabled()
    expect(within(controls).getByRole('button', { name: 'Reject…' })).toBeEnabled()
  })

  it('a failed run ends with an alert saying why', async () => {
    show(r)
    replay([r.events[0], { type: 'run.error', seq: 2, payload: { run_id: r.runId, code: 'guardrail_tripwire', message: 'the output tripped', guardrail: 'no_secrets', stage: 'output' } }])
    const alert = await screen.findByRole('alert')
    expect(alert).toHaveTextContent('The run failed')
    expect(within(alert).getByText('guardrail_tripwire')).toHaveClass('code-badge')
    expect(alert).toHaveTextContent('the output tripped — guardrail no_secrets at output')
    expect(view()).toHaveAttribute('data-run-status', 'idle')
  })

  it('a cancelled run keeps what it wrote and says it was cancelled', async () => {
    show(r)
    replay([...eventsThrough(r, (e) => e === steps[3]), { type: 'run.cancelled', seq: (steps[3].seq ?? 0) + 1, payload: { run_id: r.runId, reason: 'stopped by the user' } }])
    const note = await screen.findByRole('note')
    expect(note).toHaveTextContent('Cancelled')
    expect(note).toHaveTextContent('stopped by the user')
    expect(view()).toHaveAttribute('data-run-status', 'idle')
    expect(view().querySelector('.msg-assistant.streaming')).not.toBeInTheDocument()
    expect(assistant()[0]).toHaveTextContent(steps.slice(0, 4).map((e) => (e.payload as { delta: string }).delta).join(''))
  })
})

describe('a compacted conversation', () => {
  const base = { created_at: '', on_path: true, seq: 1, run_id: 'r0' }
  const msg = (id: string, role: string, text: string, compacted: boolean) =>
    ({ ...base, id, row_id: id, kind: 'item', compacted, item: { type: 'message', role, content: [{ type: 'output_text', text }] } }) as unknown as Entry
  const entries = [
    msg('u1', 'user', 'first question', true), msg('a1', 'assistant', 'answer one', true),
    msg('u2', 'user', 'second question', false), msg('a2', 'assistant', 'answer two', false),
    { ...base, id: 'c1', row_id: 'c1', run_id: '', kind: 'compaction', compacted: false, checkpoint: { summary: 'SUMMARY: two questions.', excluded_ids: ['u1', 'a1'] },
      display: { kind: 'compaction', title: 'Conversation compacted', summary: '~1.2k → ~0.3k', extra: { folded: '2' } } } as unknown as Entry,
  ]

  it('keeps the folded messages, dimmed, and marks the fold where it happened', () => {
    show(runs.todo, { entries })
    const folded = screen.getByText('first question').closest('.item') as HTMLElement
    expect(folded).toHaveClass('item-folded')
    expect(folded).toHaveAttribute('title', 'Folded into a summary; the model no longer sees it')
    expect(screen.getByText('second question').closest('.item')).not.toHaveClass('item-folded')
    const marker = view().querySelector('details.compaction') as HTMLElement
    expect(marker).toHaveTextContent('Conversation compacted · ~1.2k → ~0.3k')
    expect(marker).toHaveTextContent('SUMMARY: two questions.')
    expect(marker.closest('.item')).toBe(view().querySelector('.timeline-inner > .item:last-child'))
  })

  it('shows a pending note while a run compacts, then the marker', async () => {
    show(runs.todo, { entries })
    const r0 = { type: 'run.started', seq: 1, payload: { run_id: 'r9', session_id: runs.todo.sessionId, input: 'third question' } } as ServerEvent
    replay([r0, { type: 'run.compaction', seq: 2, payload: { run_id: 'r9', phase: 'started' } } as ServerEvent])
    expect(await screen.findByText('Compacting the conversation…')).toBeInTheDocument()
    replay([{ type: 'run.compaction', seq: 3, payload: { run_id: 'r9', phase: 'finished', detail: '~2.0k → ~0.5k' } } as ServerEvent])
    expect(await screen.findByText('· ~2.0k → ~0.5k')).toBeInTheDocument()
    expect(screen.queryByText('Compacting the conversation…')).not.toBeInTheDocument()
  })
})

describe('edit and regenerate on stored exchanges', () => {
  let n = 0
  const entry = (item: unknown, extra: Partial<Entry> = {}): Entry => {
    n++
    return { id: `e${n}`, row_id: `r${n}`, seq: n, kind: 'item', compacted: false, created_at: '', on_path: true, run_id: extra.run_id, item, ...extra }
  }
  const user = (text: string, extra: Partial<Entry> = {}) => entry({ type: 'message', role: 'user', content: [{ type: 'input_text', text }] }, extra)
  const answer = (text: string, extra: Partial<Entry> = {}) => entry({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text }] }, extra)
  const failure = (extra: Partial<Entry> = {}) =>
    entry(undefined, { kind: 'annotation', text: 'boom', display: { kind: 'run_error', title: 'The run failed', extra: { code: 'upstream' } } as Entry['display'], ...extra })
  const cancelled = (extra: Partial<Entry> = {}) =>
    entry(undefined, { kind: 'annotation', text: 'Stopped before it finished', display: { kind: 'run_cancelled', title: 'Cancelled' } as Entry['display'], ...extra })

  function entries() {
    const q1 = user('first question', { run_id: 'r1' })
    const a1 = answer('first answer', { run_id: 'r1', parent_id: q1.id })
    const q2 = user('second question', { run_id: 'r2', parent_id: a1.id })
    const f2 = failure({ run_id: 'r2', parent_id: q2.id })
    const q3 = user('third question', { run_id: 'r3', parent_id: f2.id })
    const a3 = answer('partial', { run_id: 'r3', parent_id: q3.id, display: { kind: 'stopped', title: 'Stopped' } as Entry['display'] })
    const c3 = cancelled({ run_id: 'r3', parent_id: a3.id })
    return [q1, a1, q2, f2, q3, a3, c3]
  }

  it('offers Edit on every message of yours, the first (which branches to the root) too', () => {
    show(runs.todo, { entries: entries() })
    const bubbles = [...view().querySelectorAll<HTMLElement>('.msg-user')]
    expect(bubbles.map((b) => !!within(b).queryByRole('button', { name: 'Edit message' }))).toEqual([true, true, true])
  })

  it('offers Regenerate on a failure without an answer, not twice on a stopped answer', () => {
    show(runs.todo, { entries: entries() })
    const notes = screen.getAllByRole('alert').concat(screen.getAllByRole('note'))
    const failed = notes.find((x) => x.textContent?.includes('The run failed'))!
    expect(within(failed).getByRole('button', { name: 'Regenerate the answer' })).toBeInTheDocument()
    const stop = notes.find((x) => x.textContent?.includes('Cancelled'))!
    expect(within(stop).queryByRole('button', { name: 'Regenerate the answer' })).not.toBeInTheDocument()
    const partial = assistant().find((a) => a.textContent?.includes('partial'))!
    expect(within(partial).getByRole('button', { name: 'Regenerate the answer' })).toBeInTheDocument()
  })

  it('turns a message into an editor, and Cancel turns it back', async () => {
    show(runs.todo, { entries: entries() })
    const second = [...view().querySelectorAll<HTMLElement>('.msg-user')][1]
    act(() => within(second).getByRole('button', { name: 'Edit message' }).click())
    const box = screen.getByRole('textbox', { name: 'Edited message' })
    expect(box).toHaveValue('second question')
    expect(screen.getByRole('button', { name: 'Save & send' })).toBeDisabled()
    act(() => screen.getByRole('button', { name: 'Cancel' }).click())
    expect(screen.queryByRole('textbox', { name: 'Edited message' })).not.toBeInTheDocument()
    expect(view()).toHaveTextContent('second question')
  })
})
