// MCP: a server added in the UI connects to the real reference server
// (server-everything over streamable HTTP), an agent gets its echo tool in
// the agent form, and a chat's tool card shows what the tool answered —
// an image too, drawn under the page's real content policy.
import { assistantTexts, expect, idle, newConversation, test } from './fixtures'

test('mcp: a server added in the UI connects, an agent picks its echo tool, and the chat shows the result', async ({ page, user, agentFor, everything }) => {
  // The scripted model (mcp-echo) calls everything__echo, then answers
  // (asked for an image, everything__get-tiny-image).
  const agent = await agentFor('Echoer', 'mcp-echo')
  await page.goto('/')
  await page.getByRole('button', { name: 'Settings' }).click()
  await page.getByRole('tab', { name: 'MCP servers' }).click()
  await page.getByRole('button', { name: 'Add MCP server' }).click()
  const form = page.getByRole('form', { name: 'New MCP server' })
  await form.getByLabel('Name').fill(everything.name)
  await form.getByLabel('Endpoint', { exact: true }).fill(everything.url)
  await form.getByRole('button', { name: 'Save' }).click()
  await expect(form).toBeHidden()

  // It connects in the background; the list follows it live.
  const row = page.getByRole('listitem', { name: everything.name })
  await expect(row.getByRole('status', { name: 'Status' })).toHaveText('connected', { timeout: 30_000 })
  await expect(row).toContainText(/\d+ tools/)
  await row.getByRole('button', { name: 'Tools' }).click()
  await expect(row.getByRole('list', { name: `Tools of ${everything.name}` }).getByText('everything__echo', { exact: true })).toBeVisible()

  // The agent form offers the server's tools; pick echo (and the image).
  await page.getByRole('tab', { name: 'Agents' }).click()
  await page.locator('.row', { hasText: agent.name }).getByRole('button', { name: 'Edit' }).click()
  const tools = page.getByRole('group', { name: `Tools of ${everything.name}` })
  await tools.getByRole('checkbox', { name: 'everything__echo', exact: true }).check()
  await tools.getByRole('checkbox', { name: 'everything__get-tiny-image', exact: true }).check()
  await page.getByRole('button', { name: 'Save' }).first().click()
  await expect(page.locator('.form-top').getByText('Saved')).toBeVisible()
  const saved = await user.api('GET', `/agents/${agent.id}`)
  expect(saved.tools, 'the agent selects the tools by their prefixed names').toEqual(['everything__echo', 'everything__get-tiny-image'])

  // A chat: the model calls the tool and the card shows its answer.
  await newConversation(page, agent.name, 'Echo something')
  const card = page.locator('.tool-card[data-tool="everything__echo"]')
  await expect(card.locator('.tool-title')).toHaveText('everything · echo')
  await expect(card.getByRole('group', { name: 'Result of everything · echo' })).toHaveText('Echo: hi from the browser')
  await expect(card.locator('.pill', { hasText: 'Done' })).toBeVisible()
  await expect(card).toHaveAttribute('data-mcp-server', everything.name)
  await idle(page)
  expect((await assistantTexts(page)).join('\n')).toContain('The MCP server echoed it back.')

  // An image part is drawn from its data, which the page's CSP lets load.
  await page.getByLabel('Message', { exact: true }).fill('Show the tiny image')
  await page.keyboard.press('Enter')
  const image = page.locator('.tool-card[data-tool="everything__get-tiny-image"]').getByRole('img', { name: 'Image from everything · get-tiny-image' })
  await expect(image).toBeVisible()
  await expect.poll(() => image.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth), { message: 'the image decoded' }).toBe(20)
  await idle(page)
  await expect(page.locator('.msg-assistant .markdown', { hasText: 'That is the MCP logo.' })).toBeVisible()
})
