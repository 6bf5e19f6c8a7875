// The inspector of a conversation made over the API.
import { conversationFor, expect, idle, inspector, newConversation, test } from './fixtures'

test('inspector: open a trace span and the context panel', async ({ page, user, agentFor }) => {
  const agent = await agentFor('Planner', 'todo')
  const sid = await conversationFor(user, agent.id, 'Plan the release')
  await page.goto(`/s/${sid}`)
  const panel = await inspector(page)
  await expect(panel.locator('.trace-q', { hasText: 'Plan the release' })).toBeVisible()
  // Each run shows what its calls used (the model is unpriced: tokens, no cost).
  await expect(panel.getByRole('group', { name: "This run's usage" })).toContainText(/no price for \d+ calls?/)
  await panel.locator('.span-row', { hasText: 'generation' }).first().click()
  const detail = panel.locator('.span-detail')
  await expect(detail.locator('.json-label', { hasText: 'Output' })).toBeVisible()
  await expect(detail.getByText('Plan the release').first()).toBeVisible()
  await panel.getByRole('tab', { name: 'Context' }).click()
  await expect(panel.locator('.ctx-big')).toBeVisible()
  await expect(panel.getByRole('group', { name: 'Cost of this conversation' })).toContainText(/\d+ calls?/)
  await expect(panel.getByText('Tools by origin')).toBeVisible()
})

test('inspector: a run waiting on an approval is labelled with its question in Traces', async ({ page, agentFor }) => {
  const agent = await agentFor('Careful', 'todo', { approval: { approve_tools: ['todo_write'] } })
  await newConversation(page, agent.name, 'Plan carefully')
  const cards = page.locator('.tool-card[data-tool="todo_write"]')
  await cards.first().getByRole('button', { name: 'Approve once' }).click()
  await idle(page)
  // Traces open (the runs list read) before the next run starts.
  const panel = await inspector(page)
  await expect(panel.locator('.trace-q', { hasText: 'Plan carefully' })).toBeVisible()
  await page.getByRole('textbox', { name: 'Message' }).fill('Plan it once more')
  await page.keyboard.press('Enter')
  await expect(cards.nth(1).getByRole('button', { name: 'Approve once' })).toBeVisible()
  await expect(panel.locator('.trace-q', { hasText: 'Plan it once more' })).toBeVisible()
  await expect(panel.locator('.trace-q', { hasText: /^Run [0-9a-f]{6}$/ }), 'a run labelled by its bare id').toHaveCount(0)
})
