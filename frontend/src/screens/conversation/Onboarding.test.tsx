// @vitest-environment jsdom
// The start screen of an empty workbench: the first-run screen, its first
// field focused; a saved provider is used without writing anything; a
// failed connection says so next to its field.
import { screen } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { api, type Provider } from '../../lib/api'
import { keys } from '../../lib/queries'
import { answer } from '../../test/mcp'
import { renderWithData } from '../../test/render'
import { NewConversation } from './NewConversation'

const types = [
  { type: 'openai', apis: [], auth_modes: ['api_key'], default_base_url: 'https://api.openai.com/v1', unsupported: [] },
  { type: 'anthropic', apis: [], auth_modes: ['api_key'], default_base_url: 'https://api.anthropic.com', unsupported: [] },
]
const shared = { id: 'p1', name: 'Team OpenAI', type: 'openai', api: '', auth_mode: '', base_url: '', api_key: '********', scope: 'global', owner_id: 'u9', created_at: '', updated_at: '' } as Provider

const show = (agents: unknown[], providers: Provider[] = []) => renderWithData(<NewConversation />, [
  [keys.agents, agents], [keys.providers, providers], [['provider-types'], types], [keys.workflows, []], [keys.projectList(false), []],
])

let testAnswer: Record<string, unknown>
beforeEach(() => {
  testAnswer = { ok: true, latency_ms: 3, models: 2 }
  vi.spyOn(api, 'GET').mockImplementation((() => answer(200, { models: [{ id: 'gpt-a' }, { id: 'gpt-b' }] })) as never)
  vi.spyOn(api, 'POST').mockImplementation(((path: string) => answer(path === '/api/v1/providers' ? 201 : 200, path === '/api/v1/providers' ? { ...shared, id: 'p2', scope: 'private' } : testAnswer)) as never)
  vi.spyOn(api, 'DELETE').mockImplementation((() => answer(204)) as never)
})
afterEach(() => vi.restoreAllMocks())

const posted = () => (vi.mocked(api.POST).mock.calls as unknown as [string][]).map(([p]) => p)

describe('the start screen', () => {
  it('is the first-run screen with nothing to chat with, its first field focused', () => {
    show([])
    expect(screen.getByRole('heading', { name: 'Start your first chat' })).toBeVisible()
    expect(screen.getByLabelText('Type')).toHaveFocus()
    expect(screen.getByLabelText('Base URL')).toHaveAttribute('placeholder', 'https://api.openai.com/v1')
    expect(screen.queryByRole('form', { name: 'First message' }), 'no model list before connecting').toBeNull()
  })

  it('is the usual composer once there is an agent, a shared one too', () => {
    show([{ id: 'a1', name: 'Helper', scope: 'global', model: 'gpt-a', provider_id: 'p1', description: '', avatar: '' }])
    expect(screen.queryByRole('heading', { name: 'Start your first chat' })).toBeNull()
    expect(screen.getByRole('textbox', { name: 'Message' })).toBeVisible()
  })
})

describe('connecting', () => {
  it('uses a provider already saved without writing anything, then offers its models', async () => {
    show([], [shared])
    const user = userEvent.setup()
    expect(screen.getByLabelText('Provider')).toHaveFocus()
    expect(screen.getByLabelText('Provider')).toHaveValue('p1')
    expect(screen.queryByLabelText('API key'), 'no key asked for a saved provider').toBeNull()
    await user.click(screen.getByRole('button', { name: 'Connect and list models' }))
    const model = await screen.findByLabelText('Model')
    expect(model).toHaveFocus()
    expect([...model.querySelectorAll('option:not([disabled])')].map((o) => o.textContent)).toEqual(['gpt-a', 'gpt-b'])
    expect(screen.getByRole('form', { name: 'Connect a provider' })).toHaveTextContent('Connected to Team OpenAI · 2 models')
    expect(screen.queryByLabelText('Provider'), 'the card folds once connected').toBeNull()
    expect(posted()).toEqual(['/api/v1/providers/{id}/test'])
    expect(api.DELETE).not.toHaveBeenCalled()
  })

  it('says a refused key next to the key, and takes the new provider back', async () => {
    testAnswer = { ok: false, latency_ms: 3, models: 0, kind: 'auth', error: 'provider OpenAI: auth (HTTP 401): Incorrect API key provided' }
    show([])
    const user = userEvent.setup()
    await user.type(screen.getByLabelText('API key'), 'sk-wrong{Enter}')
    const key = screen.getByLabelText('API key')
    await vi.waitFor(() => expect(key).toHaveAttribute('aria-invalid', 'true'))
    expect(key).toHaveAccessibleDescription("OpenAI's official endpoint refused this API key. Check the key, and that its account may use the API.")
    expect(screen.queryByText(/Incorrect API key provided/), 'not the vendor’s words').toBeNull()
    expect(api.DELETE).toHaveBeenCalledTimes(1)
    expect(screen.queryByRole('form', { name: 'First message' })).toBeNull()
  })

  it('asks for a key before sending anything to an official endpoint', async () => {
    show([])
    await userEvent.setup().click(screen.getByRole('button', { name: 'Connect and list models' }))
    expect(screen.getByLabelText('API key')).toHaveAccessibleDescription('Enter your OpenAI API key, or a base URL for a server that needs none.')
    expect(api.POST).not.toHaveBeenCalled()
  })
})
