// @vitest-environment jsdom
// The Skills tab as a user sees it: each skill by the name the model calls
// it, where it came from; writing one with the frontmatter previewed as it
// is typed and the server's refusal at the field; deleting (and the
// server's 409 naming the agents that hold it); importing by URL and the
// per-file report.
import { screen, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { api, type Skill, type User } from '../../lib/api'
import { keys } from '../../lib/queries'
import { admin, answer, member, refusal } from '../../test/mcp'
import { renderWithData } from '../../test/render'
import { doc, imported, skill } from '../../test/skills'
import { SkillsTab } from './SkillsTab'

type Call = [string, { params?: { path?: { id: string } }; body?: unknown }?]
const calls = (m: 'GET' | 'POST' | 'PUT' | 'DELETE') => (vi.mocked(api[m]).mock.calls as unknown as Call[]).map(([path, opts]) => ({ path, ...opts }))

let listed: Skill[] = []
function show(rows: Skill[], me: User = member) {
  listed = rows
  return renderWithData(<SkillsTab />, [[keys.me, me], [keys.skills, rows]])
}
const row = (name: string) => screen.getByRole('listitem', { name })

beforeEach(() => {
  vi.spyOn(api, 'GET').mockImplementation((() => answer(200, listed)) as never)
  vi.spyOn(api, 'POST').mockImplementation((() => answer(201, skill())) as never)
  vi.spyOn(api, 'PUT').mockImplementation((() => answer(200, skill())) as never)
  vi.spyOn(api, 'DELETE').mockImplementation((() => answer(204)) as never)
})
afterEach(() => {
  vi.restoreAllMocks()
})

describe('the list', () => {
  it('shows each skill by its model name, with its description, scope and origin', () => {
    show([skill(), imported(), imported({ id: 'k3', name: 'lint', model_name: 'acme/tools:lint', description: 'Lint rules', detached: true })])
    const release = row('release')
    expect(release).toHaveTextContent('How we cut a release')
    expect(release).toHaveTextContent('private')
    expect(release.querySelector('[data-origin]')).toBeNull()
    expect(row('acme/tools:house-style').querySelector('[data-origin]')).toHaveTextContent('imported from acme/tools @ c0ffee1')
    const lint = row('acme/tools:lint')
    expect(lint).toHaveTextContent('detached')
    expect(lint.querySelector('[data-origin]')).toHaveTextContent('imported from acme/tools, edited here (detached)')
  })

  it('an admin publishes an authored skill alone, an imported one with its repository', async () => {
    show([skill({ owner_id: admin.id }), imported({ owner_id: admin.id })], admin)
    expect(within(row('release')).getByRole('button', { name: 'Publish' })).toBeInTheDocument()
    await userEvent.click(within(row('acme/tools:house-style')).getByRole('button', { name: 'Publish repository' }))
    expect(calls('POST')).toEqual([{ path: '/api/v1/skill-repos/scope', body: { source_repo: 'https://github.com/acme/tools', owner_id: admin.id, scope: 'global' } }])
  })

  it('a member sees no scope buttons and cannot change someone else’s shared skill', () => {
    show([skill({ scope: 'global', owner_id: 'someone' })])
    expect(within(row('release')).queryByRole('button')).not.toBeInTheDocument()
  })

  it('deleting asks once more, and shows why the server refused', async () => {
    show([skill()])
    vi.mocked(api.DELETE).mockImplementation((() => refusal(409, 'conflict', 'the agents Planner select this skill: take it out of their skills first')) as never)
    await userEvent.click(within(row('release')).getByRole('button', { name: 'Delete release' }))
    await userEvent.click(within(row('release')).getByRole('button', { name: 'Delete?' }))
    expect(calls('DELETE')).toEqual([{ path: '/api/v1/skills/{id}', params: { path: { id: 'k1' } } }])
    expect(await within(row('release')).findByRole('alert')).toHaveTextContent('the agents Planner select this skill')
  })
})

describe('writing a skill', () => {
  it('previews the frontmatter as it is typed, and sends the whole document', async () => {
    show([])
    await userEvent.click(screen.getByRole('button', { name: 'New skill' }))
    const form = screen.getByRole('form', { name: 'New skill' })
    const preview = within(form).getByRole('region', { name: 'Frontmatter preview' })
    expect(preview).toHaveTextContent('frontmatter name: is empty')
    const text = within(form).getByLabelText('SKILL.md')
    await userEvent.clear(text)
    await userEvent.type(text, 'name: my skill')
    expect(preview).toHaveTextContent('has no frontmatter')
    await userEvent.clear(text)
    await userEvent.click(text)
    await userEvent.paste('---\nname: my skill\ndescription: Cut a release\n---\nbody')
    expect(preview).toHaveTextContent('frontmatter name "my skill" may hold only letters')
    await userEvent.clear(text)
    await userEvent.paste(doc('release', 'Cut a release'))
    expect(preview).toHaveTextContent('NamereleaseDescriptionCut a release')
    expect(preview).toHaveTextContent('The frontmatter reads well')
    await userEvent.click(within(form).getByRole('button', { name: 'Save' }))
    expect(calls('POST')).toEqual([{ path: '/api/v1/skills', body: { content: doc('release', 'Cut a release') } }])
    expect(screen.queryByRole('form', { name: 'New skill' })).not.toBeInTheDocument()
  })

  it('shows the server’s verdict at the field', async () => {
    show([])
    vi.mocked(api.POST).mockImplementation((() => refusal(409, 'conflict', 'a skill named release exists', {})) as never)
    await userEvent.click(screen.getByRole('button', { name: 'New skill' }))
    const form = screen.getByRole('form', { name: 'New skill' })
    const text = within(form).getByLabelText('SKILL.md')
    await userEvent.clear(text)
    await userEvent.paste(doc('release', 'x'))
    vi.mocked(api.POST).mockImplementation((() => refusal(400, 'validation', 'invalid', { content: 'frontmatter has no description:' })) as never)
    await userEvent.click(within(form).getByRole('button', { name: 'Save' }))
    expect(await within(form).findByText('The document frontmatter has no description:')).toHaveClass('error-text')
    expect(text).toHaveAttribute('aria-invalid', 'true')
    vi.mocked(api.POST).mockImplementation((() => refusal(409, 'conflict', 'a skill named release exists')) as never)
    await userEvent.click(within(form).getByRole('button', { name: 'Save' }))
    expect(await within(form).findByText('a skill named release exists (conflict)')).toBeInTheDocument()
  })

  it('editing an imported skill warns that it detaches, and PUTs the content', async () => {
    show([imported()])
    await userEvent.click(within(row('acme/tools:house-style')).getByRole('button', { name: 'Edit' }))
    const form = screen.getByRole('form', { name: 'Edit acme/tools:house-style' })
    expect(form).toHaveTextContent('Saving a change detaches it')
    await userEvent.type(within(form).getByLabelText('SKILL.md'), 'More.')
    await userEvent.click(within(form).getByRole('button', { name: 'Save' }))
    expect(calls('PUT')).toEqual([{ path: '/api/v1/skills/{id}', params: { path: { id: 'k2' } }, body: { content: `${doc('house-style', 'Our prose rules')}More.` } }])
  })
})

describe('importing', () => {
  it('posts the URL and shows what was created, updated, unchanged and skipped, and a truncated listing', async () => {
    show([])
    vi.mocked(api.POST).mockImplementation((() => answer(200, {
      repo: 'acme/tools', source_repo: 'https://github.com/acme/tools', commit: 'c0ffee1234567', truncated: true,
      created: [{ id: 'k1', name: 'release', model_name: 'acme/tools:release', path: 'skills/release/SKILL.md' }],
      updated: [], unchanged: [{ id: 'k2', name: 'house-style', model_name: 'acme/tools:house-style', path: 'style/SKILL.md' }],
      skipped: [{ path: 'bad/SKILL.md', reason: 'has no frontmatter' }],
    })) as never)
    await userEvent.type(screen.getByLabelText('Import from a URL'), 'https://github.com/acme/tools')
    await userEvent.click(screen.getByRole('button', { name: 'Import' }))
    expect(calls('POST')).toEqual([{ path: '/api/v1/skill-imports', body: { url: 'https://github.com/acme/tools' } }])
    const report = await screen.findByRole('status', { name: 'Import report' })
    expect(report).toHaveTextContent('acme/tools @ c0ffee1: 1 created, 0 updated, 1 unchanged, 1 skipped')
    expect(report).toHaveTextContent('GitHub cut the repository')
    expect(within(report).getByRole('list', { name: 'Created' })).toHaveTextContent('acme/tools:release skills/release/SKILL.md')
    expect(within(report).getByRole('list', { name: 'Unchanged' })).toHaveTextContent('acme/tools:house-style')
    expect(within(report).queryByRole('list', { name: 'Updated' })).not.toBeInTheDocument()
    expect(within(report).getByRole('list', { name: 'Skipped' })).toHaveTextContent('bad/SKILL.md: has no frontmatter')
  })

  it('shows a refused or failed import as a message', async () => {
    show([])
    vi.mocked(api.POST).mockImplementation((() => refusal(502, 'upstream', 'fetching https://api.github.com/repos/acme/nope/commits/HEAD: 404 Not Found')) as never)
    await userEvent.type(screen.getByLabelText('Import from a URL'), 'https://github.com/acme/nope')
    await userEvent.click(screen.getByRole('button', { name: 'Import' }))
    expect(await screen.findByRole('alert')).toHaveTextContent('404 Not Found (upstream)')
    expect(screen.queryByRole('status', { name: 'Import report' })).not.toBeInTheDocument()
  })
})
