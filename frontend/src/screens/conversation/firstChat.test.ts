// The first-run screen's rules: when it shows, the names it gives, the
// words for a failed connection, and that a provider is saved once and a
// failed connection takes its save back.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { api, type Provider } from '../../lib/api'
import { answer, refusal } from '../../test/mcp'
import { checkProviderForm, connectionError, connectProvider, needsOnboarding, providerName, startFirstChat, uniqueName, type Held } from './firstChat'

vi.mock('./actions', () => ({ startRun: vi.fn(() => Promise.resolve({ run_id: 'r1' })) }))

const provider = (over: Partial<Provider> = {}): Provider =>
  ({ id: 'p1', name: 'OpenAI', type: 'openai', api: '', auth_mode: '', base_url: '', api_key: '********', scope: 'private', owner_id: 'u1', created_at: '', updated_at: '', ...over }) as Provider

describe('needsOnboarding', () => {
  it('shows only once the agent list has loaded empty', () => {
    expect(needsOnboarding([])).toBe(true)
    expect(needsOnboarding(undefined), 'still loading, or failed to load').toBe(false)
    // A member sees the agents an admin shared: they can chat already.
    expect(needsOnboarding([{ id: 'a1', name: 'Shared helper', scope: 'global' }])).toBe(false)
  })
})

describe('names', () => {
  it('takes the first free number after a taken name, whatever its case', () => {
    expect(uniqueName('Assistant', [])).toBe('Assistant')
    expect(uniqueName('Assistant', ['assistant', 'Assistant 2'])).toBe('Assistant 3')
    expect(uniqueName('OpenAI', ['Anthropic'])).toBe('OpenAI')
  })
  it('names a provider after its vendor, or the host it points at', () => {
    expect(providerName('openai', '')).toBe('OpenAI')
    expect(providerName('anthropic', '  ')).toBe('Anthropic')
    expect(providerName('openai', 'http://127.0.0.1:11434/v1')).toBe('127.0.0.1:11434')
    expect(providerName('openai', 'https://openrouter.ai/api/v1')).toBe('openrouter.ai')
  })
})

describe('checkProviderForm', () => {
  it('asks for a key for an official endpoint, and a real URL for any other', () => {
    expect(checkProviderForm({ type: 'openai', baseURL: '', apiKey: '' }).api_key).toMatch(/OpenAI API key/)
    expect(checkProviderForm({ type: 'openai', baseURL: '', apiKey: 'sk-1' })).toEqual({})
    expect(checkProviderForm({ type: 'openai', baseURL: 'localhost:11434', apiKey: '' }).base_url).toMatch(/full URL/)
    expect(checkProviderForm({ type: 'openai', baseURL: 'ftp://x/v1', apiKey: '' }).base_url).toMatch(/full URL/)
    expect(checkProviderForm({ type: 'openai', baseURL: 'http://localhost:11434/v1', apiKey: '' }), 'a local server needs no key').toEqual({})
  })
})

describe('connectionError', () => {
  const where = '127.0.0.1:9'
  it('puts each failure next to what to change, in words', () => {
    expect(connectionError({ ok: false, models: 0, kind: 'auth', error: 'provider x: auth (HTTP 401): bad key' }, where))
      .toEqual({ field: 'api_key', text: expect.stringMatching(/refused this API key/) })
    expect(connectionError({ ok: false, models: 0, kind: 'unavailable', error: 'connection failed: dial tcp 127.0.0.1:9: connect: connection refused' }, where))
      .toEqual({ field: 'base_url', text: 'Could not reach 127.0.0.1:9. Check the base URL and that the service is running.' })
    expect(connectionError({ ok: false, models: 0, kind: 'invalid_request' }, where)).toMatchObject({ field: 'base_url', listingOnly: true })
    expect(connectionError({ ok: false, models: 0, kind: 'rate_limited' }, where).field).toBe('form')
    expect(connectionError({ ok: false, models: 0, error: 'the outbound policy refuses 127.0.0.1 (a loopback address)…' }, where))
      .toEqual({ field: 'base_url', text: expect.stringMatching(/An admin can allow it/) })
  })
  it('never shows the vendor’s own text', () => {
    for (const kind of ['auth', 'unavailable', 'invalid_request', 'rate_limited', '', 'weird']) {
      expect(connectionError({ ok: false, models: 0, kind, error: 'dial tcp: SECRET-DETAIL' }, where).text).not.toContain('SECRET-DETAIL')
    }
  })
})

type Call = [string, { params?: { path: { id: string } }; body?: Record<string, unknown> }]
const calls = (m: 'GET' | 'POST' | 'PUT' | 'DELETE') => vi.mocked(api[m]).mock.calls as unknown as Call[]

describe('connectProvider', () => {
  let testAnswer: Record<string, unknown>
  beforeEach(() => {
    testAnswer = { ok: true, latency_ms: 3, models: 2 }
    vi.spyOn(api, 'POST').mockImplementation(((path: string, o: Call[1]) => path === '/api/v1/providers'
      ? answer(201, provider({ id: 'p9', name: String(o.body?.name) }))
      : answer(200, testAnswer)) as never)
    vi.spyOn(api, 'PUT').mockImplementation(((_: string, o: Call[1]) => answer(200, provider({ id: o.params!.path.id, name: String(o.body?.name) }))) as never)
    vi.spyOn(api, 'DELETE').mockImplementation((() => answer(204)) as never)
    vi.spyOn(api, 'GET').mockImplementation((() => answer(200, { models: [{ id: 'echo' }, { id: 'regen' }] })) as never)
  })
  afterEach(() => vi.restoreAllMocks())

  const form = { type: 'openai', baseURL: 'http://127.0.0.1:9/v1', apiKey: 'k1' }

  it('saves a new provider under a free name, tests it and lists its models', async () => {
    const r = await connectProvider(form, null, ['127.0.0.1:9'])
    expect(r).toEqual({ ok: true, held: { id: 'p9', name: '127.0.0.1:9 2', form }, models: ['echo', 'regen'], listed: true })
    expect(calls('POST')[0]).toEqual(['/api/v1/providers', { body: { name: '127.0.0.1:9 2', type: 'openai', base_url: 'http://127.0.0.1:9/v1', api_key: 'k1' } }])
    expect(calls('DELETE')).toEqual([])
  })

  it('deletes a new provider that did not connect, and says why next to the base URL', async () => {
    testAnswer = { ok: false, latency_ms: 3, models: 0, kind: 'unavailable', error: 'connection refused' }
    const r = await connectProvider(form, null, [])
    expect(r).toEqual({ ok: false, errors: { base_url: expect.stringMatching(/^Could not reach 127.0.0.1:9/) } })
    expect(calls('DELETE').map(([, o]) => o.params!.path.id)).toEqual(['p9'])
    expect(calls('GET'), 'no models asked of a provider that is gone').toEqual([])
  })

  it('reuses the provider it holds: the same entries only list again, changed ones update it', async () => {
    const held: Held = { id: 'p9', name: '127.0.0.1:9', form }
    expect(await connectProvider(form, held, [])).toMatchObject({ ok: true, held })
    expect(calls('POST'), 'nothing saved or tested again').toEqual([])
    const changed = { ...form, apiKey: 'k2' }
    expect(await connectProvider(changed, held, [])).toMatchObject({ ok: true, held: { id: 'p9', name: '127.0.0.1:9', form: changed } })
    expect(calls('PUT')).toEqual([['/api/v1/providers/{id}', { params: { path: { id: 'p9' } }, body: { name: '127.0.0.1:9', type: 'openai', base_url: 'http://127.0.0.1:9/v1', api_key: 'k2' } }]])
    expect(calls('POST').filter(([p]) => p === '/api/v1/providers'), 'no second provider').toEqual([])
  })

  it('puts a held provider’s entries back when a changed key is refused', async () => {
    const held: Held = { id: 'p9', name: '127.0.0.1:9', form }
    testAnswer = { ok: false, latency_ms: 3, models: 0, kind: 'auth', error: '401' }
    const r = await connectProvider({ ...form, apiKey: 'wrong' }, held, [])
    expect(r).toMatchObject({ ok: false, errors: { api_key: expect.stringMatching(/refused this API key/) } })
    expect(calls('PUT').map(([, o]) => o.body?.api_key)).toEqual(['wrong', 'k1'])
    expect(calls('DELETE')).toEqual([])
  })

  it('keeps an endpoint that lists nothing only when told to use it anyway', async () => {
    testAnswer = { ok: false, latency_ms: 3, models: 0, kind: 'invalid_request', error: '404' }
    expect(await connectProvider(form, null, [])).toMatchObject({ ok: false, listingOnly: true })
    expect(calls('DELETE')).toHaveLength(1)
    expect(await connectProvider(form, null, [], true)).toMatchObject({ ok: true, models: [], listed: false })
    expect(calls('DELETE')).toHaveLength(1)
  })

  it('shows a refused save next to its field, with nothing to take back', async () => {
    vi.mocked(api.POST).mockImplementation((() => refusal(400, 'validation', 'invalid input', { base_url: 'must be http or https' })) as never)
    expect(await connectProvider(form, null, [])).toEqual({ ok: false, errors: { base_url: 'must be http or https' } })
    expect(calls('DELETE')).toEqual([])
  })
})

describe('startFirstChat', () => {
  afterEach(() => vi.restoreAllMocks())

  it('makes the default agent and its conversation; a failed step takes the agent back', async () => {
    vi.spyOn(api, 'POST').mockImplementation(((path: string) => path === '/api/v1/agents'
      ? answer(201, { id: 'a1', name: 'Assistant' })
      : answer(201, { id: 's1' })) as never)
    vi.spyOn(api, 'DELETE').mockImplementation((() => answer(204)) as never)
    expect(await startFirstChat('p9', 'regen', 'hello', [])).toEqual({ id: 's1' })
    expect(calls('POST')[0]).toEqual(['/api/v1/agents', { body: { name: 'Assistant', model: 'regen', provider_id: 'p9' } }])
    expect(calls('POST')[1]).toEqual(['/api/v1/sessions', { body: { agent_config_id: 'a1' } }])

    vi.mocked(api.POST).mockImplementation(((path: string) => path === '/api/v1/agents'
      ? answer(201, { id: 'a2', name: 'Assistant' })
      : refusal(503, 'unavailable', 'busy')) as never)
    await expect(startFirstChat('p9', 'regen', 'hello', [])).rejects.toThrow('busy')
    expect(calls('DELETE').map(([p, o]) => [p, o.params!.path.id])).toEqual([['/api/v1/agents/{id}', 'a2']])
  })
})
