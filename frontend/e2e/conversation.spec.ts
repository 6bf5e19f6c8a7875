// Chatting: streaming, tool cards, approvals, plan mode, branches, reloads
// and cancelling, each in a conversation started from the composer with an
// agent of the test's own.
import type { Page } from '@playwright/test'
import { assistantTexts, expect, idle, inspector, newConversation, test } from './fixtures'

/** A conversation with the slow agent, stopped once some of its answer streamed; answers its Cancelled note. */
async function stopMidAnswer(page: Page, agentName: string, text: string) {
  await newConversation(page, agentName, text)
  await expect.poll(async () => (await assistantTexts(page)).join(''), { message: 'some streamed text', intervals: [50] }).toContain('two')
  await page.getByRole('button', { name: 'Stop' }).click()
  const cancelled = page.locator('.note', { hasText: 'Cancelled' })
  await expect(cancelled).toBeVisible()
  await idle(page)
  return cancelled
}

test('chat: streamed answer, reasoning, checklist tool card, highlighted code', async ({ page, agentFor }) => {
  const agent = await agentFor('Planner', 'todo')
  await newConversation(page, agent.name, 'Plan the release')
  await expect(page.locator('.msg-user .bubble', { hasText: 'Plan the release' })).toBeVisible()
  // Mid-stream: some text, still growing.
  await expect.poll(async () => (await assistantTexts(page)).join('').length, { message: 'streamed text', intervals: [50] }).toBeGreaterThan(0)
  const card = page.locator('.tool-card[data-tool="todo_write"]')
  await expect(card).toBeVisible()
  await expect(card.locator('.todo', { hasText: 'Stream the answer' })).toBeVisible()
  await expect(card.getByText('1/3 done')).toBeVisible()
  await expect(page.locator('.msg-assistant .markdown', { hasText: 'Here is the plan' })).toBeVisible()
  await expect(page.locator('.markdown pre code .hljs-keyword').first()).toBeVisible()
  await expect(page.locator('.reasoning summary', { hasText: 'Thought' })).toBeVisible()
  // Expanding the card shows its arguments and result.
  await card.locator('.tool-head').click()
  await expect(card.getByText('Checklist saved')).toBeVisible()
  await idle(page)
  // The session got its title from the run.
  await expect(page.locator('.conv-title'), 'a title').not.toHaveText('New conversation')
})

test('approval: a gated call waits, both tabs see it, approving resumes the run', async ({ page, context, user, agentFor }) => {
  const agent = await agentFor('Careful', 'todo', { approval: { approve_tools: ['todo_write'] } })
  const sid = await newConversation(page, agent.name, 'Plan carefully')
  const card = page.locator('.tool-card[data-tool="todo_write"]')
  await expect(card.getByRole('button', { name: 'Approve once' })).toBeVisible()
  await expect(page.locator('.conv-head').getByText('Waiting for approval')).toBeVisible()
  const other = await context.newPage()
  await other.goto(`/s/${sid}`)
  const otherCard = other.locator('.tool-card[data-tool="todo_write"]')
  await expect(otherCard.getByRole('button', { name: 'Approve once' })).toBeVisible()
  await card.getByRole('button', { name: 'Approve once' }).click()
  await expect(page.locator('.msg-assistant .markdown', { hasText: 'Here is the plan' })).toBeVisible()
  await expect(card.getByText('1/3 done')).toBeVisible()
  // The other tab followed the same run live.
  await expect(other.locator('.msg-assistant .markdown', { hasText: 'Here is the plan' })).toBeVisible()
  await expect(otherCard.getByRole('button', { name: 'Approve once' }), 'the approval to leave the other tab').toHaveCount(0)
  expect(await user.api('GET', `/sessions/${sid}/approvals`), 'still pending').toEqual([])
})

test('approval: a call id an earlier run used too gets the decision on its own run\'s card only', async ({ page, agentFor }) => {
  // The scripted model numbers every answer's calls alike, as providers that count from call_1 do.
  const agent = await agentFor('Careful', 'todo', { approval: { approve_tools: ['todo_write'] } })
  await newConversation(page, agent.name, 'Plan carefully')
  const cards = page.locator('.tool-card[data-tool="todo_write"]')
  await cards.first().getByRole('button', { name: 'Approve once' }).click()
  await expect(page.locator('.msg-assistant .markdown', { hasText: 'Here is the plan' })).toBeVisible()
  await idle(page)
  await page.getByRole('textbox', { name: 'Message' }).fill('Plan it once more')
  await page.keyboard.press('Enter')
  await expect(cards).toHaveCount(2)
  const ids = await cards.evaluateAll((els) => els.map((e) => e.getAttribute('data-call-id')))
  expect(ids[0], 'a call id').toBeTruthy()
  expect(ids[1], 'the same call id, twice').toBe(ids[0])
  await expect(cards.nth(1).getByRole('button', { name: 'Approve once' })).toBeVisible()
  await expect(cards.first().getByRole('button', { name: 'Approve once' }), 'the first run\'s finished call').toHaveCount(0)
  await cards.nth(1).getByRole('button', { name: 'Approve once' }).click()
  await idle(page)
  await expect(page.getByRole('button', { name: 'Approve once' })).toHaveCount(0)
})

test('approval: rejecting with a reason tells the agent', async ({ page, agentFor }) => {
  const agent = await agentFor('Careful', 'todo', { approval: { approve_tools: ['todo_write'] } })
  await newConversation(page, agent.name, 'Plan it again')
  const card = page.locator('.tool-card[data-tool="todo_write"]')
  await card.getByRole('button', { name: 'Reject…' }).click()
  await card.getByLabel('Reason for rejecting').fill('not now')
  await card.getByRole('button', { name: 'Reject', exact: true }).click()
  await idle(page)
  await expect(card.locator('.pill', { hasText: /Error|Done/ })).toBeVisible()
})

test('plan mode: the plan is shown for approval, approving it ends planning and the work starts', async ({ page, agentFor }) => {
  const agent = await agentFor('Architect', 'architect')
  await page.goto('/')
  await page.getByLabel('Agent').selectOption({ label: agent.name })
  await page.getByLabel('Plan', { exact: true }).check()
  await page.getByLabel('Message').fill('Plan the release')
  await page.keyboard.press('Enter')
  await page.waitForURL(/\/s\//)
  await expect(page.locator('.conv-head').getByText('Planning')).toBeVisible()
  const card = page.locator('.tool-card[data-tool="submit_plan"]')
  // The plan is read as Markdown before it is approved.
  await expect(card.locator('.plan-view h2', { hasText: 'Release plan' })).toBeVisible()
  await expect(card.locator('.plan-view strong', { hasText: 'Tag' })).toBeVisible()
  await card.getByRole('button', { name: 'Approve plan' }).click()
  await expect(page.locator('.msg-assistant .markdown', { hasText: 'tagging the release now' })).toBeVisible()
  await idle(page)
  await expect(page.locator('.conv-head').getByText('Planning'), 'the Planning badge to go').toHaveCount(0)
  await expect(card.locator('.pill', { hasText: 'Done' })).toBeVisible()
  // A reload shows the approved plan from the stored card.
  await page.reload()
  await expect(page.locator('.tool-card[data-tool="submit_plan"] .plan-view h2', { hasText: 'Release plan' })).toBeVisible()
})

test('regenerate, switch branches, fork', async ({ page, agentFor }) => {
  const agent = await agentFor('Echo', 'echo')
  await newConversation(page, agent.name, 'hello branches')
  const answer = page.locator('.msg-assistant', { hasText: 'You said: hello branches' })
  await expect(answer).toBeVisible()
  await idle(page)
  await answer.hover()
  await answer.getByRole('button', { name: 'Regenerate the answer' }).click()
  await expect(page.locator('.branch-count', { hasText: '2 / 2' })).toBeVisible()
  await idle(page)
  await page.getByRole('button', { name: 'Previous version' }).click()
  await expect(page.locator('.branch-count', { hasText: '1 / 2' })).toBeVisible()
  await page.getByRole('button', { name: 'Next version' }).click()
  await expect(page.locator('.branch-count', { hasText: '2 / 2' })).toBeVisible()
  expect(await assistantTexts(page), 'one answer on the active branch').toHaveLength(1)
  // Fork from the question: a new conversation holding it.
  const before = page.url()
  const question = page.locator('.msg-user', { hasText: 'hello branches' })
  await question.hover()
  await question.getByRole('button', { name: 'Fork from this message' }).click()
  await expect(page, 'the fork to open').not.toHaveURL(before)
  await expect(page.locator('.msg-user .bubble', { hasText: 'hello branches' })).toBeVisible()
  expect(await assistantTexts(page), 'the fork copied past the question').toEqual([])
})

test('stop, then edit: the stopped run\'s ending stays on its own branch', async ({ page, agentFor }) => {
  const agent = await agentFor('Slow', 'slow')
  const cancelled = await stopMidAnswer(page, agent.name, 'count again')
  const question = page.locator('.msg-user', { hasText: 'count again' })
  await question.hover()
  await question.getByRole('button', { name: 'Edit message' }).click()
  await page.getByRole('textbox', { name: 'Edited message' }).fill('count once more')
  await page.getByRole('button', { name: 'Save & send' }).click()
  await expect(page.locator('.msg-user .bubble', { hasText: 'count once more' })).toBeVisible()
  await idle(page, 60_000)
  await expect(page.locator('.msg-assistant', { hasText: 'END' })).toBeVisible()
  await expect(cancelled, 'the first branch\'s cancellation on the new one').toHaveCount(0)
})

test('reload mid-run: the stream resumes without lost or doubled text', async ({ page, agentFor }) => {
  const full = 'one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty END'
  const agent = await agentFor('Slow', 'slow')
  await newConversation(page, agent.name, 'count slowly')
  // Polled every 50 ms (not with expect's back-off): the reload must land mid-run.
  await expect.poll(async () => (await assistantTexts(page)).join(''), { message: 'some streamed text', intervals: [50] }).toContain('three')
  await page.reload()
  // Every read of the screen until the answer is whole: one answer, and
  // always a prefix of the full text.
  const seen: string[] = []
  const wrong: string[] = []
  await expect.poll(async () => {
    const texts = await assistantTexts(page)
    if (texts.length > 1) wrong.push(`two answers after the reload: ${JSON.stringify(texts)}`)
    const t = (texts[0] ?? '').replace(/▍$/, '').trim()
    if (t) seen.push(t)
    if (t && !full.startsWith(t)) wrong.push(`streamed text is not a prefix of the answer: ${JSON.stringify(t)}`)
    return t === full && (await page.locator('.conversation').getAttribute('data-run-status')) === 'idle'
  }, { message: 'the whole answer', timeout: 30_000, intervals: [50] }).toBe(true)
  expect(wrong).toEqual([])
  expect(seen.some((t) => t !== full), 'the run finished before the reload; nothing was resumed').toBe(true)
  expect(await page.locator('.msg-user .bubble').allInnerTexts(), 'user bubbles').toEqual(['count slowly'])
})

test('stop: cancelling a live run', async ({ page, agentFor }) => {
  const agent = await agentFor('Slow', 'slow')
  const cancelled = await stopMidAnswer(page, agent.name, 'count again')
  // The note outlives the hand-over to the stored transcript, once…
  await page.waitForTimeout(500)
  await expect(cancelled).toBeVisible()
  expect(await cancelled.count(), 'the cancellation is shown twice').toBe(1)
  // …and a reload: the session stores how the run ended.
  await page.reload()
  await expect(page.locator('.note', { hasText: 'Stopped before it finished' })).toBeVisible()
  // What streamed before the stop is kept, labelled.
  const kept = page.locator('.msg-assistant', { hasText: 'two' })
  await expect(kept).toBeVisible()
  await expect(kept).toContainText('Stopped')
  // The inspector says how the run ended.
  const panel = await inspector(page)
  await expect(panel.locator('.trace-run .pill', { hasText: 'cancelled' })).toBeVisible()
})
