// Admin → Audit log: who did what, filtered, paged back and exported,
// never a secret's value.
import { readFile } from 'node:fs/promises'
import { expectAccessible } from './axe'
import { expect, test } from './fixtures'

test.use({ bypassCSP: true, reducedMotion: 'reduce' })

test('audit: an admin reads who changed what, filters it and exports it', async ({ page, user, tag }) => {
  const name = `audited ${tag}`
  const secret = `sk-audit-secret-${tag}`
  const p = await user.api('POST', '/providers', { name, base_url: 'http://127.0.0.1:9/v1', api_key: secret })
  await user.api('PUT', `/providers/${p.id}`, { name, base_url: 'http://127.0.0.1:9/v1', api_key: `${secret}-2` })

  await page.goto('/settings/audit')
  await expect(page.getByRole('tabpanel', { name: 'Audit' })).toBeVisible()
  const log = page.getByRole('table', { name: 'Audit log' })
  const created = log.locator('tr[data-action="provider.create"]', { hasText: name })
  await expect(created).toBeVisible()
  await expect(created).toContainText(user.username)
  await expect(created).toContainText('api_key')
  const updated = log.locator('tr[data-action="provider.update"]', { hasText: name })
  await expect(updated.getByRole('cell').nth(4)).toHaveText('api_key')
  await expect(page.locator('.settings-body')).not.toContainText(secret)
  await expectAccessible(page, 'settings: the audit log')

  // Filters: the object kind and the person narrow the log.
  await page.getByLabel('Object').selectOption('provider')
  await expect(log.locator('tr[data-action]').first()).toBeVisible()
  const kinds = await log.locator('tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-action') ?? ''))
  expect(kinds.length, 'provider records').toBeGreaterThanOrEqual(2)
  expect(kinds.every((a) => a.startsWith('provider.')), `only provider records: ${kinds.join(', ')}`).toBe(true)
  await page.getByLabel('Action').fill('provider.update')
  await expect(log.locator('tbody tr[data-action="provider.create"]')).toHaveCount(0)
  await expect(updated).toBeVisible()

  // The export is the filtered records as JSON Lines.
  const download = page.waitForEvent('download')
  await page.getByRole('button', { name: 'Export JSON Lines' }).click()
  const d = await download
  expect(d.suggestedFilename()).toBe('audit.jsonl')
  const lines = (await readFile((await d.path())!, 'utf8')).trim().split('\n').map((l) => JSON.parse(l))
  expect(lines.some((r) => r.action === 'provider.update' && r.object_name === name)).toBe(true)
  expect(lines.every((r) => r.action === 'provider.update')).toBe(true)
  expect(JSON.stringify(lines)).not.toContain(secret)

  await page.getByRole('button', { name: 'Clear filters' }).click()
  await expect(created).toBeVisible()
})

test('audit: a member has no audit tab and the API refuses them', async ({ page, newUser }) => {
  const member = await newUser('member', 'auditless')
  await page.goto(`/settings/providers#token=${member.token}`)
  await expect(page.getByRole('tab', { name: 'Providers' })).toBeVisible()
  await expect(page.getByRole('tab', { name: 'Audit' })).toHaveCount(0)
  await expect(member.api('GET', '/audit')).rejects.toThrow(/403|admin/)
})
