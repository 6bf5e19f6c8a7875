// The conversation list, over conversations made through the API.
import { conversationFor, expect, test } from './fixtures'

test('sidebar: rename, pin, search and delete', async ({ page, user, agentFor }) => {
  const planner = await agentFor('Planner', 'todo')
  const echo = await agentFor('Echo', 'echo')
  const chat = await conversationFor(user, planner.id, 'Plan the release')
  // A newer one: it lists above the first until the first is pinned.
  // Renamed last, so it is the most recently updated whatever the first
  // run still wrote after it answered.
  const newer = await conversationFor(user, echo.id, 'count slowly')
  await user.api('PATCH', `/sessions/${newer}`, { name: 'count slowly' })
  await expect.poll(async () => (await user.api('GET', '/sessions'))[0]?.id, 'the renamed one to list first').toBe(newer)
  await page.goto(`/s/${chat}`)
  const rows = page.locator('.session-row')
  await expect(rows).toHaveCount(2)
  await expect(rows.first()).not.toHaveAttribute('data-session-id', chat)
  const row = page.locator(`.session-row[data-session-id="${chat}"]`)
  await row.hover()
  await row.getByRole('button', { name: /^Rename/ }).click()
  await row.getByLabel('Conversation name').fill('Release plan')
  await row.getByLabel('Conversation name').press('Enter')
  await expect(row.getByText('Release plan')).toBeVisible()
  await row.hover()
  await row.getByRole('button', { name: /^Pin/ }).click()
  await expect(row.locator('.pin-mark')).toBeVisible()
  await expect(rows.first(), 'the pinned row first').toHaveAttribute('data-session-id', chat)
  await page.getByLabel('Search conversations').fill('release')
  await expect(rows, 'one match').toHaveCount(1)
  await page.getByLabel('Search conversations').fill('')
  const victim = page.locator('.session-row', { hasText: 'count slowly' }).or(rows.last()).first()
  const id = await victim.getAttribute('data-session-id')
  await victim.hover()
  await victim.getByRole('button', { name: /^Delete/ }).click()
  await victim.getByRole('button', { name: 'Delete?' }).click()
  await expect(page.locator(`.session-row[data-session-id="${id}"]`), 'the row to go').toHaveCount(0)
})
