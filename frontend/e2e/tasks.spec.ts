// Background tasks: an agent's spawn_task starts a sub-agent on a hidden
// session; the conversation lists the task (live status, stop, retry,
// dismiss), its spawn_task card follows it, the inspector shows its
// transcript, and when it ends the parent is woken once — drawn as a
// compact note, not a user bubble. Each script (e2e/scripts.json) answers
// the wake-up's [task-notification] first, since the notification repeats
// the tasks' labels and results. The flaky job's first attempt always
// fails; its retry succeeds because a retry's input starts "This is attempt
// 2 of 3", which an earlier exchange answers (fail_times would count
// requests over the scripted model's whole life, so a second run of the
// test against the same stack would not fail).
import type { Locator, Page } from '@playwright/test'
import { expect, idle, inspector, newConversation, test } from './fixtures'

const taskRow = (page: Page, label: string) => page.locator('.task-strip .task-row', { hasText: label })
const chipOf = (l: Locator) => l.locator('.task-chip')

/** The place, in the order drawn, of the first timeline item holding each [selector, text]. */
async function order(page: Page, ...wanted: [string, string][]) {
  return page.locator('.timeline-inner > .item').evaluateAll((items, w) =>
    w.map(([sel, text]) => items.findIndex((i) => [...i.querySelectorAll(sel)].some((e) => e.textContent?.includes(text)))), wanted)
}

test('tasks: a spawned task completes, the parent wakes once, its transcript opens in the inspector', async ({ page, agentFor }) => {
  const agent = await agentFor('Delegator', 'delegator')
  await newConversation(page, agent.name, 'Please delegate the research')
  const row = taskRow(page, 'research A')
  await expect(chipOf(row)).toHaveText('Completed')
  await expect(row).toContainText('attempt 1/3')
  await expect(row).toContainText('The answer is 42.')
  // The wake-up: one compact note, then the agent's answer to it.
  const answer = page.locator('.msg-assistant .markdown', { hasText: 'Noted: the research says 42.' })
  await expect(answer).toBeVisible()
  await idle(page)
  const notice = page.locator('.task-notice')
  await expect(notice).toHaveCount(1)
  await expect(notice.locator('summary')).toHaveText('Background task results · "research A" completed')
  const [at, after] = await order(page, ['.task-notice', 'Background task results'], ['.msg-assistant', 'Noted: the research says 42.'])
  expect(at, 'the note is drawn').toBeGreaterThanOrEqual(0)
  expect(after, 'the answer follows the note').toBeGreaterThan(at)
  expect(await page.locator('.msg-user .bubble').allInnerTexts(), 'no bubble for the notification').toEqual(['Please delegate the research'])
  // Opened, the note shows what the agent read.
  await notice.locator('summary').click()
  await expect(notice.locator('.reasoning-text')).toContainText('[task-notification]')
  await expect(notice.locator('.reasoning-text')).toContainText('result="The answer is 42."')
  // The spawn_task card stands for its task.
  const card = page.locator('.tool-card[data-tool="spawn_task"]')
  await expect(card.locator('.tool-title')).toHaveText('research A')
  await expect(card.locator('.pill', { hasText: 'Completed' })).toBeVisible()
  // Its transcript, from the card, in the inspector.
  await card.getByRole('button', { name: 'Open task' }).click()
  const panel = await inspector(page)
  await expect(panel.getByRole('tab', { name: 'Task' })).toHaveAttribute('aria-selected', 'true')
  const view = panel.locator('.task-panel')
  await expect(view.locator('.task-panel-title')).toHaveText('research A')
  await expect(view.locator('.task-chip')).toHaveText('Completed')
  await expect(view.getByRole('region', { name: 'Result' })).toContainText('The answer is 42.')
  const transcript = view.getByLabel('Task transcript')
  await expect(transcript.locator('.msg-user .bubble')).toHaveText(['RESEARCH-A: find the answer'])
  await expect(transcript.locator('.msg-assistant .markdown')).toHaveText(['The answer is 42.'])
  // Nothing of the task's run reached the conversation itself.
  expect(await page.locator('.conversation .msg-assistant .markdown').allInnerTexts()).not.toContain('The answer is 42.')
  // A reload reads the same from the store.
  await page.reload()
  await expect(page.locator('.task-notice')).toHaveCount(1)
  await expect(page.locator('.tool-card[data-tool="spawn_task"] .pill', { hasText: 'Completed' })).toBeVisible()
  await expect(page.locator('.msg-user .bubble')).toHaveText(['Please delegate the research'])
})

test('tasks: a task card keeps its name whole when its result preview arrives', async ({ page, agentFor }) => {
  const agent = await agentFor('Reporter', 'reporter')
  await newConversation(page, agent.name, 'Please write the report')
  const card = page.locator('.tool-card[data-tool="spawn_task"]')
  await expect(card.locator('.pill', { hasText: 'Completed' })).toBeVisible()
  await expect(card.locator('.tool-summary')).toContainText('The report')
  const title = card.locator('.tool-title')
  await expect(title).toHaveText('Write the report')
  expect(await title.evaluate((el) => el.scrollWidth <= el.clientWidth), 'the name cut short by the preview').toBe(true)
})

test('tasks: the finished tasks are one group, closed past two, dismissed at once', async ({ page, user, agentFor }) => {
  const agent = await agentFor('Delegator', 'delegator')
  const session = await user.api('POST', '/sessions', { agent_config_id: agent.id })
  const tasks = async () => (await user.api('GET', `/sessions/${session.id}/tasks`)) as { status: string; dismissed: boolean }[]
  for (let i = 1; i <= 3; i++) {
    // Each run spawns one task; the next starts once the wake-up it leads to is over.
    await expect.poll(async () => (await user.api('POST', `/sessions/${session.id}/runs`, { input: 'Please delegate the research' }, user.token,
      { Prefer: 'wait=60' }).catch(() => ({ status: 'busy' }))).status, { timeout: 30_000 }).toBe('completed')
    await expect.poll(async () => (await tasks()).filter((t) => t.status === 'completed').length, { timeout: 30_000 }).toBe(i)
  }
  await page.goto(`/s/${session.id}`)
  const strip = page.getByRole('region', { name: 'Background tasks' })
  const group = strip.getByRole('button', { name: '3 finished' })
  await expect(group).toHaveAttribute('aria-expanded', 'false')
  await expect(strip.locator('.task-row')).toHaveCount(0)
  await group.click()
  await expect(strip.locator('.task-row')).toHaveCount(3)
  await strip.getByRole('button', { name: 'Dismiss all finished' }).click()
  await expect(strip.getByRole('button', { name: /^Background tasks/ })).toContainText('3 dismissed')
  await expect(strip.locator('.task-row')).toHaveCount(0)
  expect((await tasks()).every((t) => t.dismissed), 'every task dismissed').toBe(true)
})

test('tasks: a slow task is stopped from the list, shows cancelled and can be dismissed', async ({ page, user, agentFor }) => {
  const agent = await agentFor('Counter', 'slowtask')
  const sid = await newConversation(page, agent.name, 'Count in the background')
  const row = taskRow(page, 'slow count')
  await expect(chipOf(row)).toHaveText('Working')
  // Its transcript streams in the inspector while it works.
  await row.getByRole('button', { name: 'slow count', exact: true }).click()
  const panel = await inspector(page)
  await expect(panel.locator('.task-panel .msg-assistant .markdown')).toContainText('step2')
  await row.getByRole('button', { name: 'Stop slow count', exact: true }).click()
  await expect(chipOf(row)).toHaveText('Cancelled')
  await expect(panel.locator('.task-panel .task-chip')).toHaveText('Cancelled')
  await expect(page.locator('.tool-card[data-tool="spawn_task"] .pill', { hasText: 'Cancelled' })).toBeVisible()
  await expect(row.getByRole('button', { name: 'Stop slow count', exact: true })).toHaveCount(0)
  // Dismissed, it is tucked away behind a toggle.
  await row.getByRole('button', { name: 'Dismiss slow count', exact: true }).click()
  await expect(row).toHaveCount(0)
  const toggle = page.locator('.task-strip').getByRole('button', { name: 'Show 1 dismissed' })
  await toggle.click()
  await expect(chipOf(taskRow(page, 'slow count'))).toHaveText('Cancelled')
  // A stopped task reports nothing back.
  await idle(page)
  const entries: { source?: string }[] = await user.api('GET', `/sessions/${sid}/messages`)
  expect(entries.filter((e) => e.source === 'task_notification')).toEqual([])
  await expect(page.locator('.task-notice')).toHaveCount(0)
})

test('tasks: a failed task is retried from the list and completes on attempt 2', async ({ page, agentFor }) => {
  const agent = await agentFor('Flaky', 'flakytask')
  await newConversation(page, agent.name, 'Try the flaky job')
  const row = taskRow(page, 'flaky job')
  await expect(chipOf(row)).toHaveText('Failed')
  await expect(row).toContainText('attempt 1/3')
  await expect(row).toContainText('boom')
  // The failure is reported first (a retry ending before that wake-up would
  // share it: one notification pays every debt due).
  const noted = page.locator('.msg-assistant .markdown', { hasText: 'Noted the flaky results.' })
  await expect(noted).toHaveCount(1)
  await row.getByRole('button', { name: 'Retry flaky job', exact: true }).click()
  await expect(chipOf(row)).toHaveText('Completed')
  await expect(row).toContainText('attempt 2/3')
  await expect(row.getByRole('button', { name: 'Retry flaky job', exact: true })).toHaveCount(0)
  // Each ended attempt woke the parent: the failure, then the success.
  await expect(noted).toHaveCount(2)
  await idle(page)
  await expect(page.locator('.task-notice')).toHaveCount(2)
  await row.getByRole('button', { name: 'flaky job', exact: true }).click()
  const panel = await inspector(page)
  await expect(panel.getByRole('region', { name: 'Result' })).toContainText('flaky finally worked')
  // The retry read why it runs again, and the task once more.
  const inputs = panel.getByLabel('Task transcript').locator('.msg-user .bubble')
  await expect(inputs).toHaveCount(2)
  await expect(inputs.nth(1)).toContainText('FLAKY-JOB')
})

test("tasks: a task's approval is decided from the conversation that started it", async ({ page, agentFor }) => {
  const agent = await agentFor('Gated', 'gatedtask', { approval: { approve_tools: ['todo_write'] } })
  await newConversation(page, agent.name, 'Delegate carefully')
  const row = taskRow(page, 'gated job')
  await expect(chipOf(row)).toHaveText('Waiting for approval')
  const card = page.locator('.timeline .tool-card[data-task-id]', { hasText: 'from task gated job' })
  await expect(card).toBeVisible()
  await card.getByRole('button', { name: 'Approve once' }).click()
  await expect(card).toHaveCount(0)
  await expect(chipOf(row)).toHaveText('Completed')
  await expect(page.locator('.msg-assistant .markdown', { hasText: 'Noted the gated result.' })).toBeVisible()
  await idle(page)
  await expect(page.locator('.task-notice')).toHaveCount(1)
})
