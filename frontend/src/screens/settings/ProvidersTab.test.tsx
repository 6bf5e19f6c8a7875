// @vitest-environment jsdom
// Testing a provider's connection: from its row, or right after a save;
// the answer (connected, the vendor's refusal, or the server's own) shows
// on the row. Every control of the provider form has a name.
import { screen, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { api, type Provider } from '../../lib/api'
import { keys } from '../../lib/queries'
import { answer, refusal } from '../../test/mcp'
import { renderWithData } from '../../test/render'
import { describeTest } from './ProviderTest'
import { ProvidersTab } from './ProvidersTab'

const provider = (over: Partial<Provider> = {}): Provider =>
  ({ id: 'p1', name: 'local', type: 'openai', api: '', auth_mode: '', base_url: 'http://x/v1', api_key: '********', scope: 'private', owner_id: 'u1', created_at: '', updated_at: '', ...over }) as Provider

const show = (list: Provider[]) => renderWithData(<ProvidersTab />, [[keys.providers, list], [['provider-types'], [{ type: 'openai', apis: [], auth_modes: ['api_key'], default_base_url: '', unsupported: [] }]]])
const row = (name: string) => screen.getByText(name).closest('.row') as HTMLElement
const tested = () => (vi.mocked(api.POST).mock.calls as unknown as [string, { params: { path: { id: string } } }][]).filter(([p]) => p === '/api/v1/providers/{id}/test').map(([, o]) => o.params.path.id)

beforeEach(() => {
  vi.spyOn(api, 'GET').mockImplementation((() => answer(200, [])) as never)
  vi.spyOn(api, 'POST').mockImplementation(((path: string) => path === '/api/v1/providers'
    ? answer(201, provider({ id: 'p2', name: 'new one' }))
    : answer(200, { ok: true, latency_ms: 42, models: 7 })) as never)
})

afterEach(() => {
  vi.restoreAllMocks()
})

describe('describeTest', () => {
  it('says connected with the latency and the count, or the vendor’s error and its kind', () => {
    expect(describeTest({ ok: true, latency_ms: 123, models: 1 })).toBe('Connected · 123 ms · 1 model')
    expect(describeTest({ ok: false, latency_ms: 5, models: 0, error: 'invalid x-api-key', kind: 'auth' })).toBe('Not connected (auth): invalid x-api-key')
  })
})

describe('testing a provider', () => {
  it('from its row: the answer shows on the row', async () => {
    show([provider(), provider({ id: 'p9', name: 'other' })])
    await userEvent.click(within(row('local')).getByRole('button', { name: 'Test connection of local' }))
    expect(await within(row('local')).findByText('Connected · 42 ms · 7 models')).toHaveClass('ok-text')
    expect(within(row('other')).getByRole('status')).toHaveTextContent('')
    expect(tested()).toEqual(['p1'])
  })

  it("says what the vendor said, or why the server did not test", async () => {
    vi.mocked(api.POST).mockImplementationOnce((() => answer(200, { ok: false, latency_ms: 3, models: 0, error: 'invalid key', kind: 'auth' })) as never)
    show([provider()])
    await userEvent.click(screen.getByRole('button', { name: 'Test connection of local' }))
    expect(await within(row('local')).findByRole('status')).toHaveTextContent('Not connected (auth): invalid key')

    vi.mocked(api.POST).mockImplementationOnce((() => refusal(400, 'validation', 'the provider has no API key')) as never)
    await userEvent.click(screen.getByRole('button', { name: 'Test connection of local' }))
    expect(await within(row('local')).findByText('Not tested: the provider has no API key (validation)')).toHaveClass('error-text')
  })

  it('right after a provider is saved, whose cached models are dropped', async () => {
    const { qc } = show([])
    qc.setQueryData(keys.providerModels('p2'), { models: [{ id: 'old' }] })
    await userEvent.click(screen.getByRole('button', { name: 'Add provider' }))
    const form = screen.getByRole('form', { name: 'New provider' })
    for (const el of Array.from(form.querySelectorAll('input, select, textarea, button'))) expect(el, el.outerHTML.slice(0, 100)).toHaveAccessibleName()
    await userEvent.type(within(form).getByLabelText('Name'), 'new one')
    expect(within(form).getByLabelText('Test the connection after saving')).toBeChecked()
    // The list as the server answers it after the save.
    vi.mocked(api.GET).mockImplementation((() => answer(200, [provider({ id: 'p2', name: 'new one' })])) as never)
    await userEvent.click(within(form).getByRole('button', { name: 'Save' }))
    expect(await within(await screen.findByText('new one').then((n) => n.closest('.row') as HTMLElement)).findByText('Connected · 42 ms · 7 models')).toBeInTheDocument()
    expect(tested()).toEqual(['p2'])
    expect(qc.getQueryState(keys.providerModels('p2'))?.isInvalidated).toBe(true)
  })

  it('not after a save when unticked', async () => {
    show([provider()])
    await userEvent.click(screen.getByRole('button', { name: 'Edit' }))
    const form = screen.getByRole('form', { name: 'Edit local' })
    vi.spyOn(api, 'PUT').mockImplementation((() => answer(200, provider())) as never)
    await userEvent.click(within(form).getByLabelText('Test the connection after saving'))
    await userEvent.click(within(form).getByRole('button', { name: 'Save' }))
    expect(screen.queryByRole('form', { name: 'Edit local' })).not.toBeInTheDocument()
    expect(tested()).toEqual([])
  })
})
