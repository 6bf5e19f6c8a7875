// The chat's polish: Regenerate on a stopped or failed exchange, editing a
// sent message into a new version, copying code and messages, code blocks
// on a narrow screen.
import type { Locator } from '@playwright/test'
import { assistantTexts, conversationFor, expect, idle, newConversation, test } from './fixtures'

const SLOW = 'one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty END'
const CODE = 'func main() {\n\tfmt.Println("a line long enough to scroll sideways on a narrow phone screen, far past its right edge")\n}'

/** The CSS opacity of a control (Playwright counts an invisible opacity-0 button as visible). */
const opacity = (l: Locator) => l.evaluate((el) => Number(getComputedStyle(el).opacity))

test('regenerate a stopped answer: the partial text survives a reload, then a new answer is a second version', async ({ page, agentFor }) => {
  const agent = await agentFor('Slow', 'slow')
  await newConversation(page, agent.name, 'count for me')
  await expect.poll(async () => (await assistantTexts(page)).join(''), { message: 'some streamed text', intervals: [50] }).toContain('two')
  await page.getByRole('button', { name: 'Stop' }).click()
  await idle(page)
  await page.reload()
  const kept = page.locator('.msg-assistant', { hasText: 'two' })
  await expect(kept).toBeVisible()
  await expect(kept.locator('.msg-label')).toContainText('Stopped')
  const partial = (await kept.locator('.markdown').innerText()).trim()
  expect(SLOW.startsWith(partial) && partial !== SLOW, `a partial answer: ${partial}`).toBe(true)

  await kept.hover()
  await kept.getByRole('button', { name: 'Regenerate the answer' }).click()
  await expect(page.locator('.msg-assistant .markdown', { hasText: 'twenty END' })).toBeVisible({ timeout: 40_000 })
  await idle(page, 40_000)
  const versions = page.getByRole('group', { name: 'Answer versions' })
  await expect(versions.locator('.branch-count')).toHaveText('2 / 2')
  // The stopped attempt is the first version, still there.
  await versions.getByRole('button', { name: 'Previous version' }).click()
  await expect(versions.locator('.branch-count')).toHaveText('1 / 2')
  await expect(page.locator('.msg-assistant .msg-label', { hasText: 'Stopped' })).toBeVisible()
  expect(await page.locator('.msg-user .bubble').allInnerTexts()).toEqual(['count for me'])
})

// flaky-answer fails its first answer of the stack's life (fail_times counts
// in the scripted server; its title call has an exchange of its own so it
// cannot take the failure): this test runs once per stack.
test('regenerate a failed exchange from its error note', async ({ page, agentFor }) => {
  const agent = await agentFor('Flaky', 'flaky-answer')
  await newConversation(page, agent.name, 'answer after a failure')
  const failed = page.locator('.note-error', { hasText: 'refused this once' })
  await expect(failed).toBeVisible()
  await idle(page)
  expect(await assistantTexts(page), 'no answer').toEqual([])
  // The stored exchange (after the hand-over) offers Regenerate on its note.
  await page.reload()
  await expect(failed).toBeVisible()
  await failed.getByRole('button', { name: 'Regenerate the answer' }).click()
  await expect(page.locator('.msg-assistant .markdown', { hasText: 'Recovered: the second try answered.' })).toBeVisible()
  await idle(page)
  const versions = page.getByRole('group', { name: 'Answer versions' })
  await expect(versions.locator('.branch-count')).toHaveText('2 / 2')
  await versions.getByRole('button', { name: 'Previous version' }).click()
  await expect(page.locator('.note-error', { hasText: 'refused this once' })).toBeVisible()
  expect(await assistantTexts(page)).toEqual([])
})

test('edit and resend: a new version of the message, both switchable after a reload', async ({ page, user, agentFor }) => {
  const agent = await agentFor('Echo', 'echo')
  const sid = await conversationFor(user, agent.id, 'the first message')
  await user.api('POST', `/sessions/${sid}/runs`, { input: 'second ORIGINAL' }, user.token, { Prefer: 'wait=60' })
  await page.goto(`/s/${sid}`)
  await expect(page.locator('.msg-assistant', { hasText: 'You said: second ORIGINAL' })).toBeVisible()

  // By keyboard: the actions show on focus, Enter opens the editor.
  const second = page.locator('.msg-user', { hasText: 'second ORIGINAL' })
  const edit = second.getByRole('button', { name: 'Edit message' })
  await edit.focus()
  // Polled: the actions fade in (a transition), and may be read mid-way.
  await expect.poll(() => opacity(second.locator('.msg-actions')), { message: 'actions shown on focus' }).toBe(1)
  await page.keyboard.press('Enter')
  const box = page.getByRole('textbox', { name: 'Edited message' })
  await expect(box).toBeFocused()
  await expect(box).toHaveValue('second ORIGINAL')
  // Cancel leaves the message as it was.
  await page.getByRole('button', { name: 'Cancel' }).click()
  await expect(page.locator('.msg-user .bubble', { hasText: 'second ORIGINAL' })).toBeVisible()

  await second.hover()
  await second.getByRole('button', { name: 'Edit message' }).click()
  await box.fill('second EDITED')
  await page.getByRole('button', { name: 'Save & send' }).click()
  await expect(page.locator('.msg-assistant', { hasText: 'You said: second EDITED' })).toBeVisible()
  await idle(page)
  const versions = page.getByRole('group', { name: 'Message versions' })
  await expect(versions.locator('.branch-count')).toHaveText('2 / 2')
  expect(await page.locator('.msg-user .bubble').allInnerTexts()).toEqual(['the first message', 'second EDITED'])

  await versions.getByRole('button', { name: 'Previous version' }).click()
  await expect(versions.locator('.branch-count')).toHaveText('1 / 2')
  await expect(page.locator('.msg-assistant', { hasText: 'You said: second ORIGINAL' })).toBeVisible()
  await page.reload()
  await expect(versions.locator('.branch-count')).toHaveText('1 / 2')
  expect(await page.locator('.msg-user .bubble').allInnerTexts()).toEqual(['the first message', 'second ORIGINAL'])
  await versions.getByRole('button', { name: 'Next version' }).click()
  await expect(versions.locator('.branch-count')).toHaveText('2 / 2')
  expect(await page.locator('.msg-user .bubble').allInnerTexts()).toEqual(['the first message', 'second EDITED'])
  expect(await assistantTexts(page)).toEqual(['You said: the first message', 'You said: second EDITED'])

  // The first message too: its edit opens a new first branch (branched to the root).
  const first = page.locator('.msg-user', { hasText: 'the first message' })
  await first.hover()
  await first.getByRole('button', { name: 'Edit message' }).click()
  await box.fill('a new FIRST message')
  await box.press('Enter')
  await expect(page.locator('.msg-assistant', { hasText: 'You said: a new FIRST message' })).toBeVisible()
  await idle(page)
  expect(await page.locator('.msg-user .bubble').allInnerTexts()).toEqual(['a new FIRST message'])
  const firstVersions = page.getByRole('listitem').filter({ has: page.locator('.msg-user') }).first().getByRole('group', { name: 'Message versions' })
  await expect(firstVersions.locator('.branch-count')).toHaveText('2 / 2')
  await firstVersions.getByRole('button', { name: 'Previous version' }).click()
  await expect(firstVersions.locator('.branch-count')).toHaveText('1 / 2')
  expect(await page.locator('.msg-user .bubble').allInnerTexts()).toEqual(['the first message', 'second EDITED'])
})

test('edit and resend a message with an image: the new version carries it again', async ({ page, user, stack, agentFor }) => {
  const agent = await agentFor('Echo', 'echo')
  // A real 2×3 PNG, uploaded as the composer would, then sent with a question.
  const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAIAAAADCAIAAAA2iEnWAAAAEklEQVR4nGP4z8DA0PCfAYUCAExWB3sFhcHoAAAAAElFTkSuQmCC', 'base64')
  const form = new FormData()
  form.append('file', new Blob([png], { type: 'image/png' }), 'dot.png')
  const res = await fetch(`${stack.baseURL}/api/v1/attachments`, { method: 'POST', body: form, headers: { Authorization: `Bearer ${user.token}` } })
  expect(res.status).toBe(201)
  const image = await res.json()
  const session = await user.api('POST', '/sessions', { agent_config_id: agent.id })
  await user.api('POST', `/sessions/${session.id}/runs`, { input: 'what is this', attachment_ids: [image.id] }, user.token, { Prefer: 'wait=60' })
  await page.goto(`/s/${session.id}`)
  await expect(page.locator('.msg-assistant')).toContainText('image/png 2x3')

  const question = page.locator('.msg-user', { hasText: 'what is this' })
  await question.hover()
  await question.getByRole('button', { name: 'Edit message' }).click()
  const editor = page.getByRole('form', { name: 'Edit your message' })
  await expect(editor.locator('.msg-images img')).toHaveCount(1)
  await editor.getByRole('textbox', { name: 'Edited message' }).fill('what is this, really')
  await editor.getByRole('button', { name: 'Save & send' }).click()
  const answer = page.locator('.msg-assistant', { hasText: 'You said: what is this, really' })
  await expect(answer, 'the model saw the image again').toContainText('image/png 2x3')
  await idle(page)
  await expect(page.locator('.msg-user .msg-images img')).toHaveCount(1)
  await expect(page.getByRole('group', { name: 'Message versions' }).locator('.branch-count')).toHaveText('2 / 2')
})

test('copy: a code block and a whole message to the clipboard', async ({ page, context, user, agentFor, stack }) => {
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: stack.baseURL })
  const agent = await agentFor('Coder', 'coder')
  const sid = await conversationFor(user, agent.id, 'write a program')
  await page.goto(`/s/${sid}`)
  const block = page.locator('.msg-assistant .code-block')
  await expect(block.locator('code .hljs-keyword').first()).toBeVisible()
  const copy = block.getByRole('button', { name: 'Copy code' })
  await expect.poll(() => opacity(copy), { message: 'hidden until hover or focus' }).toBe(0)
  await copy.focus()
  // Polled: on a busy machine the style recalculation after focus may land a frame later.
  await expect.poll(() => opacity(copy), { message: 'shown on keyboard focus' }).toBe(1)
  await page.keyboard.press('Enter')
  await expect(block.getByRole('button', { name: 'Copied' })).toBeVisible()
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(CODE)
  await expect(page.locator('#live-region')).toHaveText('Code copied')

  const answer = page.locator('.msg-assistant')
  await answer.locator('.markdown p').first().hover()
  await answer.getByRole('button', { name: 'Copy message' }).click()
  await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe(`Here is the program:\n\n\`\`\`go\n${CODE}\n\`\`\`\n\nRun it with \`go run\`.`)
})

test('narrow screen: a code block scrolls, the page does not', async ({ page, user, agentFor }) => {
  await page.setViewportSize({ width: 380, height: 800 })
  const agent = await agentFor('Coder', 'coder')
  const sid = await conversationFor(user, agent.id, 'write a program')
  await page.goto(`/s/${sid}`)
  const pre = page.locator('.msg-assistant .code-block pre')
  await expect(pre).toBeVisible()
  const box = await pre.evaluate((el) => ({ scroll: el.scrollWidth, client: el.clientWidth, overflow: getComputedStyle(el).overflowX }))
  expect(box.scroll, `the block scrolls: ${JSON.stringify(box)}`).toBeGreaterThan(box.client)
  expect(box.overflow).toBe('auto')
  const pageBox = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth, body: document.body.scrollWidth }))
  expect(pageBox.scroll, `the page overflows sideways: ${JSON.stringify(pageBox)}`).toBeLessThanOrEqual(pageBox.client)
  expect(pageBox.body).toBeLessThanOrEqual(pageBox.client)
  const timeline = await page.locator('.timeline').evaluate((el) => ({ scroll: el.scrollWidth, client: el.clientWidth }))
  expect(timeline.scroll, `the timeline overflows sideways: ${JSON.stringify(timeline)}`).toBeLessThanOrEqual(timeline.client)
})
