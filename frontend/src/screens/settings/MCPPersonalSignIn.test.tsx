// @vitest-environment jsdom
// Personal MCP sign-ins in the panel: an admin's shared OAuth server may
// ask each person to sign in; everyone then sees their own status on it,
// with Sign in and Sign out of their own account.
import { screen, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { api, type MCPServer, type User } from '../../lib/api'
import { keys } from '../../lib/queries'
import { renderWithData } from '../../test/render'
import { admin, answer, mcpServer, member, oauthServer } from '../../test/mcp'
import { MCPServersTab } from './MCPServersTab'
import { MCPToolPicker } from './MCPToolPicker'

type Call = [string, { params?: { path?: { id: string } }; body?: unknown }?]
const calls = (m: 'POST' | 'PUT' | 'DELETE') => (vi.mocked(api[m]).mock.calls as unknown as Call[]).map(([path, opts]) => ({ path, ...opts }))

let listed: MCPServer[] = []

function show(rows: MCPServer[], me: User = member) {
  listed = rows
  return renderWithData(<MCPServersTab />, [[keys.me, me], [keys.mcpServers, rows]])
}

const row = (name: string) => screen.getByRole('listitem', { name })
const form = (name: string) => screen.getByRole('form', { name })

/** An admin's global OAuth server each person signs in to, as member sees it. */
const team = (over: Partial<MCPServer> = {}) => {
  const s = oauthServer({ id: 't1', name: 'team', scope: 'global', owner_id: admin.id, ...over })
  return { ...s, config: { ...s.config, per_person_auth: true } }
}

beforeEach(() => {
  vi.spyOn(api, 'GET').mockImplementation((() => answer(200, listed)) as never)
  vi.spyOn(api, 'POST').mockImplementation((() => answer(201, mcpServer())) as never)
  vi.spyOn(api, 'PUT').mockImplementation((() => answer(200, mcpServer())) as never)
  vi.spyOn(api, 'DELETE').mockImplementation((() => answer(200, team({ has_oauth_token: false, status: 'needs_auth', tools: [] }))) as never)
})

afterEach(() => {
  vi.restoreAllMocks()
})

describe('a server each person signs in to', () => {
  it('a member who has not signed in sees it needs their sign-in, and signs in as themselves', async () => {
    const url = 'https://auth.example/authorize?state=mine'
    vi.mocked(api.POST).mockImplementation((() => answer(200, { status: 'authorizing', authorize_url: url })) as never)
    const open = vi.spyOn(window, 'open').mockReturnValue({ closed: false, close: vi.fn() } as unknown as Window)
    show([team({ has_oauth_token: false, status: 'needs_auth', tools: [] })])
    const r = row('team')
    expect(within(r).getByRole('status', { name: 'Status' })).toHaveTextContent('needs sign-in')
    expect(r).toHaveTextContent('OAuth · each person')
    expect(r).toHaveTextContent('the status shown is yours')
    expect(within(r).queryByRole('button', { name: 'Edit' })).not.toBeInTheDocument()
    expect(within(r).queryByRole('button', { name: 'Sign out' })).not.toBeInTheDocument()
    await userEvent.click(within(r).getByRole('button', { name: 'Sign in' }))
    expect(calls('POST')).toEqual([{ path: '/api/v1/mcp-servers/{id}/connect', params: { path: { id: 't1' } } }])
    expect(open).toHaveBeenLastCalledWith(url, 'mcp-oauth', 'popup,width=520,height=720')
  })

  it('a member who signed in sees it connected and signs out of their own account', async () => {
    show([team({ status: 'connected' })])
    const r = row('team')
    expect(within(r).getByRole('status', { name: 'Status' })).toHaveTextContent('connected')
    expect(r).toHaveTextContent('you are signed in')
    await userEvent.click(within(r).getByRole('button', { name: 'Sign out' }))
    expect(calls('DELETE')).toEqual([{ path: '/api/v1/mcp-servers/{id}/my-sign-in', params: { path: { id: 't1' } } }])
  })

  it('a shared sign-in stays the editor’s: a member of someone else’s server gets no buttons', () => {
    show([oauthServer({ id: 's3', name: 'crm', scope: 'global', owner_id: 'someone', status: 'needs_auth', has_oauth_token: false, tools: [] })])
    expect(within(row('crm')).queryByRole('button')).not.toBeInTheDocument()
  })
})

describe('the form', () => {
  it('an admin’s global OAuth server may ask each person to sign in', async () => {
    show([], admin)
    await userEvent.click(screen.getByRole('button', { name: 'Add MCP server' }))
    const f = form('New MCP server')
    await userEvent.type(within(f).getByLabelText('Name'), 'team')
    await userEvent.type(within(f).getByLabelText('Endpoint'), 'https://team.example/mcp')
    await userEvent.selectOptions(within(f).getByLabelText('Authentication'), 'oauth')
    // A private server has one person: the choice is for shared ones.
    expect(within(f).queryByLabelText('Who signs in')).not.toBeInTheDocument()
    await userEvent.selectOptions(within(f).getByLabelText('Scope'), 'global')
    expect(within(f).getByLabelText('Who signs in')).toHaveValue('shared')
    await userEvent.selectOptions(within(f).getByLabelText('Who signs in'), 'Each person signs in')
    await userEvent.click(within(f).getByRole('button', { name: 'Save' }))
    expect(calls('POST')).toEqual([{ path: '/api/v1/mcp-servers', body: {
      name: 'team', enabled: true, scope: 'global', config: { transport: 'http', endpoint: 'https://team.example/mcp', headers: {}, auth_mode: 'oauth',
        oauth_client_id: '', oauth_client_secret: '', oauth_scopes: [], per_person_auth: true },
    } }])
  })

  it('editing a server each person signs in to keeps the choice and offers no shared Clear sign-in', async () => {
    show([team()], admin)
    await userEvent.click(within(row('team')).getByRole('button', { name: 'Edit' }))
    const f = form('Edit team')
    expect(within(f).getByLabelText('Who signs in')).toHaveValue('personal')
    expect(within(f).queryByRole('button', { name: 'Clear sign-in' })).not.toBeInTheDocument()
    await userEvent.click(within(f).getByRole('button', { name: 'Save' }))
    expect((calls('PUT')[0].body as { config: { per_person_auth?: boolean } }).config.per_person_auth).toBe(true)
  })
})

describe('the agent form’s tool picker', () => {
  it('says a server each person signs in to lists its tools once the reader signs in', () => {
    renderWithData(<MCPToolPicker selected={[]} agent={{ scope: 'global', ownerId: admin.id }} errors={{}} onChange={() => {}} />,
      [[keys.mcpServers, [team({ has_oauth_token: false, status: 'needs_auth', tools: [] })]]])
    expect(screen.getByRole('group', { name: 'Tools of team' })).toHaveTextContent('sign in under Settings → MCP servers to list its tools')
  })
})
