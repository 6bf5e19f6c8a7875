// A provider signed in with a ChatGPT account, against the ChatGPT double
// the stack starts (the auth server and the Codex backend): the sign-in
// opens the authorize page; the address the browser lands on (localhost:1455,
// where nothing listens) is pasted back; an agent on the provider answers
// through the backend; signing out makes it unusable again.
import { expect, expectConsole, idle, newConversation, test } from './fixtures'

test('chatgpt: a provider signs in with a pasted callback address, an agent on it chats, then it signs out', { annotation: expectConsole(/status of 400/) }, async ({ page, context, user, tag }) => {
  const name = `chatgpt ${tag}`
  await page.goto('/settings/providers')
  await page.getByRole('button', { name: 'Add provider' }).click()
  const form = page.getByRole('form', { name: 'New provider' })
  await form.getByLabel('Name').fill(name)
  await form.getByLabel('Authentication').selectOption('chatgpt_login')
  await expect(form.getByLabel('API key'), 'a ChatGPT provider takes no key').toHaveCount(0)
  await form.getByRole('button', { name: 'Save' }).click()

  // The saved provider's form stays open on the sign-in. Its button opens
  // the authorize page in a new tab; the double consents at once and
  // redirects to the fixed loopback address, which does not load: that
  // address, as the tab tried it, is what the person copies back.
  const edit = page.getByRole('form', { name: `Edit ${name}` })
  const landed = new Promise<string>((resolve) => {
    context.on('request', (r) => {
      if (r.url().startsWith('http://localhost:1455/')) resolve(r.url())
    })
  })
  const opened = context.waitForEvent('page')
  await edit.getByRole('button', { name: 'Sign in with ChatGPT' }).click()
  const popup = await opened
  const callback = await landed
  expect(callback).toMatch(/^http:\/\/localhost:1455\/auth\/callback\?code=.+&state=/)
  await popup.close()
  await expect(edit.getByRole('link', { name: 'open the sign-in page' }), 'the sign-in page is linked too').toHaveAttribute('href', /\/oauth\/authorize\?/)

  // An address from no waiting sign-in is refused in words (not "10m0s").
  await edit.getByLabel('Callback URL').fill(callback.replace(/state=[^&]+/, 'state=stale'))
  await edit.getByRole('button', { name: 'Complete sign-in' }).click()
  await expect(edit.getByText(/it expired \(a sign-in waits 10 minutes for its address\) or was already used/)).toBeVisible()
  await expect(edit.getByText(/10m0s/)).toHaveCount(0)
  await edit.getByLabel('Callback URL').fill(callback)
  await edit.getByRole('button', { name: 'Complete sign-in' }).click()
  await expect(edit.getByText('Signed in as ann@example.com (plus)')).toBeVisible()
  await edit.getByRole('button', { name: 'Cancel' }).click()
  const row = page.locator('.row', { hasText: name })
  await expect(row).toContainText('ChatGPT account · signed in')

  // An agent on it chats through the Codex backend.
  const provider = (await user.api('GET', '/providers')).find((p: { name: string }) => p.name === name)
  const agent = await user.api('POST', '/agents', { name: `Codex ${tag}`, model: 'gpt-5-codex', provider_id: provider.id })
  await newConversation(page, agent.name, 'hello from the browser')
  await expect(page.locator('.msg-assistant .markdown', { hasText: 'Codex heard: hello from the browser' })).toBeVisible()
  await idle(page)

  // Signed out, a run fails at once saying why.
  await page.goto('/settings/providers')
  await page.locator('.row', { hasText: name }).getByRole('button', { name: 'Edit' }).click()
  const again = page.getByRole('form', { name: `Edit ${name}` })
  await again.getByRole('button', { name: 'Sign out' }).click()
  await expect(again.getByRole('button', { name: 'Sign in with ChatGPT' })).toBeVisible()
  await expect(page.locator('.row', { hasText: name })).toContainText('not signed in')
  const session = await user.api('POST', '/sessions', { agent_config_id: agent.id })
  const run = await user.api('POST', `/sessions/${session.id}/runs`, { input: 'still there?' }, user.token, { Prefer: 'wait=30' })
  expect(run.status).toBe('error')
  expect(run.error.message).toContain('not signed in')
})
