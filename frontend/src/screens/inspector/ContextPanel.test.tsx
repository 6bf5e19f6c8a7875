// @vitest-environment jsdom
// "Compact now" in the context panel: what each answer of the server reads
// as, and the button waiting for a live run. The report sits in the query
// cache; the compact call is answered by a stand-in for the API client's POST.
import { act, fireEvent, screen, waitFor } from '@testing-library/react'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { api } from '../../lib/api'
import type { ServerEvent } from '../../lib/events'
import { keys } from '../../lib/queries'
import { liveStore } from '../../live/store'
import { renderWithData } from '../../test/render'
import { ContextPanel } from './ContextPanel'

const report = { input_tokens: 1200, cached_tokens: 0, cache_write_tokens: 0, context_window: 0, conversation_tokens: 900, compaction_tokens: 1500, session_input_tokens: 3000 }
let answer: () => { status: number; body: unknown }
let asked: string[] = []

const agent = (compaction_enabled: boolean) => ({ id: 'a1', name: 'Folder', compaction: { compaction_enabled } })

function show(compaction = true) {
  return renderWithData(<ContextPanel sessionId="s1" />, [[keys.context('s1'), report], [keys.session('s1'), { id: 's1', agent_config_id: 'a1' }],
    [keys.agents, [agent(compaction)]]])
}

beforeEach(() => {
  liveStore.reset()
  asked = []
  vi.spyOn(api, 'POST').mockImplementation((async (path: string) => {
    asked.push(`POST ${path}`)
    const { status, body } = answer()
    const response = new Response(JSON.stringify(body), { status })
    return status < 300 ? { data: body, response } : { error: body, response }
  }) as unknown as typeof api.POST)
  vi.spyOn(api, 'GET').mockImplementation((async (path: string) => {
    asked.push(`GET ${path}`)
    return { data: { ...report, conversation_tokens: 100 }, response: new Response('{}') }
  }) as unknown as typeof api.GET)
})
afterEach(() => {
  vi.restoreAllMocks()
})

describe('Compact now', () => {
  it('says so when there is nothing to fold', async () => {
    answer = () => ({ status: 200, body: { compacted: false } })
    show()
    fireEvent.click(screen.getByRole('button', { name: 'Compact now' }))
    expect(await screen.findByText('Nothing to fold yet.')).toBeInTheDocument()
    expect(asked).toEqual(['POST /api/v1/sessions/{id}/compact'])
  })

  it("is disabled with the agent's compaction off, saying where to turn it on", () => {
    show(false)
    expect(screen.getByRole('button', { name: 'Compact now' })).toBeDisabled()
    expect(screen.getByText(/Compaction is off for Folder: turn on “Fold old history” in/)).toBeInTheDocument()
    expect(screen.getByRole('link', { name: 'its settings' })).toHaveAttribute('href', '/settings/agents')
  })

  it('estimates the context after a fold rather than read "0 tokens"', () => {
    renderWithData(<ContextPanel sessionId="s3" />, [[keys.context('s3'), { ...report, input_tokens: 0, conversation_tokens: 400 }],
      [keys.session('s3'), { id: 's3', agent_config_id: 'a1' }], [keys.agents, [agent(true)]]])
    expect(document.querySelector('.ctx-big')).toHaveTextContent('≈ 400')
    expect(screen.getByText(/tokens now, estimated: the next call measures it/)).toBeInTheDocument()
  })

  it("shows the server's message when it refuses", async () => {
    answer = () => ({ status: 400, body: { error: { code: 'validation', message: 'compaction is off for agent "A"' } } })
    show()
    fireEvent.click(screen.getByRole('button', { name: 'Compact now' }))
    expect(await screen.findByText(/compaction is off for agent "A"/)).toBeInTheDocument()
  })

  it('refreshes the report after a fold', async () => {
    answer = () => ({ status: 200, body: { compacted: true } })
    const { qc } = show()
    fireEvent.click(screen.getByRole('button', { name: 'Compact now' }))
    await screen.findByText(/Compacted/)
    await waitFor(() => expect(asked).toContain('GET /api/v1/sessions/{id}/context'))
    await waitFor(() => expect(qc.getQueryData(keys.context('s1'))).toMatchObject({ conversation_tokens: 100 }))
  })

  it('waits while a run holds the session', async () => {
    show()
    act(() => liveStore.dispatch({ type: 'run.started', seq: 1, payload: { run_id: 'r1', session_id: 's1', input: 'hi' } } as ServerEvent))
    await waitFor(() => expect(screen.getByRole('button', { name: 'Compact now' })).toBeDisabled())
  })
})

describe('the prompt breakdown', () => {
  it('labels the skills index and the read_skill tool', () => {
    renderWithData(<ContextPanel sessionId="s2" />, [[keys.session('s2'), { id: 's2', agent_config_id: 'a1' }], [keys.agents, [agent(true)]], [keys.context('s2'), {
      ...report, prompt: { agent: 'Reader', layers: { instructions: 10, skills_index: 321 }, tools: { builtin: 50, skills: 456 } },
    }]])
    const item = (label: string) => screen.getByText(label, { selector: '.ctx-list li > span:first-child' }).parentElement
    expect(item('Skills index')).toHaveTextContent('Skills index321')
    expect(item('read_skill')).toHaveTextContent('read_skill456')
  })
})

describe("the conversation's cost", () => {
  it('reads the cost and tokens of every call, and the calls no price covered', () => {
    renderWithData(<ContextPanel sessionId="s4" />, [[keys.session('s4'), { id: 's4', agent_config_id: 'a1' }], [keys.agents, [agent(true)]], [keys.context('s4'), {
      ...report, usage: { calls: 3, input_tokens: 1_234_567, cached_input_tokens: 0, output_tokens: 950, reasoning_tokens: 0, cost_usd: 0.0042, unpriced_calls: 1 },
    }]])
    expect(screen.getByRole('group', { name: 'Cost of this conversation' })).toHaveTextContent('$0.0042 · 1.2M in · 950 out · 3 calls · no price for 1 call')
  })

  it('is absent from a report without usage', () => {
    show()
    expect(screen.queryByRole('group', { name: 'Cost of this conversation' })).toBeNull()
  })
})
