// Forms: the agent form's model field offers what the provider lists (and
// still takes any name), a provider's connection is tested from its row or
// right after a save, and the server's refusals land next to the fields
// they are about, while JSON that does not parse stops the save before any
// request.
import { readFileSync } from 'node:fs'
import type { Page } from '@playwright/test'
import { expect, expectConsole, test } from './fixtures'

const scriptedModels = Object.keys(JSON.parse(readFileSync(new URL('./scripts.json', import.meta.url), 'utf8')))

/** The suggestions the agent form's model field offers (its datalist's options). */
async function offeredModels(page: Page) {
  const list = await page.getByLabel('Model', { exact: true }).getAttribute('list')
  expect(list, 'the model field has a list of suggestions').toBeTruthy()
  return page.locator(`datalist[id="${list}"] option`).evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value))
}

async function newAgentForm(page: Page) {
  await page.goto('/settings/agents')
  await page.getByRole('button', { name: 'New agent' }).click()
  return page.getByRole('form', { name: 'New agent' })
}

test('forms: a provider saved in the UI is tested at once, the agent form offers its models, and a typed model is saved', async ({ page, stack, user, tag }) => {
  const providerName = `scripted ${tag}`
  await page.goto('/settings/providers')
  await page.getByRole('button', { name: 'Add provider' }).click()
  const form = page.getByRole('form', { name: 'New provider' })
  await form.getByLabel('Name').fill(providerName)
  await form.getByLabel('Base URL').fill(stack.scriptedURL)
  await form.getByLabel('API key').fill('any-key')
  await expect(form.getByLabel('Test the connection after saving')).toBeChecked()
  await form.getByRole('button', { name: 'Save' }).click()

  // Tested as soon as it exists: connected, with the latency and how many models the vendor listed.
  const row = page.locator('.row', { hasText: providerName })
  const result = row.getByRole('status')
  await expect(result).toHaveText(/^Connected · \d+ ms · \d+ models$/)
  const provider = (await user.api('GET', '/providers')).find((p: { name: string }) => p.name === providerName)
  const listed: { id: string }[] = (await user.api('GET', `/providers/${provider.id}/models`)).models
  expect(await result.textContent(), 'the count is the vendor\'s').toContain(`· ${listed.length} models`)

  // The agent form offers them: the scripted model's own and every scripted name.
  const agentForm = await newAgentForm(page)
  await agentForm.getByLabel('Name', { exact: true }).fill(`Typed ${tag}`)
  await agentForm.getByLabel('Provider').selectOption({ label: providerName })
  await expect(agentForm.getByLabel('Model', { exact: true })).toHaveAccessibleDescription(`${listed.length} models offered by the provider; pick one or type any name.`)
  const offered = await offeredModels(page)
  expect(offered).toEqual(listed.map((m) => m.id))
  expect(offered).toContain('echo')
  for (const name of scriptedModels) expect(offered, `the scripted model ${name} is offered`).toContain(name)

  // Free text is still a model name.
  await agentForm.getByLabel('Model', { exact: true }).fill('a-model-nobody-lists')
  await agentForm.getByRole('button', { name: 'Save' }).first().click()
  await expect(page.locator('.row', { hasText: `Typed ${tag}` })).toBeVisible()
  await page.reload()
  await page.locator('.row', { hasText: `Typed ${tag}` }).getByRole('button', { name: 'Edit' }).click()
  await expect(page.getByLabel('Model', { exact: true }), 'the typed model, after a reload').toHaveValue('a-model-nobody-lists')
})

test('forms: Test connection of the scripted provider says connected, with a latency and a model count', async ({ page, agentFor, user, tag }) => {
  await agentFor('Any', 'echo') // makes the scripted provider, scripted-<tag>
  await page.goto('/settings/providers')
  const row = page.locator('.row', { hasText: `scripted-${tag}` })
  await expect(row.getByRole('status')).toHaveText('')
  await row.getByRole('button', { name: 'Test connection' }).click()
  await expect(row.getByRole('status')).toHaveText(/^Connected · \d+ ms · \d+ models$/)
  const provider = (await user.api('GET', '/providers')).find((p: { name: string }) => p.name === `scripted-${tag}`)
  const listed = (await user.api('GET', `/providers/${provider.id}/models`)).models
  await expect(row.getByRole('status')).toContainText(`· ${listed.length} models`)
})

test('forms: an unreachable provider: Test connection and the model field say why, and a typed model still saves', { annotation: expectConsole(/status of 503/) }, async ({ page, user, tag }) => {
  const providerName = `closed port ${tag}`
  await user.api('POST', '/providers', { name: providerName, base_url: 'http://127.0.0.1:9/v1', api_key: 'any-key' })
  await page.goto('/settings/providers')
  const row = page.locator('.row', { hasText: providerName })
  await row.getByRole('button', { name: 'Test connection' }).click()
  await expect(row.getByRole('status')).toHaveText(/^Not connected \(unavailable\): .*connection refused/)

  const form = await newAgentForm(page)
  await form.getByLabel('Name', { exact: true }).fill(`Unreachable ${tag}`)
  await form.getByLabel('Provider').selectOption({ label: providerName })
  const model = form.getByLabel('Model', { exact: true })
  await expect(model).toHaveAccessibleDescription(/^Could not list the provider's models: .+ \(unavailable\)\. You can still type a model name\.$/)
  expect(await offeredModels(page)).toEqual([])
  await model.fill('gpt-typed')
  await form.getByRole('button', { name: 'Save' }).first().click()
  await expect(page.locator('.row', { hasText: `Unreachable ${tag}` })).toBeVisible()
  const saved = (await user.api('GET', '/agents')).find((a: { name: string }) => a.name === `Unreachable ${tag}`)
  expect(saved.model).toBe('gpt-typed')
})

test('forms: refused fields show next to their fields, a conflict at the top, and bad JSON before any request',
  { annotation: expectConsole(/status of 409/, /status of 400/) }, async ({ page, agentFor, tag }) => {
    const taken = await agentFor('Taken', 'echo')
    const writes: string[] = []
    page.on('request', (r) => {
      if (r.method() !== 'GET' && r.url().includes('/api/v1/agents')) writes.push(`${r.method()} ${r.url()}`)
    })
    const form = await newAgentForm(page)
    const name = form.getByLabel('Name', { exact: true })
    const top = form.getByRole('alert', { name: 'Why the agent was not saved' })
    const save = form.getByRole('button', { name: 'Save' }).first()

    // A duplicate name: the server's 409, at the top of the form.
    await name.fill(taken.name)
    await form.getByLabel('Provider').selectOption({ label: `scripted-${tag}` })
    await form.getByLabel('Model', { exact: true }).fill('echo')
    await save.click()
    await expect(top).toContainText(`already exists`)
    await expect(top).toContainText('(conflict)')
    expect(writes).toHaveLength(1)

    // JSON that does not parse is pointed at as it is typed, and stops the save before any request.
    const section = form.locator('details[data-group="guardrails"]')
    await section.locator('summary').click()
    const schema = form.getByLabel('Output schema')
    await schema.fill('{"type": "object",')
    await expect(schema).toHaveAccessibleDescription(/^Not valid JSON: Line 1, column 19: /)
    await save.click()
    await expect(top).toHaveText('Not saved: Output schema is not valid JSON yet.')
    expect(writes, 'nothing was sent').toHaveLength(1)

    // What the server refuses lands next to each field; the folded section holding one opens.
    await schema.fill('{"type": "string"}')
    await expect(schema).not.toHaveAttribute('data-parse-error')
    await section.locator('summary').click()
    await expect(section).not.toHaveAttribute('open')
    await name.fill('   ')
    await form.getByLabel('Ask before running').fill('*, exec_command')
    await save.click()
    await expect(top).toContainText('Not saved: 3 fields need attention')
    expect(writes).toHaveLength(2)
    await expect(section).toHaveAttribute('open')
    await expect(section.locator('summary')).toContainText('1 problem')
    await expect(schema).toHaveAccessibleDescription(/must describe an object/)
    await expect(form.locator('.field[data-field="Output schema"]')).toHaveClass(/has-error/)
    await expect(name).toHaveAccessibleDescription('is required')
    await expect(form.getByLabel('Ask before running')).toHaveAccessibleDescription(/already covers every tool/)
  })
