// @vitest-environment jsdom
// The sandboxes panel's form for an E2B-compatible sandbox: its headers
// (write-only values edited as rows — kept with the mask, replaced,
// removed), the server's errors on the row they name, and what the form
// says is frozen once projects live on the sandbox.
import { screen, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { api, MASK, type Sandbox } from '../../lib/api'
import { keys } from '../../lib/queries'
import { answer, refusal } from '../../test/mcp'
import { renderWithData } from '../../test/render'
import { SandboxesTab } from './SandboxesTab'

type Call = [string, { params?: { path?: { id: string } }; body?: { config: Record<string, unknown> } & Record<string, unknown> }?]
const calls = (m: 'POST' | 'PUT') => (vi.mocked(api[m]).mock.calls as unknown as Call[]).map(([path, opts]) => ({ path, ...opts }))

const types = [
  { type: 'docker', supports: { runs: true, rebuild: true, public_host: false } },
  { type: 'e2b', supports: { runs: true, rebuild: false, public_host: true } },
]

function e2bSandbox(over: Partial<Sandbox> = {}, config: Record<string, unknown> = {}): Sandbox {
  return {
    id: 'b1', name: 'cloud', type: 'e2b', prompt: '', revision: 3, project_count: 0, created_at: '', updated_at: '',
    supports: { runs: true, rebuild: false, public_host: true },
    ...over,
    config: {
      template_id: 'base', api_url: '', domain: '', api_key: MASK, data_plane_auth: '', timeout_seconds: 0, auto_pause: true, allow_internet: false,
      max_read_file_bytes: 0, headers: { 'X-Foo': MASK, 'X-Bar': MASK }, ...config,
    },
  }
}

const dockerSandbox = (over: Partial<Sandbox> = {}): Sandbox => ({
  id: 'd1', name: 'local', type: 'docker', prompt: '', revision: 1, project_count: 0, created_at: '', updated_at: '',
  supports: { runs: true, rebuild: true, public_host: false },
  ...over,
  config: { image: 'ubuntu:24.04', host: '', ssh_password: '', ssh_key: '', runtime: '', user: '', network: '', memory_mb: 0, cpus: 0, max_read_file_bytes: 0 },
})

let listed: Sandbox[] = []

function show(rows: Sandbox[]) {
  listed = rows
  return renderWithData(<SandboxesTab admin />, [[keys.sandboxes, rows], [keys.sandboxTypes, types]])
}

const form = (name: string) => screen.getByRole('form', { name })
const headers = (f: HTMLElement) => within(f).getByRole('group', { name: 'Headers' })
const headerRow = (f: HTMLElement, n: number) => within(f).getByLabelText(`Header ${n} value`).closest('.env-row') as HTMLElement

async function edit(s: Sandbox) {
  show([s])
  await userEvent.click(within(screen.getByRole('listitem')).getByRole('button', { name: 'Edit' }))
  return form(`Edit ${s.name}`)
}

async function save(f: HTMLElement) {
  await userEvent.click(within(f).getByRole('button', { name: 'Save' }))
}

const sentConfig = (m: 'POST' | 'PUT') => calls(m)[0]?.body?.config

beforeEach(() => {
  vi.spyOn(api, 'GET').mockImplementation((() => answer(200, listed)) as never)
  vi.spyOn(api, 'POST').mockImplementation((() => answer(201, e2bSandbox())) as never)
  vi.spyOn(api, 'PUT').mockImplementation((() => answer(200, e2bSandbox())) as never)
})

afterEach(() => {
  vi.restoreAllMocks()
})

describe('an e2b sandbox’s headers', () => {
  it('a new sandbox adds and removes header rows; what is left is sent, an empty value too', async () => {
    show([])
    await userEvent.click(screen.getByRole('button', { name: 'Add sandbox' }))
    const f = form('New sandbox')
    await userEvent.type(within(f).getByLabelText('Name'), 'cloud')
    await userEvent.selectOptions(within(f).getByLabelText('Type'), 'e2b')
    await userEvent.type(within(f).getByLabelText('Template ID'), 'base')
    expect(within(headers(f)).queryAllByRole('textbox')).toHaveLength(0)

    for (let i = 0; i < 3; i++) await userEvent.click(within(f).getByRole('button', { name: 'Add header' }))
    expect(within(f).getByLabelText('Header 3 name')).toBeInTheDocument()
    await userEvent.type(within(f).getByLabelText('Header 1 name'), 'X-Tenant')
    await userEvent.type(within(f).getByLabelText('Header 1 value'), 'acme')
    expect(within(f).getByLabelText('Header 1 value')).toHaveAttribute('type', 'password')
    await userEvent.type(within(f).getByLabelText('Header 2 name'), 'X-Gone')
    await userEvent.type(within(f).getByLabelText('Header 3 name'), 'X-Empty')
    await userEvent.click(within(f).getByRole('button', { name: 'Remove X-Gone' }))
    expect(within(f).queryByLabelText('Header 3 name')).not.toBeInTheDocument()
    expect(within(f).getByLabelText('Header 2 name')).toHaveValue('X-Empty')
    // A row never filled in says nothing and is not sent.
    await userEvent.click(within(f).getByRole('button', { name: 'Add header' }))
    await userEvent.click(within(f).getByRole('button', { name: 'Remove header 3' }))
    expect(within(f).queryByLabelText('Header 3 name')).not.toBeInTheDocument()
    await userEvent.click(within(f).getByRole('button', { name: 'Add header' }))

    await save(f)
    expect(calls('POST')).toHaveLength(1)
    expect(sentConfig('POST')).toMatchObject({ template_id: 'base', api_key: '', headers: { 'X-Tenant': 'acme', 'X-Empty': '' } })
  })

  it('stored headers show as kept, and an untouched one is sent back as the mask', async () => {
    const f = await edit(e2bSandbox())
    expect(within(f).getByLabelText('Header 1 name')).toHaveValue('X-Foo')
    expect(within(f).getByLabelText('Header 1 name')).toHaveAttribute('readonly')
    expect(within(f).getByLabelText('Header 1 value')).toHaveValue(MASK)
    expect(within(f).getByLabelText('Header 1 value')).toHaveAttribute('readonly')
    expect(within(f).getByLabelText('Header 2 value')).toHaveValue(MASK)
    await save(f)
    expect(calls('PUT')).toEqual([{ path: '/api/v1/sandboxes/{id}', params: { path: { id: 'b1' } }, body: {
      name: 'cloud', type: 'e2b', prompt: '', revision: 3, config: {
        template_id: 'base', api_url: '', domain: '', api_key: MASK, data_plane_auth: '', timeout_seconds: 0, auto_pause: true, allow_internet: false,
        max_read_file_bytes: 0, headers: { 'X-Foo': MASK, 'X-Bar': MASK },
      },
    } }])
  })

  it('replacing a stored value sends the new one; “Keep stored” takes it back', async () => {
    const f = await edit(e2bSandbox())
    await userEvent.click(within(headerRow(f, 1)).getByRole('button', { name: 'Replace' }))
    expect(within(f).getByLabelText('Header 1 value')).toHaveValue('')
    await userEvent.type(within(f).getByLabelText('Header 1 value'), 'n3w')
    await userEvent.click(within(headerRow(f, 2)).getByRole('button', { name: 'Replace' }))
    await userEvent.click(within(headerRow(f, 2)).getByRole('button', { name: 'Keep stored' }))
    await save(f)
    expect(sentConfig('PUT')?.headers).toEqual({ 'X-Foo': 'n3w', 'X-Bar': MASK })
  })

  it('replacing with nothing sends an empty value', async () => {
    const f = await edit(e2bSandbox())
    await userEvent.click(within(headerRow(f, 2)).getByRole('button', { name: 'Replace' }))
    await save(f)
    expect(sentConfig('PUT')?.headers).toEqual({ 'X-Foo': MASK, 'X-Bar': '' })
  })

  it('removing a stored header leaves it out, which removes it', async () => {
    const f = await edit(e2bSandbox())
    await userEvent.click(within(f).getByRole('button', { name: 'Remove X-Bar' }))
    expect(within(f).queryByLabelText('Header 2 name')).not.toBeInTheDocument()
    await save(f)
    expect(sentConfig('PUT')?.headers).toEqual({ 'X-Foo': MASK })
  })

  it('a sandbox stored without headers sends an empty object', async () => {
    const f = await edit(e2bSandbox({}, { headers: undefined }))
    expect(within(f).queryByLabelText('Header 1 name')).not.toBeInTheDocument()
    await save(f)
    expect(sentConfig('PUT')?.headers).toEqual({})
  })

  it('the server’s error about one header lands on its row; one about them all, under the editor', async () => {
    vi.mocked(api.PUT).mockImplementation((() => refusal(400, 'validation', 'invalid input', {
      'config.headers.X-Foo': 'is not a valid header value',
      'config.headers': 'at most 20 headers',
    })) as never)
    const f = await edit(e2bSandbox())
    await save(f)
    expect(await within(f).findByText('invalid input (validation)')).toHaveRole('alert')
    expect(headerRow(f, 1)).toHaveTextContent('is not a valid header value')
    expect(headerRow(f, 2)).not.toHaveTextContent('is not a valid header value')
    const field = headers(f).closest('.field') as HTMLElement
    expect(field).toHaveClass('has-error')
    expect(field).toHaveTextContent('at most 20 headers')
    // Each is said once, where it belongs: neither is repeated as a stray error.
    expect(within(f).queryByText(/^config\.headers/)).not.toBeInTheDocument()
  })

  it('a header error matches its row whatever the case of the name', async () => {
    vi.mocked(api.PUT).mockImplementation((() => refusal(400, 'validation', 'invalid input', { 'config.headers.x-bar': 'is refused' })) as never)
    const f = await edit(e2bSandbox())
    await save(f)
    await within(f).findByText('invalid input (validation)')
    expect(headerRow(f, 2)).toHaveTextContent('is refused')
  })

  it('a header without a name, or named twice, is caught before sending', async () => {
    const f = await edit(e2bSandbox())
    await userEvent.click(within(f).getByRole('button', { name: 'Add header' }))
    await userEvent.type(within(f).getByLabelText('Header 3 name'), 'x-foo')
    await userEvent.click(within(f).getByRole('button', { name: 'Add header' }))
    await userEvent.type(within(f).getByLabelText('Header 4 value'), 'v')
    await save(f)
    expect(calls('PUT')).toEqual([])
    expect(headerRow(f, 3)).toHaveTextContent('Given twice (header names are case-insensitive)')
    expect(headerRow(f, 4)).toHaveTextContent('Name the header')
    expect(within(f).getByText('Some values need your attention.')).toHaveRole('alert')
  })

  it('a docker sandbox has no headers to edit or send', async () => {
    const f = await edit(dockerSandbox())
    expect(within(f).queryByRole('group', { name: 'Headers' })).not.toBeInTheDocument()
    await save(f)
    expect(sentConfig('PUT')).not.toHaveProperty('headers')
  })
})

describe('what projects freeze', () => {
  it('an e2b sandbox says its service, template, auto-pause and internet access are frozen', async () => {
    const f = await edit(e2bSandbox({ project_count: 2 }))
    expect(f).toHaveTextContent('2 projects live here: the service, template, auto-pause and internet access are frozen: each project’s files live in its E2B sandbox. The timeout, the key and the headers stay editable.')
    expect(f).not.toHaveTextContent('containers')
  })

  it('a docker sandbox keeps its words about containers', async () => {
    const f = await edit(dockerSandbox({ project_count: 1 }))
    expect(f).toHaveTextContent('A project lives here: the type and where it runs are frozen. A change to what runs (the image, the limits) replaces their containers at their next use; files under /workspace stay.')
  })

  it('with no project on it, nothing is said to be frozen', async () => {
    const f = await edit(e2bSandbox())
    expect(f).not.toHaveTextContent('frozen')
  })
})
