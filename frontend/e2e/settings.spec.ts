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
