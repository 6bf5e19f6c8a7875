// The inspector's trace panel: a long question keeps the column's width,
// and a model call a stop cancelled reads as cancelled, not as an error.
import { assistantTexts, conversationFor, expect, idle, inspector, newConversation, test } from './fixtures'

test('inspector: a long question does not widen the trace panel', async ({ page, user, agentFor }) => {
  const agent = await agentFor('Echo', 'echo')
  const question = `${'x'.repeat(400)} ${'long words with spaces '.repeat(18)}`
  const sid = await conversationFor(user, agent.id, question)
  await page.goto(`/s/${sid}`)
  const panel = await inspector(page)
  await panel.getByRole('tab', { name: 'Context' }).click()
  await expect(panel.locator('.ctx-big')).toBeVisible()
  const before = (await panel.boundingBox())!.width
  await panel.getByRole('tab', { name: 'Trace' }).click()
  await expect(panel.locator('.trace-q', { hasText: 'xxxx' })).toBeVisible()
  const body = panel.locator('.inspector-body')
  const size = await body.evaluate((el) => ({ scroll: el.scrollWidth, client: el.clientWidth }))
  expect(size.scroll, `the trace panel scrolls sideways: ${JSON.stringify(size)}`).toBeLessThanOrEqual(size.client + 1)
  const traces = await panel.locator('.traces').evaluate((el) => ({ scroll: el.scrollWidth, client: el.clientWidth }))
  expect(traces.scroll, `the traces overflow: ${JSON.stringify(traces)}`).toBeLessThanOrEqual(traces.client + 1)
  expect((await panel.boundingBox())!.width, 'the panel width').toBe(before)
  // The question is cut short on screen but whole on hover.
  await expect(panel.locator('.trace-q').first()).toHaveAttribute('title', question)
})

test('inspector: a stopped model call is cancelled, not an error', async ({ page, agentFor }) => {
  const agent = await agentFor('Slow', 'slow')
  await newConversation(page, agent.name, 'count, then be stopped')
  await expect.poll(async () => (await assistantTexts(page)).join(''), { message: 'some streamed text', intervals: [50] }).toContain('two')
  await page.getByRole('button', { name: 'Stop' }).click()
  await idle(page)
  const panel = await inspector(page)
  await panel.getByRole('tab', { name: 'Trace' }).click()
  const span = panel.locator('.span-row', { hasText: 'generation' }).first()
  await expect(span).toHaveAttribute('data-outcome', 'cancelled')
  await expect(span).toContainText('cancelled')
  await expect(span).not.toHaveClass(/has-error/)
  const colors = await span.locator('.span-label').evaluate((el) => ({
    label: getComputedStyle(el).color,
    error: (() => {
      const probe = document.createElement('span')
      probe.style.color = 'var(--error)'
      el.appendChild(probe)
      const c = getComputedStyle(probe).color
      probe.remove()
      return c
    })(),
  }))
  expect(colors.label, 'the cancelled span is painted as an error').not.toBe(colors.error)
  await span.click()
  await expect(panel.locator('.span-detail .cancelled-text')).toContainText('Cancelled')
  await expect(panel.locator('.span-detail .error-text')).toHaveCount(0)
})
