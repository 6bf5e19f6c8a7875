// Usage, cost and budgets (issue 43): an admin's call shows in Usage with
// its price, the calls download as CSV; a member over a budget of theirs
// has the run refused with the budget named and a way to Your usage. The
// "metered" script reports fixed usage (title: 100 in, 10 out; answer: 1000
// in, 500 out), priced here at $2 in and $8 out per million tokens: one
// conversation is 2 calls, 1,100 in, 510 out, $0.00628.
import { readFile } from 'node:fs/promises'
import type { Page } from '@playwright/test'
import { expectAccessible } from './axe'
import { expect, idle, newConversation, test, type User } from './fixtures'
import { expectFits } from './fits'

test.use({ bypassCSP: true, reducedMotion: 'reduce' })

const MODEL = 'metered'

/** Prices the metered model for the provider type the test's scripted provider has. */
async function priceMetered(user: User, providerId: string) {
  const provider = await user.api('GET', `/providers/${providerId}`)
  await user.api('PUT', '/prices', {
    provider_type: provider.type, model: MODEL, input_per_mtok: 2, cached_input_per_mtok: 0, output_per_mtok: 8,
    source: 'https://example.com/pricing', as_of: '2026-01-01',
  })
}

/** Sends one more message in the open conversation and waits for its run to end. */
async function send(page: Page, text: string) {
  await page.getByRole('textbox', { name: 'Message' }).fill(text)
  await page.keyboard.press('Enter')
  await expect(page.locator('.msg-user .bubble', { hasText: text })).toBeVisible()
  await idle(page)
}

test('usage: an admin sees a call priced in Usage and downloads the calls', async ({ page, user, agentFor }) => {
  const agent = await agentFor('Meter', MODEL)
  await priceMetered(user, agent.provider_id)
  await newConversation(page, agent.name, 'Count this')
  await expect(page.locator('.msg-assistant .markdown', { hasText: 'A metered answer.' })).toBeVisible()
  await idle(page)

  // Your usage is the admin's own calls alone: the exact figures.
  await page.getByRole('button', { name: 'Usage' }).click()
  await expect(page).toHaveURL(/\/usage$/)
  await page.getByRole('link', { name: 'Your usage' }).click()
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('Your usage')
  const totals = page.getByRole('group', { name: 'Totals' })
  await expect(totals).toContainText('Cost$0.0063')
  await expect(totals).toContainText('Tokens in1.1k')
  await expect(totals).toContainText('Tokens out510')
  await expect(totals).toContainText('Calls2')
  await expect(page.getByRole('img', { name: /^Spend by agent: Meter \S+ \$0\.0063\.$/ })).toBeVisible()
  await expect(page.getByRole('heading', { name: 'By person' })).toHaveCount(0)
  await expect(page.getByRole('table', { name: 'Top conversations' }).getByRole('link', { name: 'Metered chat' })).toBeVisible()
  await expectAccessible(page, 'your usage')

  // Everyone's usage: the call is among the totals and in the rankings (other tests add theirs).
  await page.getByRole('link', { name: 'Everyone' }).click()
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('Usage')
  await expect(page.getByRole('group', { name: 'Totals' })).not.toContainText(/^Cost\$0\.00Tokens/)
  const byAgent = page.locator('[data-chart="By agent"]')
  await expect(byAgent.locator('.usage-chart-box')).toHaveAttribute('role', 'img')
  await expect(byAgent.locator('.usage-chart-box')).toHaveAttribute('aria-label', /Spend by agent: /)
  await byAgent.getByText('Show as table').click()
  await expect(byAgent.getByRole('row', { name: new RegExp(agent.name) })).toContainText('$0.0063')
  const byModel = page.locator('[data-chart="By model"]')
  await byModel.getByText('Show as table').click()
  await expect(byModel.getByRole('row', { name: new RegExp(`^${MODEL}\\b`) })).toBeVisible()
  // Other tests' people may rank above this one: the table lists every person.
  const byPerson = page.locator('[data-chart="By person"]')
  await expect(byPerson.locator('.usage-chart-box')).toHaveAttribute('aria-label', /^Spend by person: /)
  await byPerson.getByText('Show as table').click()
  await expect(byPerson.getByRole('row', { name: new RegExp(`^${user.username}\\b`) })).toContainText('$0.0063')
  await expect(page.locator('[data-chart="Spend over time"] svg').first()).toBeVisible()
  await expectAccessible(page, 'usage')

  // The CSV: the calls of the range, this one among them.
  const download = page.waitForEvent('download')
  await page.getByRole('button', { name: 'Download CSV' }).click()
  const d = await download
  expect(d.suggestedFilename()).toMatch(/\.csv$/)
  const csv = await readFile((await d.path())!, 'utf8')
  expect(csv.split('\n').length, 'a header and the calls').toBeGreaterThan(2)
  expect(csv).toContain(MODEL)

  // A range picked: the last 7 days still hold today's call.
  await page.getByRole('button', { name: 'Last 7 days' }).click()
  await expect(page.getByRole('button', { name: 'Last 7 days' })).toHaveAttribute('aria-pressed', 'true')
  await expect(byAgent.getByRole('row', { name: new RegExp(agent.name) })).toContainText('$0.0063')

  // On a phone the charts shrink to the screen and the tables become cards.
  await page.setViewportSize({ width: 360, height: 740 })
  await expect(page.locator('[data-chart="Spend over time"] svg').first()).toBeVisible()
  await expectFits(page, 'usage on a phone')
  await page.goto('/usage/me')
  await expect(page.getByRole('group', { name: 'Totals' })).toContainText('Cost$0.0063')
  await expectFits(page, 'your usage on a phone')
})

test('usage: a member over their budget is refused with the budget named, and sees it in Your usage', async ({ page, stack, user, newUser, tag }) => {
  const member = await newUser('member', 'spender')
  // The member's own provider and agent on the scripted model.
  const p = await member.api('POST', '/providers', { name: `scripted-${tag}`, base_url: stack.scriptedURL, api_key: 'any-key' })
  const agent = await member.api('POST', '/agents', { name: `Spender ${tag}`, model: MODEL, provider_id: p.id })
  await priceMetered(user, p.id)

  // The admin sets the member a daily budget of 2,000 tokens in the Budgets tab.
  await page.goto('/settings/budgets')
  await expect(page.getByRole('tabpanel', { name: 'Budgets' })).toBeVisible()
  const form = page.getByRole('form', { name: 'New budget' })
  await form.getByLabel('Applies to').selectOption('person')
  await form.getByLabel('Person').selectOption({ label: member.username })
  await form.getByLabel('Period').selectOption('day')
  await form.getByLabel('Unit').selectOption('tokens')
  await form.getByLabel('Limit (tokens)').fill('2000')
  await form.getByRole('button', { name: 'Add budget' }).click()
  await expect(form.getByRole('status')).toContainText(`for ${member.username}`)
  const row = page.getByRole('progressbar', { name: `Daily · Person · ${member.username}` })
  await expect(row).toHaveAttribute('aria-valuenow', '0')
  await expectAccessible(page, 'settings: budgets')

  // The tab row still fits 1280 px with Budgets in it.
  await page.setViewportSize({ width: 1280, height: 800 })
  const tabs = page.getByRole('tablist', { name: 'Settings sections' })
  expect(await tabs.evaluate((el) => [el.scrollWidth - el.clientWidth, el.scrollHeight - el.clientHeight]), 'the tab row overflows').toEqual([0, 0])

  // The member chats until a run is refused: 1,610 tokens the first time, 1,500 each after.
  await page.goto(`/#token=${member.token}`)
  await expect(page.getByRole('navigation', { name: 'Conversations' })).toBeVisible()
  await newConversation(page, agent.name, 'Spend one')
  await idle(page)
  const refused = page.locator('.note', { hasText: 'A budget is used up' })
  for (let i = 2; i <= 4 && !(await refused.count()); i++) await send(page, `Spend ${i}`)
  await expect(refused).toBeVisible()
  // The run before it, past 80%, warned.
  await expect(page.locator('.note-warn', { hasText: 'A budget is nearly used up' }).first()).toContainText(/is 8\d% used/)
  await expect(refused.locator('.code-badge')).toHaveText('budget_exceeded')
  await expect(refused.locator('.note-text')).toContainText(/is used up \(.* of .*\); it resets/)
  await refused.getByRole('link', { name: 'Your usage' }).click()

  await expect(page).toHaveURL(/\/usage\/me$/)
  const bar = page.getByRole('progressbar', { name: /^Daily · Person · / })
  await expect(bar).toHaveAttribute('aria-valuenow', '100')
  await expect(page.locator('.budget', { has: bar }).getByText('exceeded')).toBeVisible()
  await expect(page.getByRole('group', { name: 'Totals' })).toContainText(/Tokens in\d/)
  await expectAccessible(page, 'your usage: a budget exceeded')
  // A member has no way to everyone's usage.
  await expect(page.getByRole('navigation', { name: 'Usage views' })).toHaveCount(0)
})
