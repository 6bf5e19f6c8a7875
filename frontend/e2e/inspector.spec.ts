// The inspector of a conversation made over the API.
import { conversationFor, expect, inspector, test } from './fixtures'

test('inspector: open a trace span and the context panel', async ({ page, user, agentFor }) => {
  const agent = await agentFor('Planner', 'todo')
  const sid = await conversationFor(user, agent.id, 'Plan the release')
  await page.goto(`/s/${sid}`)
  const panel = await inspector(page)
  await expect(panel.locator('.trace-q', { hasText: 'Plan the release' })).toBeVisible()
  await panel.locator('.span-row', { hasText: 'generation' }).first().click()
  const detail = panel.locator('.span-detail')
  await expect(detail.locator('.json-label', { hasText: 'Output' })).toBeVisible()
  await expect(detail.getByText('Plan the release').first()).toBeVisible()
  await panel.getByRole('tab', { name: 'Context' }).click()
  await expect(panel.locator('.ctx-big')).toBeVisible()
  await expect(panel.getByText('Tools by origin')).toBeVisible()
})
