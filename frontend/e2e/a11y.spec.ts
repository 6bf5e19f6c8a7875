// Accessibility: axe-core (its own source, injected into the page) finds no
// serious or critical violation on the main screens; and the transcript is
// a list of messages, each saying who spoke.
import { createRequire } from 'node:module'
import type { Page } from '@playwright/test'
import type { AxeResults, Result } from 'axe-core'
import { conversationFor, expect, inspector, test } from './fixtures'

const axeSource = createRequire(import.meta.url).resolve('axe-core')

// The app's CSP (default-src 'self') refuses an injected script; axe is the
// test's, not the app's, so this spec's pages let it in. Reduced motion:
// colours are measured as they settle, not halfway through a transition.
test.use({ bypassCSP: true, reducedMotion: 'reduce' })

function describe(v: Result) {
  const nodes = v.nodes.slice(0, 6).map((n) => `    ${n.target.join(' ')}: ${n.failureSummary?.replace(/\s+/g, ' ')}`)
  return `${v.id} (${v.impact}) ${v.help}\n${nodes.join('\n')}`
}

/** Runs axe on the page as it stands; fails listing every serious or critical violation. */
async function expectAccessible(page: Page, what: string) {
  if (!(await page.evaluate(() => 'axe' in window))) await page.addScriptTag({ path: axeSource })
  const results = await page.evaluate(() => (window as unknown as { axe: { run: (c: Document, o: object) => Promise<AxeResults> } }).axe.run(document, { resultTypes: ['violations'] }))
  const bad = results.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
  expect(bad.length, `${what}: axe found\n${bad.map(describe).join('\n')}`).toBe(0)
}

test('a11y: a conversation with folded messages and its fold, light and dark', async ({ page, user, agentFor }) => {
  const agent = await agentFor('Folder', 'compacting', { compaction: { compaction_enabled: true, compaction_threshold_tokens: 10_000_000, compaction_window: 2 } })
  const sid = await conversationFor(user, agent.id, 'Tell me about apples')
  for (const input of ['And pears?', 'And plums?']) await user.api('POST', `/sessions/${sid}/runs`, { input }, user.token, { Prefer: 'wait=60' })
  await page.goto(`/s/${sid}`)
  const panel = await inspector(page)
  await panel.getByRole('tab', { name: 'Context' }).click()
  await panel.getByRole('button', { name: 'Compact now' }).click()
  await expect(page.locator('.item.item-folded').first()).toBeVisible()
  await page.locator('.timeline details.compaction summary').click()
  await expectAccessible(page, 'folded messages and the fold (light)')
  await page.getByRole('button', { name: 'Dark theme' }).click()
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'dark')
  await expectAccessible(page, 'folded messages and the fold (dark)')
  await page.getByRole('button', { name: 'Light theme' }).click()
})

test('a11y: the chat with an answer and a tool card, and the inspector', async ({ page, user, agentFor }) => {
  const agent = await agentFor('Planner', 'todo')
  const sid = await conversationFor(user, agent.id, 'Plan the release')
  await page.goto(`/s/${sid}`)
  await expect(page.locator('.msg-assistant .markdown', { hasText: 'Here is the plan' })).toBeVisible()
  const card = page.locator('.tool-card[data-tool="todo_write"]')
  await expect(card).toBeVisible()
  await card.locator('.tool-head').click()
  await expect(card.getByText('Checklist saved')).toBeVisible()

  // The transcript: a list of messages, each with its speaker.
  const list = page.getByRole('list', { name: 'Messages' })
  await expect(list).toBeVisible()
  const first = list.getByRole('listitem').filter({ hasText: 'Plan the release' }).first()
  await expect(first).toContainText('You said:')
  await expect(list.getByRole('listitem').filter({ hasText: 'Here is the plan' })).toContainText(`${agent.name} said:`)

  const panel = await inspector(page)
  await panel.getByRole('tab', { name: 'Trace' }).click()
  await panel.locator('.span-row', { hasText: 'generation' }).first().click()
  await expect(panel.locator('.span-detail .json-label').first()).toBeVisible()
  await expectAccessible(page, 'chat + trace panel (light)')

  await panel.getByRole('tab', { name: 'Context' }).click()
  await expect(panel.locator('.ctx-big')).toBeVisible()
  await expectAccessible(page, 'chat + context panel (light)')

  await page.getByRole('button', { name: 'Dark theme' }).click()
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'dark')
  await expectAccessible(page, 'chat + context panel (dark)')
  await page.getByRole('button', { name: 'Light theme' }).click()

  await page.getByRole('button', { name: 'Keyboard shortcuts' }).click()
  await expect(page.getByRole('dialog', { name: 'Keyboard shortcuts' })).toBeVisible()
  await expectAccessible(page, 'keyboard shortcuts dialog')
})

test('a11y: settings — providers, agents, the agent form and every other tab', async ({ page, agentFor }) => {
  await agentFor('Planner', 'todo')
  await page.goto('/settings/providers')
  await expect(page.locator('.row').first()).toBeVisible()
  await expectAccessible(page, 'settings: providers')

  await page.getByRole('tab', { name: 'Agents' }).click()
  await expect(page.locator('.row').first()).toBeVisible()
  await expectAccessible(page, 'settings: agents')

  await page.getByRole('button', { name: 'New agent' }).click()
  await expect(page.getByLabel('Name', { exact: true })).toBeVisible()
  await expectAccessible(page, 'settings: new agent form')

  // The other tabs, as each first draws.
  for (const tab of ['MCP servers', 'Skills', 'Memories', 'Projects', 'Sandboxes', 'Guardrails', 'Global settings', 'Access tokens', 'Users']) {
    await page.getByRole('tab', { name: tab }).click()
    await expect(page.getByRole('tab', { name: tab })).toHaveAttribute('aria-selected', 'true')
    await expect(page.locator('.settings-body')).not.toContainText('Loading')
    await expectAccessible(page, `settings: ${tab}`)
  }
})

test('a11y: a ChatGPT provider\'s sign-in, waiting for the pasted address', async ({ page, context, user, tag }) => {
  await user.api('POST', '/providers', { name: `chatgpt ${tag}`, auth_mode: 'chatgpt_login' })
  await page.goto('/settings/providers')
  await page.locator('.row', { hasText: `chatgpt ${tag}` }).getByRole('button', { name: 'Edit' }).click()
  const opened = context.waitForEvent('page')
  await page.getByRole('button', { name: 'Sign in with ChatGPT' }).click()
  await (await opened).close()
  await expect(page.getByLabel('Callback URL')).toBeVisible()
  await expectAccessible(page, 'settings: ChatGPT sign-in')
})

test('a11y: skills — the list, the editor with its preview, and the agent form\'s picker', async ({ page, user, agentFor }) => {
  await user.api('POST', '/skills', { content: '---\nname: release\ndescription: How we cut a release\n---\n# Release\n' })
  const agent = await agentFor('Reader', 'todo')
  await page.goto('/settings/skills')
  await expect(page.locator(`li[data-owner="${user.id}"]`, { hasText: 'How we cut a release' })).toBeVisible()
  await page.getByRole('button', { name: 'New skill' }).click()
  await expect(page.getByRole('region', { name: 'Frontmatter preview' })).toContainText('frontmatter name: is empty')
  await expectAccessible(page, 'settings: skills with the new skill form')

  await page.getByRole('tab', { name: 'Agents' }).click()
  await page.locator('.row', { hasText: agent.name }).getByRole('button', { name: 'Edit' }).click()
  await page.locator('details[data-group="skills"] > summary').click()
  await page.getByRole('radio', { name: 'Specific skills' }).check()
  await expect(page.getByRole('group', { name: 'Skills to read' }).getByRole('checkbox', { name: 'release', exact: true })).toBeVisible()
  await expectAccessible(page, 'settings: the agent form\'s skills')
})

test("a11y: the workflows hub with its triggers, a definition's flowchart, the editor and the composer's commands", async ({ page, user, agentFor, tag }) => {
  const agent = await agentFor('Builder', 'wf-deploy')
  const sid = await conversationFor(user, agent.id, 'Hello')
  const wf = await user.api('POST', '/workflows', {
    name: `a11y-${tag}`, description: 'Two steps and a loop',
    steps: [
      { name: 'build', agent: agent.id, prompt: 'Build it', compact_before: true },
      { name: 'check', agent: agent.id, prompt: 'Check it', gate: true, on_failure: 'build', pause_before: true },
    ],
  })
  await user.api('POST', `/workflows/${wf.id}/runs`, { session_id: sid, input: 'go' })
  await user.api('POST', '/triggers', { name: `hook-${tag}`, kind: 'webhook', target: 'agent', agent_config_id: agent.id, session_id: sid, brief: 'Look at it' })
  await user.api('POST', '/triggers', { kind: 'cron', schedule: '@daily', target: 'workflow', workflow_id: wf.id, session_id: sid, brief: 'Nightly', enabled: false })
  await page.goto('/workflows')
  await expect(page.locator('.wf-run-row')).toHaveCount(1)
  await expect(page.getByRole('table', { name: 'Triggers' }).locator('tbody.trigger')).toHaveCount(2)
  await expectAccessible(page, 'workflows hub')

  // A webhook trigger opened (its signed example), and the form to add one.
  await page.getByRole('table', { name: 'Triggers' }).getByRole('button', { name: `hook-${tag}` }).click()
  await expect(page.locator('.trigger-curl')).toBeVisible()
  await page.getByRole('button', { name: 'Add trigger' }).click()
  await page.getByRole('form', { name: 'Add trigger' }).getByLabel('Kind').selectOption('cron')
  await expectAccessible(page, "the hub's triggers: one opened, and the form")

  await page.getByRole('list', { name: 'Workflow definitions' }).getByRole('button', { name: `a11y-${tag}` }).click()
  await expect(page.locator('.wf-detail .react-flow__node')).toHaveCount(3)
  await expectAccessible(page, 'a workflow and its flowchart (light)')
  await page.getByRole('button', { name: 'Dark theme' }).click()
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'dark')
  await expectAccessible(page, 'a workflow and its flowchart (dark)')
  await page.getByRole('button', { name: 'Light theme' }).click()

  await page.getByRole('button', { name: 'Edit' }).click()
  await expect(page.locator('.wf-editor .react-flow__node')).toHaveCount(3)
  await expectAccessible(page, 'the workflow editor')

  // The conversation: the start's chip, the step waiting for approval, the slash popup.
  await page.goto(`/s/${sid}`)
  await expect(page.locator('.wf-start-chip')).toBeVisible()
  await page.getByRole('textbox', { name: 'Message' }).fill('/')
  await expect(page.getByRole('listbox', { name: 'Commands' })).toBeVisible()
  await expectAccessible(page, 'the composer offering commands')
})
