// @vitest-environment jsdom
// The MCP servers panel as a user sees it: each server's live status and
// what it offers, the form that adds and edits one — write-only header
// values and client secret kept with the mask, asked for again when the
// endpoint or the client changes, the server's field errors on their
// fields — and connecting, signing in (a popup) and deleting.
import { screen, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { api, MASK, type MCPServer, type User } from '../../lib/api'
import { keys } from '../../lib/queries'
import { renderWithData } from '../../test/render'
import { admin, answer, mcpServer, member, oauthServer, refusal } from '../../test/mcp'
import { MCPServersTab } from './MCPServersTab'

type Call = [string, { params?: { path?: { id: string } }; body?: unknown }?]
const calls = (m: 'GET' | 'POST' | 'PUT' | 'DELETE') => (vi.mocked(api[m]).mock.calls as unknown as Call[]).map(([path, opts]) => ({ path, ...opts }))

let listed: MCPServer[] = []

function show(rows: MCPServer[], me: User = member) {
  listed = rows
  return renderWithData(<MCPServersTab />, [[keys.me, me], [keys.mcpServers, rows]])
}

const row = (name: string) => screen.getByRole('listitem', { name })
const form = (name: string) => screen.getByRole('form', { name })

beforeEach(() => {
  // The list is asked again after every write (and polled while a row settles).
  vi.spyOn(api, 'GET').mockImplementation((() => answer(200, listed)) as never)
  vi.spyOn(api, 'POST').mockImplementation((() => answer(201, mcpServer())) as never)
  vi.spyOn(api, 'PUT').mockImplementation((() => answer(200, mcpServer())) as never)
  vi.spyOn(api, 'DELETE').mockImplementation((() => answer(204)) as never)
})

afterEach(() => {
  vi.restoreAllMocks()
})

describe('the list', () => {
  it('shows each server’s status, scope, endpoint and tools; why one is not connected', async () => {
    show([
      mcpServer(),
      mcpServer({ id: 's2', name: 'files', status: 'disconnected', last_error: 'dial tcp 10.0.0.9:443: connection refused', tools: [] }),
      oauthServer({ id: 's3', name: 'crm', status: 'needs_auth', has_oauth_token: false, tools: [], scope: 'global', owner_id: 'someone' }),
      mcpServer({ id: 's4', name: 'old', enabled: false, status: 'disabled', tools: [] }),
    ])
    const calc = row('calc')
    expect(within(calc).getByRole('status', { name: 'Status' })).toHaveTextContent('connected')
    expect(within(calc).getByRole('status')).toHaveClass('pill-ok')
    expect(calc).toHaveTextContent('https://calc.example/mcp · 2 tools')
    expect(calc).toHaveTextContent('private')
    await userEvent.click(within(calc).getByRole('button', { name: 'Tools' }))
    const tools = within(calc).getByRole('list', { name: 'Tools of calc' })
    expect(within(tools).getAllByRole('listitem').map((li) => li.querySelector('code')?.textContent)).toEqual(['calc__echo', 'calc__add'])
    expect(within(tools).getAllByRole('group', { name: 'Hints the server claims (not verified)' })[1]).toHaveTextContent('claims read-onlyclaims closed world')

    const files = row('files')
    expect(within(files).getByRole('status')).toHaveTextContent('disconnected')
    expect(files).toHaveTextContent('dial tcp 10.0.0.9:443: connection refused')
    expect(files).not.toHaveTextContent('tools')
    expect(within(files).getByRole('button', { name: 'Connect' })).toBeInTheDocument()

    // Someone else's global server: a member sees it and may use it, not change it.
    const crm = row('crm')
    expect(within(crm).getByRole('status')).toHaveTextContent('needs sign-in')
    expect(crm).toHaveTextContent('global')
    expect(within(crm).queryByRole('button')).not.toBeInTheDocument()

    // A disabled server cannot be connected.
    const old = row('old')
    expect(within(old).getByRole('status')).toHaveTextContent('disabled')
    expect(within(old).queryByRole('button', { name: /Connect/ })).not.toBeInTheDocument()
    expect(within(old).getByRole('button', { name: 'Edit' })).toBeInTheDocument()
  })

  it('an admin may delete anyone’s server but edit only global ones and their own', () => {
    show([mcpServer({ owner_id: 'someone' }), mcpServer({ id: 's2', name: 'shared', scope: 'global', owner_id: 'someone' })], admin)
    expect(within(row('calc')).queryByRole('button', { name: 'Edit' })).not.toBeInTheDocument()
    expect(within(row('calc')).getByRole('button', { name: 'Delete' })).toBeInTheDocument()
    expect(within(row('shared')).getByRole('button', { name: 'Edit' })).toBeInTheDocument()
  })

  it('an admin publishes a private server and unpublishes a global one; a member is offered neither', async () => {
    show([mcpServer({ owner_id: 'someone' }), mcpServer({ id: 's2', name: 'shared', scope: 'global', owner_id: 'someone' })], admin)
    await userEvent.click(within(row('calc')).getByRole('button', { name: 'Publish' }))
    await userEvent.click(within(row('shared')).getByRole('button', { name: 'Unpublish' }))
    expect(calls('POST')).toEqual([
      { path: '/api/v1/mcp-servers/{id}/scope', params: { path: { id: 's1' } }, body: { scope: 'global' } },
      { path: '/api/v1/mcp-servers/{id}/scope', params: { path: { id: 's2' } }, body: { scope: 'private' } },
    ])
  })

  it('a member sees no publish button', () => {
    show([mcpServer()], member)
    expect(within(row('calc')).queryByRole('button', { name: 'Publish' })).not.toBeInTheDocument()
  })

  it('deleting asks first, and shows why the server refused', async () => {
    vi.mocked(api.DELETE).mockImplementation((() => refusal(409, 'conflict', 'the server cannot be deleted while agents select its tools: Planner')) as never)
    show([mcpServer()])
    await userEvent.click(within(row('calc')).getByRole('button', { name: 'Delete' }))
    expect(calls('DELETE')).toEqual([])
    await userEvent.click(within(row('calc')).getByRole('button', { name: 'Delete?' }))
    expect(calls('DELETE')).toEqual([{ path: '/api/v1/mcp-servers/{id}', params: { path: { id: 's1' } } }])
    expect(await within(row('calc')).findByRole('alert')).toHaveTextContent('the server cannot be deleted while agents select its tools: Planner (conflict)')
  })
})

describe('connecting', () => {
  it('a header server reconnects without a window', async () => {
    vi.mocked(api.POST).mockImplementation((() => answer(200, { status: 'connecting' })) as never)
    const open = vi.spyOn(window, 'open').mockReturnValue(null)
    show([mcpServer({ status: 'disconnected', last_error: 'EOF', tools: [] })])
    await userEvent.click(within(row('calc')).getByRole('button', { name: 'Connect' }))
    expect(calls('POST').map((c) => c.path)).toEqual(['/api/v1/mcp-servers/{id}/connect'])
    expect(open).not.toHaveBeenCalled()
  })

  it('an OAuth server without a grant opens the sign-in in a popup', async () => {
    const url = 'https://auth.example/authorize?client_id=workbench&state=xyz'
    vi.mocked(api.POST).mockImplementation((() => answer(200, { status: 'authorizing', authorize_url: url })) as never)
    const popup = { closed: false, close: vi.fn() } as unknown as Window
    const open = vi.spyOn(window, 'open').mockReturnValue(popup)
    show([oauthServer({ status: 'needs_auth', has_oauth_token: false, tools: [] })])
    await userEvent.click(within(row('calc')).getByRole('button', { name: 'Sign in' }))
    // Opened within the click (no popup blocker in the way), then pointed at the URL.
    expect(open.mock.calls).toEqual([['', 'mcp-oauth', 'popup,width=520,height=720'], [url, 'mcp-oauth', 'popup,width=520,height=720']])
  })

  it('a blocked popup leaves the sign-in as a link', async () => {
    const url = 'https://auth.example/authorize?state=abc'
    vi.mocked(api.POST).mockImplementation((() => answer(200, { status: 'authorizing', authorize_url: url })) as never)
    vi.spyOn(window, 'open').mockReturnValue(null)
    show([oauthServer({ status: 'needs_auth', has_oauth_token: false, tools: [] })])
    await userEvent.click(within(row('calc')).getByRole('button', { name: 'Sign in' }))
    expect(await within(row('calc')).findByRole('link', { name: 'Open the sign-in page' })).toHaveAttribute('href', url)
  })

  it('a sign-in that cannot start says why', async () => {
    vi.mocked(api.POST).mockImplementation((() => refusal(502, 'upstream', 'the authorization server metadata could not be read')) as never)
    const popup = { closed: false, close: vi.fn() } as unknown as Window
    vi.spyOn(window, 'open').mockReturnValue(popup)
    show([oauthServer({ status: 'needs_auth', has_oauth_token: false, tools: [] })])
    await userEvent.click(within(row('calc')).getByRole('button', { name: 'Sign in' }))
    expect(await within(row('calc')).findByRole('alert')).toHaveTextContent('the authorization server metadata could not be read (upstream)')
    expect(popup.close).toHaveBeenCalled()
  })
})

describe('the form', () => {
  it('adds a server: its headers as entered, no OAuth fields for header auth; an admin may make it global', async () => {
    show([], admin)
    await userEvent.click(screen.getByRole('button', { name: 'Add MCP server' }))
    const f = form('New MCP server')
    await userEvent.type(within(f).getByLabelText('Name'), 'calc')
    await userEvent.type(within(f).getByLabelText('Endpoint'), ' http://127.0.0.1:3001/mcp ')
    await userEvent.click(within(f).getByRole('button', { name: 'Add header' }))
    await userEvent.type(within(f).getByLabelText('Header 1 name'), 'X-Api-Key')
    await userEvent.type(within(f).getByLabelText('Header 1 value'), 's3cret')
    expect(within(f).getByLabelText('Header 1 value')).toHaveAttribute('type', 'password')
    await userEvent.selectOptions(within(f).getByLabelText('Scope'), 'global')
    await userEvent.click(within(f).getByRole('button', { name: 'Save' }))
    expect(calls('POST')).toEqual([{ path: '/api/v1/mcp-servers', body: {
      name: 'calc', enabled: true, scope: 'global', config: { transport: 'http', endpoint: 'http://127.0.0.1:3001/mcp', headers: { 'X-Api-Key': 's3cret' }, auth_mode: 'header' },
    } }])
    expect(screen.queryByRole('form')).not.toBeInTheDocument()
  })

  it('a member is not offered the scope', async () => {
    show([])
    await userEvent.click(screen.getByRole('button', { name: 'Add MCP server' }))
    expect(within(form('New MCP server')).queryByLabelText('Scope')).not.toBeInTheDocument()
  })

  it('an edit sends the mask back for every stored secret it does not touch', async () => {
    show([oauthServer()])
    await userEvent.click(within(row('calc')).getByRole('button', { name: 'Edit' }))
    const f = form('Edit calc')
    // Stored values read as the mask and stay out of reach.
    expect(within(f).getByLabelText('Header 1 value')).toHaveValue(MASK)
    expect(within(f).getByLabelText('Header 1 value')).toHaveAttribute('readonly')
    expect(within(f).getByLabelText('Header 1 name')).toHaveAttribute('readonly')
    expect(within(f).getByLabelText('Client secret')).toHaveValue(MASK)
    expect(within(f).getByLabelText('Scopes')).toHaveValue('tools.read tools.call')
    await userEvent.click(within(f).getByLabelText('Enabled'))
    await userEvent.click(within(f).getByRole('button', { name: 'Save' }))
    expect(calls('PUT')).toEqual([{ path: '/api/v1/mcp-servers/{id}', params: { path: { id: 's1' } }, body: {
      name: 'calc', enabled: false, config: {
        transport: 'http', endpoint: 'https://calc.example/mcp', headers: { 'X-Api-Key': MASK }, auth_mode: 'oauth',
        oauth_client_id: 'workbench', oauth_client_secret: MASK, oauth_scopes: ['tools.read', 'tools.call'],
      },
    } }])
  })

  it('replacing a header, clearing the secret and removing a header each say so', async () => {
    show([oauthServer({}), mcpServer({ id: 's2', name: 'other' })])
    await userEvent.click(within(row('calc')).getByRole('button', { name: 'Edit' }))
    const f = form('Edit calc')
    await userEvent.click(within(f).getByRole('button', { name: 'Clear' }))
    expect(within(f).getByLabelText('Client secret')).toHaveValue('(will be cleared)')
    const headers = within(f).getByRole('group', { name: 'Headers' })
    await userEvent.click(within(headers).getByRole('button', { name: 'Replace' }))
    await userEvent.type(within(f).getByLabelText('Header 1 value'), 'n3w')
    await userEvent.click(within(f).getByRole('button', { name: 'Add header' }))
    await userEvent.type(within(f).getByLabelText('Header 2 name'), 'X-Tenant')
    await userEvent.type(within(f).getByLabelText('Header 2 value'), 'acme')
    await userEvent.click(within(f).getByRole('button', { name: 'Remove X-Tenant' }))
    await userEvent.click(within(f).getByRole('button', { name: 'Save' }))
    const [{ body }] = calls('PUT') as { body: { config: Record<string, unknown> } }[]
    expect(body.config).toMatchObject({ headers: { 'X-Api-Key': 'n3w' }, oauth_client_secret: '' })
  })

  it('a new endpoint asks for the stored secrets again before anything is sent', async () => {
    show([oauthServer()])
    await userEvent.click(within(row('calc')).getByRole('button', { name: 'Edit' }))
    const f = form('Edit calc')
    const endpoint = within(f).getByLabelText('Endpoint')
    await userEvent.clear(endpoint)
    await userEvent.type(endpoint, 'https://calc.example/v2/mcp')
    // No mask and no "Keep stored" for values that would go somewhere new.
    expect(within(f).getByLabelText('Header 1 value')).toHaveValue('')
    expect(within(f).queryByRole('button', { name: 'Keep stored' })).not.toBeInTheDocument()
    expect(within(f).getByLabelText('Client secret')).toHaveValue('')
    expect(within(f).getByRole('group', { name: 'Headers' })).toHaveTextContent('The endpoint changed')
    await userEvent.click(within(f).getByRole('button', { name: 'Save' }))
    expect(calls('PUT')).toEqual([])
    expect(within(f).getByRole('group', { name: 'Headers' })).toHaveTextContent('Enter the value again')
    expect(within(f).getByText(/Enter the secret again/)).toHaveClass('error-text')

    await userEvent.type(within(f).getByLabelText('Header 1 value'), 'k2')
    await userEvent.type(within(f).getByLabelText('Client secret'), 'sec2')
    await userEvent.click(within(f).getByRole('button', { name: 'Save' }))
    const [{ body }] = calls('PUT') as { body: { config: Record<string, unknown> } }[]
    expect(body.config).toMatchObject({ endpoint: 'https://calc.example/v2/mcp', headers: { 'X-Api-Key': 'k2' }, oauth_client_secret: 'sec2' })
  })

  it('a new client asks for the client secret again, or it is cleared', async () => {
    show([oauthServer()])
    await userEvent.click(within(row('calc')).getByRole('button', { name: 'Edit' }))
    const f = form('Edit calc')
    await userEvent.type(within(f).getByLabelText('Client ID'), '-2')
    // The header was given for this endpoint: still kept.
    expect(within(f).getByLabelText('Header 1 value')).toHaveValue(MASK)
    expect(within(f).getByLabelText('Client secret')).toHaveValue('')
    await userEvent.click(within(f).getByRole('button', { name: 'Clear' }))
    await userEvent.click(within(f).getByRole('button', { name: 'Save' }))
    const [{ body }] = calls('PUT') as { body: { config: Record<string, unknown> } }[]
    expect(body.config).toMatchObject({ headers: { 'X-Api-Key': MASK }, oauth_client_id: 'workbench-2', oauth_client_secret: '' })
  })

  it('the server’s field errors land on their fields, a header’s on its row', async () => {
    vi.mocked(api.PUT).mockImplementation((() => refusal(400, 'validation', 'invalid input', {
      name: 'is taken: an MCP server’s name prefixes its tools, so names are unique across every owner',
      'config.headers.X-Api-Key': 'the stored value belongs to the previous endpoint: send it again or clear it',
      'config.oauth_scopes[1]': 'must be one scope token of at most 200 characters',
    })) as never)
    show([oauthServer()])
    await userEvent.click(within(row('calc')).getByRole('button', { name: 'Edit' }))
    const f = form('Edit calc')
    await userEvent.click(within(f).getByRole('button', { name: 'Save' }))
    expect(await within(f).findByText('invalid input (validation)')).toHaveRole('alert')
    const field = (label: string) => within(f).getByLabelText(label).closest('.field') as HTMLElement
    expect(field('Name')).toHaveClass('has-error')
    expect(field('Name')).toHaveTextContent('is taken')
    expect(field('Scopes')).toHaveTextContent('must be one scope token')
    const header = within(f).getByLabelText('Header 1 value').closest('.env-row') as HTMLElement
    expect(header).toHaveTextContent('the stored value belongs to the previous endpoint: send it again or clear it')
    expect(screen.getByRole('form', { name: 'Edit calc' })).toBeInTheDocument()
  })

  it('header names given twice are caught before sending', async () => {
    show([])
    await userEvent.click(screen.getByRole('button', { name: 'Add MCP server' }))
    const f = form('New MCP server')
    await userEvent.type(within(f).getByLabelText('Name'), 'calc')
    await userEvent.type(within(f).getByLabelText('Endpoint'), 'http://127.0.0.1:3001/mcp')
    for (const n of [1, 2]) {
      await userEvent.click(within(f).getByRole('button', { name: 'Add header' }))
      await userEvent.type(within(f).getByLabelText(`Header ${n} name`), n === 1 ? 'X-Key' : 'x-key')
      await userEvent.type(within(f).getByLabelText(`Header ${n} value`), 'v')
    }
    await userEvent.click(within(f).getByRole('button', { name: 'Save' }))
    expect(calls('POST')).toEqual([])
    expect(within(f).getByText('Given twice (header names are case-insensitive)')).toBeInTheDocument()
  })

  it('Clear sign-in drops the stored grant of an OAuth server, and is offered only when there is one', async () => {
    vi.mocked(api.DELETE).mockImplementation((() => answer(200, oauthServer({ has_oauth_token: false }))) as never)
    show([oauthServer(), oauthServer({ id: 's2', name: 'fresh', has_oauth_token: false, status: 'needs_auth' })])
    await userEvent.click(within(row('fresh')).getByRole('button', { name: 'Edit' }))
    expect(within(form('Edit fresh')).queryByRole('button', { name: 'Clear sign-in' })).not.toBeInTheDocument()
    await userEvent.click(within(form('Edit fresh')).getByRole('button', { name: 'Cancel' }))
    await userEvent.click(within(row('calc')).getByRole('button', { name: 'Edit' }))
    await userEvent.click(within(form('Edit calc')).getByRole('button', { name: 'Clear sign-in' }))
    expect(calls('DELETE')).toEqual([{ path: '/api/v1/mcp-servers/{id}/oauth-token', params: { path: { id: 's1' } } }])
  })
})
