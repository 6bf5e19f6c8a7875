// Compaction in the browser: "Compact now" in the inspector's Context tab
// folds the older history of a conversation made over the API; the timeline
// marks the fold and keeps the folded messages, dimmed, and the context
// report's conversation figure drops.
import type { Locator } from '@playwright/test'
import { conversationFor, expect, inspector, test } from './fixtures'

const figure = async (panel: Locator, term: string) =>
  Number((await panel.locator('.ctx-facts div', { has: panel.page().locator('dt', { hasText: new RegExp(`^${term}`) }) }).locator('dd').innerText()).replace(/\D/g, ''))

test('compaction: Compact now folds the earlier exchanges into a marked summary', async ({ page, user, agentFor }) => {
  // Only Compact now folds (the threshold is out of reach); two entries stay intact.
  const agent = await agentFor('Folder', 'compacting', { compaction: { compaction_enabled: true, compaction_threshold_tokens: 10_000_000, compaction_window: 2 } })
  const sid = await conversationFor(user, agent.id, 'Tell me about apples')
  for (const input of ['And pears?', 'And plums?']) {
    const run = await user.api('POST', `/sessions/${sid}/runs`, { input }, user.token, { Prefer: 'wait=60' })
    expect(run.status, `the run of ${input}`).toBe('completed')
  }
  await page.goto(`/s/${sid}`)
  await expect(page.locator('.msg-assistant', { hasText: 'Plums are stone fruit.' })).toBeVisible()
  const panel = await inspector(page)
  await panel.getByRole('tab', { name: 'Context' }).click()
  await expect(panel.locator('.ctx-big')).toBeVisible()
  const before = await figure(panel, 'Conversation')
  expect(before).toBeGreaterThan(0)

  await panel.getByRole('button', { name: 'Compact now' }).click()
  const marker = page.locator('.timeline details.compaction')
  await expect(marker.locator('summary')).toContainText('Conversation compacted')
  await expect(marker.locator('summary')).toContainText('→')
  await marker.locator('summary').click()
  await expect(marker.getByText('SUMMARY: the person asked about apples and pears.')).toBeVisible()
  // The earliest exchange is still there to read, drawn as folded.
  const first = page.locator('.item', { hasText: 'Tell me about apples' })
  await expect(first).toBeVisible()
  await expect(first).toHaveClass(/item-folded/)
  await expect(first).toHaveAttribute('title', /model no longer sees it/)
  await expect(page.locator('.item', { hasText: 'Plums are stone fruit.' })).not.toHaveClass(/item-folded/)
  await expect.poll(() => figure(panel, 'Conversation'), { message: 'the conversation figure to drop' }).toBeLessThan(before)
  // The fold reset the last call's count: the headline estimates, not "0 tokens".
  await expect(panel.locator('.ctx-headline')).toContainText('tokens now, estimated: the next call measures it')
  await expect(panel.locator('.ctx-big')).not.toHaveText('0')

  // A second pass has nothing left to fold, and a reload draws the same marker.
  await panel.getByRole('button', { name: 'Compact now' }).click()
  await expect(panel.getByText('Nothing to fold yet.')).toBeVisible()
  await page.reload()
  await expect(page.locator('.timeline details.compaction summary')).toContainText('→')
  await expect(page.locator('.item', { hasText: 'Tell me about apples' })).toHaveClass(/item-folded/)
})

test('compaction: with the agent\'s compaction off, Compact now is disabled and says where to turn it on', async ({ page, user, agentFor }) => {
  const agent = await agentFor('Plain', 'todo')
  const sid = await conversationFor(user, agent.id, 'Plan the release')
  await page.goto(`/s/${sid}`)
  const panel = await inspector(page)
  await panel.getByRole('tab', { name: 'Context' }).click()
  await expect(panel.getByRole('button', { name: 'Compact now' })).toBeDisabled()
  await expect(panel.getByText(`Compaction is off for ${agent.name}`)).toBeVisible()
  await panel.getByRole('link', { name: 'its settings' }).click()
  await expect(page).toHaveURL(/\/settings\/agents$/)
})
