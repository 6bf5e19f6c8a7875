// @vitest-environment jsdom
// Signing a chatgpt_login provider in: the authorize URL opens (and shows
// as a link), the pasted callback URL is redeemed, the account shows, a
// refused paste says why next to the field, sign-out forgets it. A saved
// ChatGPT provider's form stays open for the sign-in; it is not tested
// before it can answer.
import { screen, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { api, type Provider } from '../../lib/api'
import { keys } from '../../lib/queries'
import { answer, refusal } from '../../test/mcp'
import { renderWithData } from '../../test/render'
import { ProvidersTab } from './ProvidersTab'

const AUTHORIZE = 'https://auth.example/oauth/authorize?state=s1'
const CALLBACK = 'http://localhost:1455/auth/callback?code=c1&state=s1'

const provider = (over: Partial<Provider> = {}): Provider =>
  ({ id: 'p1', name: 'my chatgpt', type: 'openai', api: 'responses', auth_mode: 'chatgpt_login', base_url: '', api_key: '', scope: 'private',
    owner_id: 'u1', chatgpt_logged_in: false, created_at: '', updated_at: '', ...over }) as Provider

const types = [{ type: 'openai', apis: [{ name: 'responses', unsupported: [] }], auth_modes: ['api_key', 'chatgpt_login'], default_base_url: 'https://api.openai.com/v1', unsupported: [] }]
const show = (list: Provider[]) => renderWithData(<ProvidersTab />, [[keys.providers, list], [['provider-types'], types]])
const posted = (path: string) => (vi.mocked(api.POST).mock.calls as unknown as [string, { body?: unknown }][]).filter(([p]) => p === path)

let open: ReturnType<typeof vi.fn>
beforeEach(() => {
  open = vi.fn()
  vi.stubGlobal('open', open)
  vi.spyOn(api, 'GET').mockImplementation(((path: string) => path.endsWith('/chatgpt/status')
    ? answer(200, { logged_in: true, email: 'ann@example.com', plan: 'plus' })
    : answer(200, [])) as never)
  vi.spyOn(api, 'POST').mockImplementation(((path: string) => {
    if (path.endsWith('/chatgpt/login')) return answer(200, { authorize_url: AUTHORIZE, redirect_uri: 'http://localhost:1455/auth/callback', expires_at: '2026-12-01T10:00:00Z' })
    if (path.endsWith('/chatgpt/complete')) return answer(200, provider({ chatgpt_logged_in: true }))
    if (path.endsWith('/chatgpt/logout')) return answer(200, provider())
    if (path === '/api/v1/providers') return answer(201, provider())
    return answer(200, { ok: true, latency_ms: 1, models: 2 })
  }) as never)
})

afterEach(() => {
  vi.restoreAllMocks()
  vi.unstubAllGlobals()
})

describe('ChatGPT sign-in', () => {
  it('opens the sign-in, redeems the pasted address and names the account', async () => {
    show([provider()])
    expect(screen.getByText('not signed in — sign in to use it')).toBeInTheDocument()
    await userEvent.click(screen.getByRole('button', { name: 'Edit' }))
    const form = screen.getByRole('form', { name: 'Edit my chatgpt' })
    expect(within(form).queryByLabelText('API key')).not.toBeInTheDocument()
    expect(within(form).queryByLabelText('Base URL')).not.toBeInTheDocument()
    await userEvent.click(within(form).getByRole('button', { name: 'Sign in with ChatGPT' }))
    expect(open).toHaveBeenCalledWith(AUTHORIZE, '_blank', 'noopener')
    expect(await within(form).findByRole('link', { name: 'open the sign-in page' })).toHaveAttribute('href', AUTHORIZE)
    for (const el of Array.from(form.querySelectorAll('input, select, button'))) expect(el, el.outerHTML.slice(0, 100)).toHaveAccessibleName()
    await userEvent.type(within(form).getByLabelText('Callback URL'), CALLBACK)
    await userEvent.click(within(form).getByRole('button', { name: 'Complete sign-in' }))
    expect(await within(form).findByText('Signed in as ann@example.com (plus)')).toBeInTheDocument()
    expect(posted('/api/v1/providers/{id}/chatgpt/complete').map(([, o]) => o.body)).toEqual([{ callback_url: CALLBACK }])
  })

  it('shows a refused paste next to the field; Enter there never saves the provider form', async () => {
    vi.mocked(api.POST).mockImplementation(((path: string) => path.endsWith('/chatgpt/complete')
      ? refusal(400, 'validation', 'callback_url: belongs to no waiting sign-in', { callback_url: 'belongs to no waiting sign-in: it expired (a sign-in waits 10 minutes for its address) or was already used; sign in again' })
      : path.endsWith('/chatgpt/login')
        ? answer(200, { authorize_url: AUTHORIZE, redirect_uri: 'http://localhost:1455/auth/callback', expires_at: '2026-12-01T10:00:00Z' })
        : answer(200, provider())) as never)
    show([provider()])
    await userEvent.click(screen.getByRole('button', { name: 'Edit' }))
    const form = screen.getByRole('form', { name: 'Edit my chatgpt' })
    const put = vi.spyOn(api, 'PUT')
    await userEvent.click(within(form).getByRole('button', { name: 'Sign in with ChatGPT' }))
    await userEvent.type(await within(form).findByLabelText('Callback URL'), CALLBACK + '{Enter}')
    expect(posted('/api/v1/providers/{id}/chatgpt/complete')).toHaveLength(1)
    expect(put).not.toHaveBeenCalled()
    expect(await within(form).findByText(/belongs to no waiting sign-in/)).toBeInTheDocument()
    expect(within(form).getByLabelText('Callback URL')).toHaveAccessibleDescription(/belongs to no waiting sign-in/)
    expect(within(form).queryByText(/Signed in as/)).not.toBeInTheDocument()
  })

  it('signs out', async () => {
    show([provider({ chatgpt_logged_in: true })])
    expect(screen.getByText(/ChatGPT account · signed in/)).toBeInTheDocument()
    await userEvent.click(screen.getByRole('button', { name: 'Edit' }))
    const form = screen.getByRole('form', { name: 'Edit my chatgpt' })
    expect(await within(form).findByText('Signed in as ann@example.com (plus)')).toBeInTheDocument()
    await userEvent.click(within(form).getByRole('button', { name: 'Sign out' }))
    expect(await within(form).findByRole('button', { name: 'Sign in with ChatGPT' })).toBeInTheDocument()
    expect(posted('/api/v1/providers/{id}/chatgpt/logout')).toHaveLength(1)
  })

  it('keeps a new ChatGPT provider open after its save, untested, to sign in', async () => {
    show([])
    await userEvent.click(screen.getByRole('button', { name: 'Add provider' }))
    const form = screen.getByRole('form', { name: 'New provider' })
    await userEvent.type(within(form).getByLabelText('Name'), 'my chatgpt')
    await userEvent.selectOptions(within(form).getByLabelText('Authentication'), 'chatgpt_login')
    expect(within(form).getByText(/save the provider, then sign in here/)).toBeInTheDocument()
    await userEvent.click(within(form).getByRole('button', { name: 'Save' }))
    const edit = await screen.findByRole('form', { name: 'Edit my chatgpt' })
    expect(within(edit).getByRole('button', { name: 'Sign in with ChatGPT' })).toBeInTheDocument()
    expect(posted('/api/v1/providers').map(([, o]) => o.body)).toEqual([expect.objectContaining({ auth_mode: 'chatgpt_login', api_key: '', base_url: '' })])
    expect(posted('/api/v1/providers/{id}/test')).toHaveLength(0)
  })
})
