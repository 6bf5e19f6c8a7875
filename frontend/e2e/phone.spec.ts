// Phones: every screen and the main dialogs at 360 px wide, a touch screen.
// expectFits (fits.ts) measures each state as drawn: nothing scrolls
// sideways that is not meant to, no control is off the screen or cut off by
// its pane, no two controls overlap, no control covers text, and names show.
// One page per group, on one user's data, to keep it quick.
import type { Page } from '@playwright/test'
import { conversationFor, expect, idle, inspector, test } from './fixtures'
import { expectFits, fitOffenders } from './fits'

test.use({ viewport: { width: 360, height: 740 }, isMobile: true, hasTouch: true })

/** A URL long enough, and without a space, to run past a phone's width. */
const longURL = (host: string) => `http://${host}:9/mcp/a-very-long-path/that-does-not-break/at-any-space/v1`

async function openDrawer(page: Page) {
  await page.getByRole('button', { name: 'Open the sidebar' }).click()
  // Measured once it has slid in.
  await expect.poll(async () => (await page.locator('.sidebar').boundingBox())?.x).toBe(0)
}

test('phone: the new conversation, a conversation with tasks and an approval, the inspector, the drawer and the shortcuts', async ({ page, user, agentFor }) => {
  const agent = await agentFor('Phone', 'phone', { approval: { approve_tools: ['todo_write'] } })
  await page.goto('/')
  await expect(page.getByRole('textbox', { name: 'Message' })).toBeVisible()
  await expectFits(page, 'the new conversation')

  // An answer with a long link and a table, a spawn_task card, its task finished in the strip and the wake-up's note.
  const sid = await conversationFor(user, agent.id, 'Please start the survey')
  await expect.poll(async () => (await user.api('GET', `/sessions/${sid}/tasks`)).map((t: { status: string }) => t.status), { timeout: 30_000 }).toEqual(['completed'])
  await page.goto(`/s/${sid}`)
  await expect(page.locator('.msg-assistant .markdown', { hasText: 'Noted: the survey is back.' })).toBeVisible()
  await idle(page)
  // Then a gated call, waiting on its approval.
  await page.getByRole('textbox', { name: 'Message' }).fill('Plan the release')
  await page.keyboard.press('Enter')
  await expect(page.getByRole('button', { name: 'Approve once' })).toBeVisible()
  const strip = page.getByRole('region', { name: 'Background tasks' })
  await expect(strip.locator('.task-row')).toHaveCount(1)
  await expect(strip.locator('.task-summary')).toContainText('The survey')
  const card = page.locator('.tool-card[data-tool="spawn_task"]')
  await card.locator('.tool-head').click()
  await expect(card.locator('.tool-body')).toBeVisible()
  await expectFits(page, 'a conversation: an answer, a task card opened, the tasks strip and an approval')

  // The inspector, each of its tabs (the task's too).
  await strip.getByRole('button', { name: 'Summarise the customer survey', exact: true }).click()
  const panel = await inspector(page)
  await expect(panel.getByRole('tab', { name: 'Task' })).toHaveAttribute('aria-selected', 'true')
  await expect(panel.getByRole('region', { name: 'Result' })).toContainText('The survey')
  await expectFits(page, 'the inspector: Task')
  await panel.getByRole('tab', { name: 'Trace' }).click()
  await panel.locator('.span-row', { hasText: 'generation' }).first().click()
  await expect(panel.locator('.span-detail').first()).toBeVisible()
  await expectFits(page, 'the inspector: Trace, a span opened')
  await panel.getByRole('tab', { name: 'Context' }).click()
  await expect(panel.locator('.ctx-big')).toBeVisible()
  await expectFits(page, 'the inspector: Context')
  await panel.getByRole('button', { name: 'Close the inspector' }).click()
  await expect(panel).toHaveCount(0)

  // The conversation's Export menu.
  await page.getByRole('button', { name: 'Export the conversation' }).click()
  await expect(page.getByRole('group', { name: 'Export the active branch' })).toBeVisible()
  await expectFits(page, "the conversation's Export menu")
  await page.keyboard.press('Escape')

  // The header's agent and model picker.
  await page.locator('.conv-head').getByRole('button', { name: /Agent and model/ }).click()
  await expect(page.getByRole('group', { name: 'Agent and model for the next answer' })).toBeVisible()
  await expectFits(page, 'the agent and model picker')
  await page.keyboard.press('Escape')

  // The sidebar's drawer, and the shortcuts dialog from it.
  await openDrawer(page)
  await expectFits(page, 'the sidebar drawer')
  // Its search, finding words in the messages too.
  await page.getByRole('searchbox', { name: 'Search conversations' }).fill('survey')
  await expect(page.getByRole('region', { name: 'Messages' }).locator('mark').first()).toBeVisible()
  await expectFits(page, 'the sidebar drawer searching messages')
  await page.getByRole('searchbox', { name: 'Search conversations' }).fill('')
  await page.getByRole('button', { name: 'Keyboard shortcuts' }).click()
  await expect(page.getByRole('dialog', { name: 'Keyboard shortcuts' })).toBeVisible()
  await expectFits(page, 'the keyboard shortcuts dialog')
})

test('phone: every settings tab with a row in it, and the forms', async ({ page, user, stack, agentFor, tag }) => {
  const agent = await agentFor('Phone', 'phone')
  // An MCP server whose long endpoint nothing answers; with the reference server installed, a connected one with its Tools too.
  await user.api('POST', '/mcp-servers', { name: `unreachable-${tag}`, config: { endpoint: longURL('127.0.0.1') } })
  const connected = stack.everythingURL ? `tools-${tag}` : ''
  if (connected) await user.api('POST', '/mcp-servers', { name: connected, config: { endpoint: stack.everythingURL } })
  await user.api('POST', '/skills', { content: '---\nname: release-on-a-phone\ndescription: How we cut a release, from the first tag to the published notes\n---\n# Release\n' })
  await user.api('POST', '/memories', { key: `answer-style-${tag}`, content: 'The person prefers short answers with a link to the source at the end.' })
  const sandbox = await user.api('POST', '/sandboxes', { name: `phone-sandbox-${tag}`, type: 'e2b', config: { template_id: 'base' } })
  await user.api('POST', '/projects', { name: `phone-project-${tag}`, sandbox_id: sandbox.id })
  await user.api('POST', '/auth/tokens', { name: `phone-token-${tag}` })

  await page.goto('/settings/providers')
  await expect(page.locator('.row').first()).toBeVisible()
  await expectFits(page, 'settings: providers')
  await page.getByRole('button', { name: 'Add provider' }).click()
  await expect(page.getByRole('button', { name: 'Save' }).first()).toBeVisible()
  await expectFits(page, 'settings: the new provider form')

  await page.getByRole('tab', { name: 'Agents' }).click()
  await expect(page.locator('.row', { hasText: agent.name })).toBeVisible()
  await expectFits(page, 'settings: agents')
  await page.locator('.row', { hasText: agent.name }).getByRole('button', { name: 'Edit' }).click()
  await expect(page.getByLabel('Name', { exact: true })).toHaveValue(agent.name)
  await expectFits(page, "settings: an agent's form")
  for (const section of await page.locator('.agent-form details > summary').all()) await section.click()
  await expectFits(page, "settings: an agent's form with every section open")

  await page.getByRole('tab', { name: 'MCP servers' }).click()
  await expect(page.locator(`[data-mcp-server="unreachable-${tag}"]`)).toBeVisible()
  if (connected) {
    const row = page.getByRole('listitem', { name: connected })
    await expect(row.getByRole('status', { name: 'Status' })).toHaveText('connected', { timeout: 30_000 })
    await row.getByRole('button', { name: 'Tools' }).click()
    await expect(row.getByRole('list', { name: `Tools of ${connected}` })).toBeVisible()
  }
  await expectFits(page, 'settings: MCP servers')
  await page.getByRole('button', { name: 'Add MCP server' }).click()
  await expect(page.getByRole('form', { name: 'New MCP server' })).toBeVisible()
  await expectFits(page, 'settings: the new MCP server form')

  // The other tabs, as each first draws, then its form for a new one where it has one.
  const forms: Record<string, string> = { Skills: 'New skill', Memories: 'Add memory', Projects: 'New project', Sandboxes: 'Add sandbox', Guardrails: 'Add guardrail' }
  for (const tab of ['Skills', 'Memories', 'Projects', 'Sandboxes', 'Guardrails', 'Global settings', 'Access tokens', 'Users', 'Budgets', 'Audit']) {
    await page.getByRole('tab', { name: tab }).click()
    await expect(page.getByRole('tab', { name: tab })).toHaveAttribute('aria-selected', 'true')
    await expect(page.locator('.settings-body')).not.toContainText('Loading')
    await expectFits(page, `settings: ${tab}`)
    if (forms[tab]) {
      await page.getByRole('button', { name: forms[tab] }).click()
      await expect(page.getByRole('button', { name: 'Save' }).first()).toBeVisible()
      await expectFits(page, `settings: ${tab}, the form for a new one`)
    }
  }
})

test('phone: the workflows hub, a workflow with its executions, Run…, the editor, the triggers and their form', async ({ page, user, agentFor, tag }) => {
  const agent = await agentFor('Builder', 'wf-deploy')
  const sid = await conversationFor(user, agent.id, 'Hello')
  const name = `phone-release-with-a-long-name-${tag}`
  const wf = await user.api('POST', '/workflows', {
    name, description: 'Builds the change, then checks it until it passes',
    steps: [
      { name: 'build', agent: agent.id, prompt: 'Build it', compact_before: true },
      { name: 'check', agent: agent.id, prompt: 'Check it', gate: true, on_failure: 'build' },
    ],
  })
  const run = await user.api('POST', `/workflows/${wf.id}/runs`, { session_id: sid, input: 'go' })
  await expect.poll(async () => (await user.api('GET', `/tasks/${run.task_id}`)).status, { timeout: 60_000 }).not.toMatch(/working|pending/)
  await user.api('POST', '/triggers', { name: `hook-${tag}`, kind: 'webhook', target: 'agent', agent_config_id: agent.id, session_id: sid, brief: 'Look at what arrived' })
  await user.api('POST', '/triggers', { name: `nightly-${tag}`, kind: 'cron', schedule: '@daily', target: 'workflow', workflow_id: wf.id, session_id: sid, brief: 'Nightly', enabled: false })

  await page.goto('/workflows')
  await expect(page.locator('.wf-run-row')).toHaveCount(1)
  const triggers = page.getByRole('table', { name: 'Triggers' })
  await expect(triggers.locator('tbody.trigger')).toHaveCount(2)
  await expectFits(page, 'workflows: the hub')
  await triggers.getByRole('button', { name: `hook-${tag}` }).click()
  await expect(page.locator('.trigger-curl')).toBeVisible()
  await expectFits(page, 'workflows: a webhook trigger opened')
  await page.getByRole('button', { name: 'Add trigger' }).click()
  await page.getByRole('form', { name: 'Add trigger' }).getByLabel('Kind').selectOption('cron')
  await expectFits(page, 'workflows: the trigger form')

  await page.goto(`/workflows/${wf.id}`)
  await expect(page.locator('.wf-detail .react-flow__node')).toHaveCount(3)
  await expectFits(page, 'workflows: a workflow with its executions and triggers')
  await page.getByRole('button', { name: 'Run…' }).click()
  await expect(page.getByRole('form', { name: `Run ${name}` })).toBeVisible()
  await expectFits(page, 'workflows: the Run… form')
  await page.getByRole('button', { name: 'Edit' }).click()
  await expect(page.locator('.wf-editor .react-flow__node')).toHaveCount(3)
  await expectFits(page, 'workflows: the editor')
})

test('phone: the fit check finds each fault it looks for, and lets code scroll', async ({ page }) => {
  await page.setContent(`<!doctype html><meta name="viewport" content="width=device-width">
    <body style="margin:0;font:15px sans-serif">
      <div id="wide" style="width:420px;height:4px"></div>
      <div class="pane" style="overflow-x:auto;width:200px"><div style="width:600px">wide content</div></div>
      <pre style="overflow-x:auto;width:200px">a line of code far longer than the two hundred pixels of its pane, kept as written</pre>
      <button id="edge" style="position:absolute;left:330px;top:40px;width:60px">Edge</button>
      <button style="position:absolute;left:10px;top:120px;width:80px">First</button>
      <button style="position:absolute;left:40px;top:125px;width:80px">Second</button>
      <div style="position:relative;height:30px;margin-top:120px"><span>the endpoint text</span>
        <button style="position:absolute;left:0;top:0;width:120px">Tools</button></div>
      <div class="squeezed" style="width:12px;overflow-wrap:anywhere">abcdefghijkl</div>
      <div class="task-row"><button class="task-open" style="width:20px;overflow:hidden;white-space:nowrap;text-overflow:ellipsis">Write the report</button></div>
      <div id="scroller" style="height:100px;overflow-y:auto"><div style="position:sticky;top:-20px;background:#fff"><button id="stuck">Save</button></div>
        <div style="height:400px"></div></div>
    </body>`)
  await page.locator('#scroller').evaluate((e) => { e.scrollTop = 200 })
  const found = (await fitOffenders(page)).join('\n')
  for (const fault of [
    'the page scrolls sideways', 'div.pane "wide content" scrolls sideways', 'button#edge "Edge" is off the screen',
    'button "First" overlaps button "Second"', 'button "Tools" covers the text of span "the endpoint text"',
    'the text of div.squeezed "abcdefghijkl" is squeezed', 'button#stuck "Save" sticks part hidden', 'button.task-open "Write the report" shows 16 px of its name',
  ]) expect(found, `the check to report: ${fault}`).toContain(fault)
  expect(found, 'a pre scrolls sideways as it may').not.toContain('pre')
})
