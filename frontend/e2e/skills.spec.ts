// Skills in the browser: a repository imported from a fake GitHub API (a
// local server answering the calls the importer makes), the per-file
// report, an imported skill edited here (detached), an agent picking one
// skill, and a chat whose model reads it — the read_skill card, and the
// skills index and read_skill in the context panel.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { expect, expectConsole, idle, inspector, newConversation, test } from './fixtures'
import { exclusive } from './lock'

const COMMIT = 'c1a2b3c4d5e6f708'
const doc = (name: string, description: string, body: string) => `---\nname: ${name}\ndescription: ${description}\n---\n${body}`
const FILES: Record<string, string> = {
  'skills/release/SKILL.md': doc('release', 'How we cut a release', '# Release\n\n1. Tag the commit\n2. Publish the notes\n'),
  'style/SKILL.md': doc('house-style', 'Our prose rules', '# House style\n\nShort sentences.\n'),
  'bad/SKILL.md': '# no frontmatter here\n',
}

/** The GitHub REST calls an import makes, for acme/tools at COMMIT: the HEAD commit, the tree, each file raw. */
function fakeGitHub(): Promise<Server> {
  const repo = '/repos/acme/tools'
  const server = createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://x')
    const json = (v: unknown) => res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(v))
    if (u.pathname === `${repo}/commits/HEAD`) return json({ sha: COMMIT })
    if (u.pathname === `${repo}/git/trees/${COMMIT}` && u.searchParams.get('recursive') === '1') {
      return json({ sha: COMMIT, truncated: false, tree: [{ path: 'README.md', type: 'blob', size: 10 }, ...Object.entries(FILES).map(([path, c]) => ({ path, type: 'blob', size: c.length }))] })
    }
    const file = u.pathname.startsWith(`${repo}/contents/`) && u.searchParams.get('ref') === COMMIT ? FILES[decodeURIComponent(u.pathname.slice(`${repo}/contents/`.length))] : undefined
    if (file !== undefined) return res.writeHead(200, { 'Content-Type': 'text/plain' }).end(file)
    res.writeHead(404).end('not found')
  })
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)))
}

test('skills: import a repository, edit one (detached), and an agent reads one in a chat', async ({ page, stack, user, agentFor }) => {
  test.setTimeout(90_000)
  // The import settings are the server's, one for every test: held for this test alone.
  const release = await exclusive('skills-github', 60_000)
  const github = await fakeGitHub()
  try {
    await stack.api('PUT', '/settings/skills_github_api_url', { value: `http://127.0.0.1:${(github.address() as AddressInfo).port}` })
    const agent = await agentFor('Reader', 'skill-reader')

    // Import from the UI: the report lists each file.
    await page.goto('/settings/skills')
    await page.getByLabel('Import from a URL').fill('https://github.com/acme/tools')
    await page.getByRole('button', { name: 'Import', exact: true }).click()
    const report = page.getByRole('status', { name: 'Import report' })
    await expect(report).toContainText('acme/tools @ c1a2b3c: 2 created, 0 updated, 0 unchanged, 1 skipped')
    await expect(report.getByRole('list', { name: 'Created' })).toContainText('acme/tools:release')
    await expect(report.getByRole('list', { name: 'Created' })).toContainText('acme/tools:house-style')
    await expect(report.getByRole('list', { name: 'Skipped' })).toContainText('bad/SKILL.md')

    // An admin lists everyone's skills: this test's are the ones its user owns.
    const list = page.getByRole('list', { name: 'Skills' })
    const row = (name: string) => list.locator(`li[data-owner="${user.id}"][data-skill="${name}"]`)
    const releaseRow = row('acme/tools:release')
    await expect(releaseRow).toContainText('How we cut a release')
    await expect(releaseRow).toContainText('imported from acme/tools @ c1a2b3c')

    // Edit an imported one: it says it detaches, and the row shows it did.
    const style = row('acme/tools:house-style')
    await style.getByRole('button', { name: 'Edit' }).click()
    const form = page.getByRole('form', { name: 'Edit acme/tools:house-style' })
    await expect(form).toContainText('Saving a change detaches it')
    const text = form.getByLabel('SKILL.md')
    await text.fill(doc('house-style', 'Our prose rules, edited here', '# House style\n\nVery short sentences.\n'))
    await expect(form.getByRole('region', { name: 'Frontmatter preview' })).toContainText('Our prose rules, edited here')
    await form.getByRole('button', { name: 'Save' }).click()
    await expect(form).toBeHidden()
    await expect(style).toContainText('detached')
    await expect(style).toContainText('edited here (detached)')
    await expect(style).toContainText('Our prose rules, edited here')

    // The agent reads only the release skill.
    await page.getByRole('tab', { name: 'Agents' }).click()
    await page.locator('.row', { hasText: agent.name }).getByRole('button', { name: 'Edit' }).click()
    await page.locator('details[data-group="skills"] > summary').click()
    await page.getByRole('radio', { name: 'Specific skills' }).check()
    await page.getByRole('group', { name: 'Skills to read' }).getByRole('checkbox', { name: 'acme/tools:release', exact: true }).check()
    await page.getByRole('button', { name: 'Save' }).first().click()
    await expect(page.locator('.form-top').getByText('Saved')).toBeVisible()
    const skills: { id: string; model_name: string }[] = await user.api('GET', '/skills')
    const releaseId = skills.find((k) => k.model_name === 'acme/tools:release')?.id
    expect((await user.api('GET', `/agents/${agent.id}`)).skills).toEqual([releaseId])

    // A chat: the model calls read_skill; the card names the skill and folds its document.
    await newConversation(page, agent.name, 'How do we cut a release?')
    const card = page.locator('.tool-card[data-tool="read_skill"]')
    await expect(card).toHaveAttribute('data-skill', 'acme/tools:release')
    await expect(card.locator('.tool-title')).toHaveText('acme/tools:release')
    await expect(card.locator('.tool-summary')).toHaveText('How we cut a release')
    await card.getByRole('button', { name: 'Show the document' }).click()
    const shown = card.getByRole('document', { name: 'SKILL.md of acme/tools:release' })
    await expect(shown.getByRole('heading', { name: 'Release' })).toBeVisible()
    await expect(shown).toContainText('Publish the notes')
    await idle(page)
    await expect(page.locator('.msg-assistant .markdown', { hasText: 'Following the release skill' })).toBeVisible()

    // The context panel shows what the skills cost: the index and the tool.
    const panel = await inspector(page)
    await panel.getByRole('tab', { name: 'Context' }).click()
    const line = (label: string) => panel.locator('.ctx-list li', { has: page.locator('span', { hasText: new RegExp(`^${label}$`) }) })
    await expect(line('Skills index')).toBeVisible()
    expect(Number((await line('Skills index').locator('span').nth(1).innerText()).replace(/\D/g, ''))).toBeGreaterThan(0)
    await expect(line('read_skill')).toBeVisible()
    expect(Number((await line('read_skill').locator('span').nth(1).innerText()).replace(/\D/g, ''))).toBeGreaterThan(0)
  } finally {
    await stack.api('DELETE', '/settings/skills_github_api_url').catch(() => {})
    await new Promise((r) => github.close(r))
    release()
  }
})

test('skills: an import that cannot reach its address says why in words, not the dialer\'s', { annotation: expectConsole(/status of 502/) }, async ({ page }) => {
  // Port 9 (discard) listens nowhere here: the connection is refused.
  await page.goto('/settings/skills')
  await page.getByLabel('Import from a URL').fill('http://127.0.0.1:9/SKILL.md')
  await page.getByRole('button', { name: 'Import', exact: true }).click()
  await expect(page.getByText(/nothing there took the connection; check the address and its port/)).toBeVisible()
  await expect(page.getByText(/dial tcp|connect: connection refused/)).toHaveCount(0)
})
