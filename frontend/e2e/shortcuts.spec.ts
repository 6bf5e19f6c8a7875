// Keyboard shortcuts: help, new conversation, focus the composer, Esc to
// stop; and the live region telling a screen reader how a run went.
import { assistantTexts, conversationFor, expect, idle, newConversation, test } from './fixtures'

test('shortcuts: the help dialog, new conversation, focus the composer', async ({ page, user, agentFor }) => {
  const agent = await agentFor('Echo', 'echo')
  const sid = await conversationFor(user, agent.id, 'hello shortcuts')
  await page.goto(`/s/${sid}`)
  const composer = page.getByRole('textbox', { name: 'Message' })
  await expect(composer).toBeFocused()

  // ? types into the composer; from elsewhere it opens the help.
  await page.keyboard.type('?')
  await expect(composer).toHaveValue('?')
  await composer.fill('')
  const inspectorToggle = page.getByRole('button', { name: 'Toggle the inspector' })
  await inspectorToggle.focus()
  await page.keyboard.press('?')
  const dialog = page.getByRole('dialog', { name: 'Keyboard shortcuts' })
  await expect(dialog).toBeVisible()
  await expect(dialog.getByRole('row', { name: /New conversation/ })).toBeVisible()
  await expect(dialog.getByRole('row', { name: /Stop the running answer/ })).toBeVisible()
  // Focus is inside and stays inside (the page behind is inert).
  await expect(dialog.getByRole('button', { name: 'Close' })).toBeFocused()
  for (let i = 0; i < 3; i++) {
    await page.keyboard.press('Tab')
    expect(await page.evaluate(() => !!document.activeElement?.closest('dialog') || document.activeElement === document.body), 'focus left the dialog').toBe(true)
  }
  await page.keyboard.press('Escape')
  await expect(dialog).toHaveCount(0)
  await expect(inspectorToggle, 'focus returned').toBeFocused()

  // Ctrl+/ opens it even from the composer.
  await composer.focus()
  await page.keyboard.press('Control+/')
  await expect(dialog).toBeVisible()
  await dialog.getByRole('button', { name: 'Close' }).click()
  await expect(dialog).toHaveCount(0)
  await expect(composer).toBeFocused()

  // Shift+Esc and / put the caret in the composer.
  await inspectorToggle.focus()
  await page.keyboard.press('Shift+Escape')
  await expect(composer).toBeFocused()
  await inspectorToggle.focus()
  await page.keyboard.press('/')
  await expect(composer).toBeFocused()
  await expect(composer).toHaveValue('')

  // Ctrl+Shift+O: a new conversation.
  await page.keyboard.press('Control+Shift+O')
  await expect(page).toHaveURL(/\/$/)
  await expect(page.getByRole('region', { name: 'New conversation' })).toBeVisible()
  await expect(composer).toBeFocused()
})

test('shortcuts: Esc stops the running answer, and the live region says so', async ({ page, agentFor }) => {
  const agent = await agentFor('Slow', 'slow')
  await newConversation(page, agent.name, 'count until I press Esc')
  await expect.poll(async () => (await assistantTexts(page)).join(''), { message: 'some streamed text', intervals: [50] }).toContain('two')
  await page.getByRole('button', { name: 'Toggle the inspector' }).focus()
  await page.keyboard.press('Escape')
  await expect(page.locator('.note', { hasText: 'Cancelled' })).toBeVisible()
  await idle(page)
  await expect(page.getByRole('status').filter({ hasText: 'Answer stopped' })).toHaveCount(1)
  expect((await assistantTexts(page)).join(''), 'stopped before the end').not.toContain('END')
})

test('live region: an answer finished and an approval requested are announced', async ({ page, agentFor }) => {
  const echo = await agentFor('Echo', 'echo')
  await newConversation(page, echo.name, 'announce me')
  await expect(page.locator('#live-region')).toHaveText('Answer finished')
  const careful = await agentFor('Careful', 'todo', { approval: { approve_tools: ['todo_write'] } })
  await newConversation(page, careful.name, 'plan with approval')
  await expect(page.locator('.tool-card[data-tool="todo_write"]').getByRole('button', { name: 'Approve once' })).toBeVisible()
  await expect(page.locator('#live-region')).toHaveText('Approval requested: todo_write')
  await expect(page.locator('#live-region')).toHaveAttribute('aria-live', 'polite')
  expect(await page.locator('[aria-live]').count(), 'one live region').toBe(1)
})
