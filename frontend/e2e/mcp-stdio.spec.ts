// A stdio MCP server in a real browser: the admin adds the reference server
// (server-everything) as a local program — `node <its entry> stdio`, which
// the workbench starts on its host and speaks MCP to over stdin/stdout —
// sees it connect and list its tools, an agent picks its echo tool, and a
// chat shows what the tool answered. The form and the panel pass the axe
// checks in both themes and fit a phone.
import { expectAccessible } from './axe'
import { assistantTexts, expect, idle, newConversation, test } from './fixtures'
import { expectFits } from './fits'
import { EVERYTHING_ENTRY } from './stack.mjs'

// axe is injected into the page: the test's script, not the app's.
test.use({ bypassCSP: true, reducedMotion: 'reduce' })

const phone = { width: 360, height: 740 }

test('mcp stdio: a local program added in the UI connects, an agent picks its echo tool, and the chat shows the result', async ({ page, user, agentFor, everything }) => {
  // The scripted model (mcp-echo) calls everything__echo, then answers.
  const agent = await agentFor('Echoer', 'mcp-echo')
  const desk = page.viewportSize() ?? { width: 1280, height: 820 }
  await page.goto('/settings/mcp')
  await page.getByRole('button', { name: 'Add MCP server' }).click()
  const form = page.getByRole('form', { name: 'New MCP server' })
  await form.getByLabel('Name').fill(everything.name)
  await form.getByRole('radio', { name: 'Local program (stdio)' }).check()
  await expect(form.getByLabel('Endpoint', { exact: true })).toBeHidden()
  await expect(form.getByRole('group', { name: 'Headers' })).toBeHidden()
  await form.getByLabel('Command').fill('node')
  await form.getByLabel('Arguments').fill(`${EVERYTHING_ENTRY}\nstdio`)
  // An admin may run it on this server's host, the default.
  await expect(form.getByLabel('Run in')).toHaveValue('')
  await expect(form.getByLabel('Run in').getByRole('option', { name: 'This server’s host' })).toBeEnabled()
  await expectAccessible(page, 'the MCP server form for a local program')
  await page.setViewportSize(phone)
  await expectFits(page, 'the MCP server form for a local program on a phone')
  await page.setViewportSize(desk)
  await form.getByRole('button', { name: 'Save' }).click()
  await expect(form).toBeHidden()

  // The program is started in the background; the list follows it live.
  const row = page.getByRole('listitem', { name: everything.name })
  await expect(row.getByRole('status', { name: 'Status' })).toHaveText('connected', { timeout: 30_000 })
  await expect(row.locator('[data-command-line]')).toHaveAttribute('title', `node ${EVERYTHING_ENTRY} stdio`)
  await expect(row.locator('[data-command-line]')).toContainText(/^node ….*dist\/index\.js stdio$/)
  await expect(row).toContainText(/\d+ tools/)
  await row.getByRole('button', { name: 'Tools' }).click()
  await expect(row.getByRole('list', { name: `Tools of ${everything.name}` }).getByText('everything__echo', { exact: true })).toBeVisible()
  const servers: { name: string; config: Record<string, unknown> }[] = await user.api('GET', '/mcp-servers')
  expect(servers.find((s) => s.name === everything.name)?.config, 'stored as sent: each line one argument').toMatchObject({
    transport: 'stdio', command: 'node', args: [EVERYTHING_ENTRY, 'stdio'], project_id: '', endpoint: '',
  })
  await expectAccessible(page, 'the MCP panel with a connected local program')
  await page.setViewportSize(phone)
  await expectFits(page, 'the MCP panel with a local program on a phone')
  await page.setViewportSize(desk)

  // Editing shows the program as stored.
  await row.getByRole('button', { name: 'Edit' }).click()
  const edit = page.getByRole('form', { name: `Edit ${everything.name}` })
  await expect(edit.getByRole('radio', { name: 'Local program (stdio)' })).toBeChecked()
  await expect(edit.getByLabel('Arguments')).toHaveValue(`${EVERYTHING_ENTRY}\nstdio`)
  await edit.getByRole('button', { name: 'Cancel' }).click()

  // The agent form offers the server's tools; pick echo.
  await page.getByRole('tab', { name: 'Agents' }).click()
  await page.locator('.row', { hasText: agent.name }).getByRole('button', { name: 'Edit' }).click()
  const tools = page.getByRole('group', { name: `Tools of ${everything.name}` })
  await tools.getByRole('checkbox', { name: 'everything__echo', exact: true }).check()
  await page.getByRole('button', { name: 'Save' }).first().click()
  await expect(page.locator('.form-top').getByText('Saved')).toBeVisible()

  // A chat: the model calls the tool over the program's stdio and the card shows its answer.
  await newConversation(page, agent.name, 'Echo something')
  const card = page.locator('.tool-card[data-tool="everything__echo"]')
  await expect(card.getByRole('group', { name: 'Result of everything · echo' })).toHaveText('Echo: hi from the browser')
  await expect(card.locator('.pill', { hasText: 'Done' })).toBeVisible()
  await idle(page)
  expect((await assistantTexts(page)).join('\n')).toContain('The MCP server echoed it back.')
})
