// Settings: the UI path of making a provider and an agent (other tests make
// theirs over the API).
import { expect, expectConsole, test } from './fixtures'

test('settings: a provider and an agent made in the UI', { annotation: expectConsole(/status of 400/) }, async ({ page, stack, user, tag }) => {
  const providerName = `scripted ${tag}`
  const agentName = `Planner ${tag}`
  await page.goto('/')
  await page.getByRole('button', { name: 'Settings' }).click()
  await page.getByRole('button', { name: 'Add provider' }).click()
  const form = page.getByRole('form', { name: 'New provider' })
  await form.getByLabel('Name').fill(providerName)
  await form.getByLabel('Base URL').fill(stack.scriptedURL)
  await form.getByLabel('API key').fill('any-key')
  await form.getByRole('button', { name: 'Save' }).click()
  await expect(page.locator('.row', { hasText: providerName })).toBeVisible()
  const providers = await user.api('GET', '/providers')
  const provider = providers.find((p: { name: string }) => p.name === providerName)
  expect(provider, 'the provider was saved').toBeTruthy()
  expect(provider.api_key, 'the key is masked').toBe('********')

  await page.getByRole('tab', { name: 'Agents' }).click()
  await page.getByRole('button', { name: 'New agent' }).click()
  await page.getByLabel('Name', { exact: true }).fill(agentName)
  await page.getByLabel('Model', { exact: true }).fill('todo')
  await page.getByLabel('Provider').selectOption({ label: providerName })
  await page.getByRole('radio', { name: 'owl' }).click()
  // A validation error comes back on its field (in a folded section: open it first).
  const behavior = page.locator('[data-group="behavior"]')
  await behavior.locator('summary').click()
  await behavior.getByLabel('Max turns').fill('-3')
  await page.getByRole('button', { name: 'Save' }).first().click()
  await expect(behavior.locator('.has-error').first()).toBeVisible()
  await behavior.getByLabel('Max turns').fill('0')
  await page.getByRole('button', { name: 'Save' }).first().click()
  await expect(page.locator('.row', { hasText: agentName })).toBeVisible()
  const agents = await user.api('GET', '/agents')
  const planner = agents.find((a: { name: string }) => a.name === agentName)
  expect(planner, `agent saved as ${JSON.stringify(planner)}`).toMatchObject({ avatar: '/avatars/owl.svg', model: 'todo' })
})

test('settings: the sections are one row of tabs at 1280 px, walked with the arrow keys', async ({ page }) => {
  await page.setViewportSize({ width: 1280, height: 800 })
  await page.goto('/settings/providers')
  const list = page.getByRole('tablist', { name: 'Settings sections' })
  const tabs = list.getByRole('tab')
  const count = await tabs.count()
  expect(count, 'every section').toBeGreaterThanOrEqual(10)
  // One row: no label wraps, nothing scrolls, nothing is cut off.
  const heights = new Set(await tabs.evaluateAll((els) => els.map((e) => Math.round(e.getBoundingClientRect().height))))
  expect(heights.size, 'a tab whose label wrapped').toBe(1)
  expect(await list.evaluate((el) => [el.scrollWidth - el.clientWidth, el.scrollHeight - el.clientHeight]), 'the tab row overflows').toEqual([0, 0])
  // The selected tab alone is in the Tab order, and names its panel.
  expect(await tabs.evaluateAll((els) => els.filter((e) => e.tabIndex === 0).map((e) => e.textContent))).toEqual(['Providers'])
  await expect(page.getByRole('tabpanel', { name: 'Providers' })).toBeVisible()
  await tabs.first().focus()
  await page.keyboard.press('ArrowRight')
  await expect(page).toHaveURL(/\/settings\/agents$/)
  await expect(list.getByRole('tab', { name: 'Agents' })).toBeFocused()
  await expect(list.getByRole('tab', { name: 'Agents' })).toHaveAttribute('aria-selected', 'true')
  await page.keyboard.press('End')
  await expect(tabs.last()).toBeFocused()
  await page.keyboard.press('Home')
  await expect(page).toHaveURL(/\/settings\/providers$/)
  await page.keyboard.press('ArrowLeft')
  await expect(tabs.last()).toHaveAttribute('aria-selected', 'true')
})

test('settings: an agent\'s form lists what the agent gets, by origin, with no box to type tool names', async ({ page, agentFor }) => {
  const agent = await agentFor('Planner', 'todo')
  await page.goto('/settings/agents')
  await page.locator('.row', { hasText: agent.name }).getByRole('button', { name: 'Edit' }).click()
  const form = page.getByRole('form', { name: `Edit ${agent.name}` })
  await expect(form.getByLabel('Built-in tools')).toHaveCount(0)
  const gets = form.getByRole('region', { name: 'What the agent gets' })
  await expect(gets.locator('dt')).toHaveText(['With every agent', 'Background tasks'])
  await expect(gets.locator('dd', { hasText: 'todo_write' })).toBeVisible()
  await expect(gets.locator('dd', { hasText: 'spawn_task' })).toBeVisible()
})
