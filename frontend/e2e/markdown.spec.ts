// Code and math in an answer, as a person sees them: a fenced block labelled
// with its language, KaTeX formulas (inline and display) drawn in their own
// fonts under the app's CSP, prices left as words, a GitHub table that
// scrolls in its own box on a phone, a task list of disabled checkboxes; and
// axe finds nothing wrong with any of it in either theme.
import type { Page } from '@playwright/test'
import { expectAccessible } from './axe'
import { conversationFor, expect, idle, newConversation, test } from './fixtures'

const PRICES = 'a ticket costs $5 and $10 at the door.'

/** Checks the sampler script's answer as drawn on page. */
async function expectSampler(page: Page) {
  const answer = page.locator('.msg-assistant .markdown', { hasText: 'Here is a sampler.' })
  await expect(answer).toBeVisible()

  // The fence's language in the block's header, beside Copy code; the code still highlighted.
  const block = answer.locator('.code-block')
  await expect(block.locator('.code-head')).toContainText('python')
  await expect(block.locator('.code-head').getByRole('button', { name: 'Copy code' })).toBeAttached()
  await expect(block.locator('pre code .hljs-keyword').first()).toHaveText('def')

  // Inline math in its sentence, display math on its own line; the prices stay words.
  const sentence = answer.locator('p', { hasText: PRICES })
  await expect(sentence.locator('.katex')).toHaveCount(1)
  await expect(sentence.locator('.katex annotation')).toHaveText('A = \\pi r^2')
  await expect(sentence).toContainText(PRICES)
  const display = answer.locator('.katex-display')
  await expect(display).toBeVisible()
  await expect(display.locator('annotation')).toHaveText('\\int_0^1 x^2\\,dx = \\frac{1}{3}')
  expect(await answer.locator('.katex').count(), 'two formulas, no more').toBe(2)

  // The table, with its header row.
  const table = answer.getByRole('table')
  await expect(table.getByRole('columnheader')).toHaveText(['Fruit', 'Colour', 'Price per kilo', 'Season', 'Orchard', 'Keeping'])
  await expect(table.getByRole('row')).toHaveCount(3)

  // The task list: the boxes say what is done, and cannot be ticked.
  const done = answer.getByRole('checkbox', { name: 'Sketch the layout' })
  const todo = answer.getByRole('checkbox', { name: 'Ship it' })
  await expect(done).toBeChecked()
  await expect(todo).not.toBeChecked()
  await expect(done).toBeDisabled()
  await expect(todo).toBeDisabled()
}

test.describe('under the app\'s own CSP', () => {
  test('a streamed answer: labelled code, KaTeX in its fonts, prices as text, a table and a task list', async ({ page, agentFor }) => {
    // Any refusal the CSP makes (a font, a style, a script) is recorded as it happens.
    await page.addInitScript(() => {
      const w = window as unknown as { cspViolations: string[] }
      w.cspViolations = []
      document.addEventListener('securitypolicyviolation', (e) => w.cspViolations.push(`${e.violatedDirective} ${e.blockedURI}`))
    })
    const agent = await agentFor('Sampler', 'sampler')
    await newConversation(page, agent.name, 'show me what you can draw')
    await idle(page)
    await expectSampler(page)

    // KaTeX's fonts came from the app's origin and are in use.
    const fonts = await page.evaluate(async () => {
      await document.fonts.ready
      return [...document.fonts].filter((f) => f.family.replace(/"/g, '').startsWith('KaTeX_') && f.status === 'loaded').map((f) => f.family)
    })
    expect(fonts.length, `KaTeX fonts loaded: ${fonts.join(', ')}`).toBeGreaterThan(0)
    expect(await page.evaluate(() => (window as unknown as { cspViolations: string[] }).cspViolations)).toEqual([])

    // On a phone the wide table scrolls inside its own box; the page does not.
    await page.setViewportSize({ width: 380, height: 800 })
    const wrap = page.locator('.msg-assistant .table-wrap')
    await expect.poll(() => wrap.evaluate((el) => el.scrollWidth > el.clientWidth), { message: 'the table scrolls in its box' }).toBe(true)
    const pageBox = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth }))
    expect(pageBox.scroll, `the page overflows sideways: ${JSON.stringify(pageBox)}`).toBeLessThanOrEqual(pageBox.client)
    const timeline = await page.locator('.timeline').evaluate((el) => ({ scroll: el.scrollWidth, client: el.clientWidth }))
    expect(timeline.scroll, `the timeline overflows sideways: ${JSON.stringify(timeline)}`).toBeLessThanOrEqual(timeline.client)
  })
})

test.describe('with axe', () => {
  // axe's injected script needs the CSP lifted (see axe.ts); reduced motion
  // measures colours as they settle.
  test.use({ bypassCSP: true, reducedMotion: 'reduce' })

  test('a11y: code, math, a table and a task list, light and dark', async ({ page, user, agentFor }) => {
    const agent = await agentFor('Sampler', 'sampler')
    const sid = await conversationFor(user, agent.id, 'show me what you can draw')
    await page.goto(`/s/${sid}`)
    await expectSampler(page)
    // Both themes in one call; and again with Copy code shown (hover), its colours measured too.
    await expectAccessible(page, 'code, math, table and task list')
    await page.locator('.msg-assistant .code-block').hover()
    await expect.poll(() => page.locator('.code-head .copy-code').evaluate((el) => getComputedStyle(el).opacity)).toBe('1')
    await expectAccessible(page, 'a code block with Copy code shown')
  })
})
