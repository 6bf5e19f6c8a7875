// The conversation header's picker: a model for the next answer only, or
// another agent from here on — without editing the agent — each noted in
// the transcript, which a reload keeps.
import { conversationFor, expect, idle, test } from './fixtures'

test('model picker: a model for one answer, then another agent, each noted', async ({ page, user, agentFor }) => {
  const writer = await agentFor('Writer', 'echo')
  const reviewer = await agentFor('Reviewer', 'regen')
  const sid = await conversationFor(user, writer.id, 'first')
  await page.goto(`/s/${sid}`)
  const head = page.locator('.conv-head')
  const picker = head.getByRole('button', { name: /Agent and model/ })
  await expect(picker).toContainText(writer.name)
  await expect(picker).toContainText('echo')
  const message = page.getByRole('textbox', { name: 'Message' })

  // A model for the next answer: the provider's own list offers it.
  await picker.click()
  const panel = head.getByRole('group', { name: 'Agent and model for the next answer' })
  await panel.getByLabel('Model for the next answer').selectOption('regen')
  await page.keyboard.press('Escape')
  await expect(panel).toBeHidden()
  await expect(picker).toContainText('regen (next answer)')
  await message.fill('second')
  await page.keyboard.press('Enter')
  await expect(page.locator('.msg-assistant .markdown').last()).toHaveText('An answer to regenerate.')
  await idle(page)
  // It was for that answer only: the next is the agent's own model again.
  await expect(picker).not.toContainText('next answer')
  await message.fill('third')
  await page.keyboard.press('Enter')
  await expect(page.locator('.msg-assistant .markdown').last()).toHaveText('You said: third')
  await idle(page)

  // Another agent from here on.
  await picker.click()
  await panel.getByLabel('Agent').selectOption({ label: `${reviewer.name} · regen` })
  await page.keyboard.press('Escape')
  await expect(picker).toContainText(reviewer.name)
  await message.fill('fourth')
  await page.keyboard.press('Enter')
  // The answer, not the one before it: idle alone may be read before the run shows.
  await expect(page.locator('.msg-assistant .markdown').last()).toHaveText('An answer to regenerate.')
  await idle(page)

  // The transcript says what answered, after a reload too; the agent stuck.
  await page.reload()
  const notes = page.locator('.timeline').getByText(/This answer uses|Switched to/)
  await expect(notes).toHaveText([
    `This answer uses regen in place of ${writer.name}'s own echo.`,
    `Switched to ${reviewer.name} (regen).`,
  ])
  await expect(picker).toContainText(reviewer.name)
  expect((await user.api('GET', `/sessions/${sid}`)).agent_config_id).toBe(reviewer.id)
})
