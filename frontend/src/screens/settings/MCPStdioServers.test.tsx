// @vitest-environment jsdom
// A stdio MCP server in the panel: the transport switch shows one
// transport's fields and sends only them; the program's arguments one per
// line, its environment write-only like the headers (the mask keeps a
// stored value); where it runs — this server's host only for admins or when
// an admin allowed members, else one of the caller's projects; the row shows
// the command line and the project; the server's field errors on their fields.
import { screen, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { api, MASK, type MCPServer, type Project, type User } from '../../lib/api'
import { commandLine } from '../../lib/mcpServers'
import { keys } from '../../lib/queries'
import { renderWithData } from '../../test/render'
import { admin, answer, mcpServer, member, refusal, stdioServer } from '../../test/mcp'
import { MEMBERS_ON_HOST } from './MCPStdioFields'
import { MCPServersTab } from './MCPServersTab'

type Call = [string, { params?: { path?: { id: string } }; body?: unknown }?]
const calls = (m: 'POST' | 'PUT') => (vi.mocked(api[m]).mock.calls as unknown as Call[]).map(([path, opts]) => ({ path, ...opts }))
const sent = (m: 'POST' | 'PUT') => (calls(m)[0]?.body as { config: Record<string, unknown> } | undefined)?.config

const project = (id: string, name: string): Project => ({
  id, name, owner_id: member.id, sandbox_id: 'sb1', generation: 1, revision: 1, session_count: 0, created_at: '', updated_at: '',
})
const projects = [project('p1', 'docs'), project('p2', 'site')]

let listed: MCPServer[] = []

/** The panel as `me` sees it; `onHost` is the admin setting that lets members run programs on the host. */
function show(rows: MCPServer[], me: User = member, onHost = false) {
  listed = rows
  return renderWithData(<MCPServersTab />, [
    [keys.me, me], [keys.mcpServers, rows], [keys.projectList(false), projects],
    [['settings'], [{ key: MEMBERS_ON_HOST, value: String(onHost), set: onHost }]],
  ])
}

const row = (name: string) => screen.getByRole('listitem', { name })
const form = (name: string) => screen.getByRole('form', { name })

async function newServer(me: User = member, onHost = false) {
  show([], me, onHost)
  await userEvent.click(screen.getByRole('button', { name: 'Add MCP server' }))
  const f = form('New MCP server')
  await userEvent.type(within(f).getByLabelText('Name'), 'local')
  return f
}

beforeEach(() => {
  vi.spyOn(api, 'GET').mockImplementation((() => answer(200, listed)) as never)
  vi.spyOn(api, 'POST').mockImplementation((() => answer(201, stdioServer())) as never)
  vi.spyOn(api, 'PUT').mockImplementation((() => answer(200, stdioServer())) as never)
})

afterEach(() => {
  vi.restoreAllMocks()
})

describe('the transport', () => {
  it('switching to a local program hides the HTTP fields and shows the program’s, and back', async () => {
    const f = await newServer(admin)
    const transport = within(f).getByRole('radiogroup', { name: 'Transport' })
    expect(within(transport).getByRole('radio', { name: 'HTTP endpoint' })).toBeChecked()
    expect(within(f).getByLabelText('Endpoint')).toBeInTheDocument()
    expect(within(f).getByLabelText('Authentication')).toBeInTheDocument()
    expect(within(f).getByRole('group', { name: 'Headers' })).toBeInTheDocument()
    expect(within(f).queryByLabelText('Command')).not.toBeInTheDocument()

    await userEvent.click(within(transport).getByRole('radio', { name: 'Local program (stdio)' }))
    for (const label of ['Endpoint', 'Authentication']) expect(within(f).queryByLabelText(label)).not.toBeInTheDocument()
    expect(within(f).queryByRole('group', { name: 'Headers' })).not.toBeInTheDocument()
    const program = within(f).getByRole('group', { name: 'Program' })
    expect(within(program).getByLabelText('Command')).toBeRequired()
    expect(within(program).getByLabelText('Arguments').closest('.field')).toHaveTextContent('One argument per line')
    expect(within(program).getByRole('group', { name: 'Environment' })).toBeInTheDocument()
    expect(within(program).getByLabelText('Run in')).toHaveValue('')

    await userEvent.click(within(transport).getByRole('radio', { name: 'HTTP endpoint' }))
    expect(within(f).getByLabelText('Endpoint')).toBeInTheDocument()
    expect(within(f).queryByRole('group', { name: 'Program' })).not.toBeInTheDocument()
  })

  it('a new stdio server sends the program’s fields alone: each line one argument, the variables as entered', async () => {
    const f = await newServer(admin)
    // What was typed for HTTP before switching is not sent.
    await userEvent.type(within(f).getByLabelText('Endpoint'), 'https://stale.example/mcp')
    await userEvent.click(within(f).getByRole('button', { name: 'Add header' }))
    await userEvent.type(within(f).getByLabelText('Header 1 name'), 'X-Stale')
    await userEvent.click(within(f).getByRole('radio', { name: 'Local program (stdio)' }))
    await userEvent.type(within(f).getByLabelText('Command'), ' npx ')
    await userEvent.type(within(f).getByLabelText('Arguments'), '-y{Enter}@modelcontextprotocol/server-everything{Enter}{Enter}a b{Enter}')
    await userEvent.click(within(f).getByRole('button', { name: 'Add variable' }))
    await userEvent.type(within(f).getByLabelText('Variable 1 name'), 'API_KEY')
    await userEvent.type(within(f).getByLabelText('Variable 1 value'), 's3cret')
    expect(within(f).getByLabelText('Variable 1 value')).toHaveAttribute('type', 'password')
    await userEvent.selectOptions(within(f).getByLabelText('Run in'), 'Project site')
    await userEvent.click(within(f).getByRole('button', { name: 'Save' }))
    expect(calls('POST')).toEqual([{ path: '/api/v1/mcp-servers', body: {
      name: 'local', enabled: true, scope: 'private', config: {
        transport: 'stdio', command: 'npx', args: ['-y', '@modelcontextprotocol/server-everything', 'a b'], env: { API_KEY: 's3cret' }, project_id: 'p2',
        endpoint: '', auth_mode: 'header',
      },
    } }])
  })

  it('editing a stdio server shows its program, the variables masked, and sends the mask back for an untouched one', async () => {
    show([stdioServer({}, { env: { API_KEY: MASK, REGION: MASK }, project_id: 'p1' })])
    await userEvent.click(within(row('local')).getByRole('button', { name: 'Edit' }))
    const f = form('Edit local')
    expect(within(f).getByRole('radio', { name: 'Local program (stdio)' })).toBeChecked()
    expect(within(f).getByLabelText('Command')).toHaveValue('npx')
    expect(within(f).getByLabelText('Arguments')).toHaveValue('-y\n@modelcontextprotocol/server-everything\nstdio')
    expect(within(f).getByLabelText('Run in')).toHaveValue('p1')
    expect(within(f).getByLabelText('Variable 1 name')).toHaveValue('API_KEY')
    expect(within(f).getByLabelText('Variable 1 value')).toHaveValue(MASK)
    expect(within(f).getByLabelText('Variable 1 value')).toHaveAttribute('readonly')
    const env = within(f).getByRole('group', { name: 'Environment' })
    await userEvent.click(within(env).getAllByRole('button', { name: 'Replace' })[1])
    await userEvent.type(within(f).getByLabelText('Variable 2 value'), 'eu')
    await userEvent.click(within(f).getByRole('button', { name: 'Save' }))
    expect(calls('PUT')).toEqual([{ path: '/api/v1/mcp-servers/{id}', params: { path: { id: 's1' } }, body: {
      name: 'local', enabled: true, config: {
        transport: 'stdio', command: 'npx', args: ['-y', '@modelcontextprotocol/server-everything', 'stdio'], env: { API_KEY: MASK, REGION: 'eu' }, project_id: 'p1',
        endpoint: '', auth_mode: 'header',
      },
    } }])
  })

  it('a new command line or project asks for the stored variables again before anything is sent', async () => {
    show([stdioServer({}, { project_id: 'p1' })])
    await userEvent.click(within(row('local')).getByRole('button', { name: 'Edit' }))
    const f = form('Edit local')
    await userEvent.type(within(f).getByLabelText('Arguments'), '{Enter}--verbose')
    // No mask and no "Keep stored" for a value that would go to another program.
    expect(within(f).getByLabelText('Variable 1 value')).toHaveValue('')
    expect(within(f).queryByRole('button', { name: 'Keep stored' })).not.toBeInTheDocument()
    expect(within(f).getByRole('group', { name: 'Environment' })).toHaveTextContent('The command line or where it runs changed')
    await userEvent.click(within(f).getByRole('button', { name: 'Save' }))
    expect(calls('PUT')).toEqual([])
    expect(within(f).getByRole('group', { name: 'Environment' })).toHaveTextContent('Enter the value again')

    // Back to the stored command line in another project: asked again too; entered, it goes out.
    await userEvent.clear(within(f).getByLabelText('Arguments'))
    await userEvent.type(within(f).getByLabelText('Arguments'), '-y{Enter}@modelcontextprotocol/server-everything{Enter}stdio')
    await userEvent.selectOptions(within(f).getByLabelText('Run in'), 'p2')
    expect(within(f).getByLabelText('Variable 1 value')).toHaveValue('')
    await userEvent.type(within(f).getByLabelText('Variable 1 value'), 'k2')
    await userEvent.click(within(f).getByRole('button', { name: 'Save' }))
    expect(sent('PUT')).toMatchObject({ project_id: 'p2', env: { API_KEY: 'k2' } })
  })

  it('an HTTP server switched to a program drops its endpoint and headers from the body', async () => {
    show([mcpServer()])
    await userEvent.click(within(row('calc')).getByRole('button', { name: 'Edit' }))
    const f = form('Edit calc')
    await userEvent.click(within(f).getByRole('radio', { name: 'Local program (stdio)' }))
    await userEvent.type(within(f).getByLabelText('Command'), 'uvx')
    await userEvent.selectOptions(within(f).getByLabelText('Run in'), 'p1')
    await userEvent.click(within(f).getByRole('button', { name: 'Save' }))
    expect(sent('PUT')).toEqual({ transport: 'stdio', command: 'uvx', args: [], env: {}, project_id: 'p1', endpoint: '', auth_mode: 'header' })
  })
})

describe('where it runs', () => {
  it('a member without the admin setting is not offered this server’s host, and is told why', async () => {
    const f = await newServer(member, false)
    await userEvent.click(within(f).getByRole('radio', { name: 'Local program (stdio)' }))
    const runIn = within(f).getByLabelText('Run in')
    expect(within(runIn).queryByRole('option', { name: 'This server’s host' })).not.toBeInTheDocument()
    expect(within(runIn).getByRole('option', { name: 'Choose a project…' })).toBeDisabled()
    expect(within(runIn).getAllByRole('option').map((o) => o.textContent)).toEqual(['Choose a project…', 'Project docs', 'Project site'])
    expect(runIn.closest('.field')).toHaveTextContent('Only admins may run a program on this server’s host: pick one of your projects (its sandbox runs it), or ask an admin')
    // Nothing goes out until a project is picked.
    await userEvent.type(within(f).getByLabelText('Command'), 'npx')
    await userEvent.click(within(f).getByRole('button', { name: 'Save' }))
    expect(calls('POST')).toEqual([])
    expect(runIn.closest('.field')).toHaveClass('has-error')
    await userEvent.selectOptions(runIn, 'p1')
    await userEvent.click(within(f).getByRole('button', { name: 'Save' }))
    expect(sent('POST')).toMatchObject({ transport: 'stdio', command: 'npx', project_id: 'p1' })
  })

  it('a member whom the admin setting allows, and an admin, may run it on this server’s host', async () => {
    for (const [me, onHost] of [[member, true], [admin, false]] as const) {
      const { unmount } = show([], me, onHost)
      await userEvent.click(screen.getByRole('button', { name: 'Add MCP server' }))
      const f = form('New MCP server')
      await userEvent.click(within(f).getByRole('radio', { name: 'Local program (stdio)' }))
      const runIn = within(f).getByLabelText('Run in')
      expect(within(runIn).getAllByRole('option').map((o) => o.textContent)).toEqual(['This server’s host', 'Project docs', 'Project site'])
      expect(runIn).toHaveValue('')
      unmount()
    }
  })
})

describe('the list and the server’s answers', () => {
  it('a stdio row shows its command line instead of an endpoint, and the project it runs in', () => {
    const long = '/work/repo/adapters/mcp/testdata/everything/node_modules/@modelcontextprotocol/server-everything/dist/index.js'
    show([stdioServer({}, { project_id: 'p2' }), stdioServer({ id: 's2', name: 'node' }, { command: 'node', args: [long, 'stdio'], env: {} }), mcpServer()])
    const local = row('local')
    expect(local).toHaveTextContent('stdio npx -y @modelcontextprotocol/server-everything stdio in project site · 2 tools')
    const node = within(row('node')).getByText(/^node /)
    expect(node).toHaveTextContent('node …contextprotocol/server-everything/dist/index.js stdio')
    expect(node).toHaveAttribute('title', `node ${long} stdio`)
    expect(row('node')).not.toHaveTextContent('in project')
    expect(row('calc')).toHaveTextContent('https://calc.example/mcp')
    expect(row('calc')).not.toHaveTextContent('stdio')
  })

  it('a command line quotes arguments with spaces and cuts a long line', () => {
    expect(commandLine('uvx', ['mcp-server', 'a b', '']).short).toBe('uvx mcp-server "a b" ""')
    const many = commandLine('x', Array.from({ length: 40 }, (_, i) => `arg${i}`))
    expect(many.short).toHaveLength(120)
    expect(many.short.endsWith('…')).toBe(true)
    expect(many.full.endsWith('arg39')).toBe(true)
  })

  it('the server’s field errors land on the command, a variable’s row and the project; the refusal to run on the host is said', async () => {
    vi.mocked(api.PUT).mockImplementation((() => refusal(400, 'validation', 'invalid input', {
      'config.command': 'is required for a stdio server',
      'config.env.API_KEY': 'the name must be letters, digits and _',
      'config.project_id': 'is not a project you manage',
      'config.args[1]': 'must not hold a NUL byte',
    })) as never)
    show([stdioServer({}, { project_id: 'p1' })])
    await userEvent.click(within(row('local')).getByRole('button', { name: 'Edit' }))
    const f = form('Edit local')
    await userEvent.click(within(f).getByRole('button', { name: 'Save' }))
    expect(await within(f).findByText('invalid input (validation)')).toHaveRole('alert')
    const field = (label: string) => within(f).getByLabelText(label).closest('.field') as HTMLElement
    expect(field('Command')).toHaveTextContent('is required for a stdio server')
    expect(field('Run in')).toHaveTextContent('is not a project you manage')
    expect(field('Arguments')).toHaveTextContent('must not hold a NUL byte')
    expect(within(f).getByLabelText('Variable 1 value').closest('.env-row')).toHaveTextContent('the name must be letters, digits and _')

    vi.mocked(api.PUT).mockImplementation((() => refusal(403, 'forbidden', 'running a program on the server’s host is for admins: pick a project to run it in, or ask an admin')) as never)
    await userEvent.click(within(f).getByRole('button', { name: 'Save' }))
    expect(await within(f).findByText(/pick a project to run it in, or ask an admin \(forbidden\)/)).toHaveRole('alert')
  })
})
