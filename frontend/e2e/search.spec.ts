// Message search: the sidebar's box finds a word of an early message of a
// long conversation (beyond the newest 200 the transcript loads first),
// opens it scrolled into view and marked — on a reload too — and another
// member's search finds none of it.
import { expectAccessible } from './axe'
import { expect, test } from './fixtures'

test.use({ bypassCSP: true, reducedMotion: 'reduce' })

test('search: a hit in an early message opens it in view and marked; a member finds none of it', async ({ page, browser, user, agentFor, newUser, stack, tag }) => {
  test.setTimeout(120_000)
  const agent = await agentFor('Lead', 'lead')
  const session = await user.api('POST', '/sessions', { agent_config_id: agent.id, name: `Long talk ${tag}` })
  const word = `zephyr${tag}`
  // 57 runs write 228 entries (the lead script calls a tool that does not
  // exist, reads the error and answers: question, call, result, answer), so
  // the first message is not among the newest 200 the transcript loads.
  // Runs are the honest way in (the entries are what the runner writes),
  // each waited for and paced at 5 a second: the parallel worker shares the
  // API's write budget.
  const inputs = [`Remember the ${word} kite, unknown as it is`, ...Array.from({ length: 56 }, (_, i) => `an unknown filler, number ${i + 1}`)]
  for (const input of inputs) {
    const paced = new Promise((r) => setTimeout(r, 200))
    const run = await user.api('POST', `/sessions/${session.id}/runs`, { input }, user.token, { Prefer: 'wait=60' })
    expect(run.status, `the run of ${input}`).toBe('completed')
    await paced
  }
  const newest = await user.api('GET', `/sessions/${session.id}/messages?limit=200`)
  expect(JSON.stringify(newest), 'the first message is past the first page').not.toContain(word)

  await page.goto('/')
  await page.getByRole('searchbox', { name: 'Search conversations' }).fill(`${word.slice(0, -1)}`)
  const results = page.getByRole('region', { name: 'Messages' })
  const hit = results.getByRole('button').filter({ hasText: `Long talk ${tag}` })
  await expect(hit).toHaveCount(1)
  await expect(hit.locator('mark')).toHaveText(word)
  await expect(hit).toContainText(`Remember the ${word} kite, unknown as it is`)
  await expectAccessible(page, 'the sidebar search with message hits')

  await hit.click()
  await expect(page).toHaveURL(new RegExp(`/s/${session.id}\\?m=`))
  const target = page.locator('.timeline .item.item-target')
  await expect(target).toContainText(`Remember the ${word} kite, unknown as it is`)
  await expect(target).toBeInViewport()
  await expect(page.locator('.timeline .item.item-target')).toHaveCount(1)
  // The address holds the place: a reload lands on the message again.
  await page.reload()
  await expect(page.locator('.timeline .item.item-target')).toContainText(`Remember the ${word} kite, unknown as it is`)
  await expect(page.locator('.timeline .item.item-target')).toBeInViewport()

  // Another member searching the same word finds nothing of this user's.
  const member = await newUser('member', 'searcher')
  const other = await browser.newContext({ storageState: { cookies: [], origins: [{ origin: stack.baseURL, localStorage: [{ name: 'agents.token', value: member.token }] }] } })
  const theirs = await other.newPage()
  await theirs.goto(stack.baseURL + '/')
  await theirs.getByRole('searchbox', { name: 'Search conversations' }).fill(word)
  await expect(theirs.getByRole('region', { name: 'Messages' }).getByText('No message matches.')).toBeVisible()
  await other.close()
})
