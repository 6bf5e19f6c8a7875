// Helpers the browser tests share.

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

export async function until(fn, what, timeout = 15_000) {
  const end = Date.now() + timeout
  let last
  while (Date.now() < end) {
    try {
      last = await fn()
      if (last) return last
    } catch (e) {
      last = e
    }
    await sleep(50)
  }
  throw new Error(`timed out waiting for ${what} (last: ${last})`)
}

/** An agent on the scripted provider, made over the API (the UI path is covered once, in "settings"). */
export async function agentFor(stack, shared, name, model, extra = {}) {
  return stack.api('POST', '/agents', { name, model, provider_id: shared.providerId, ...extra })
}

export async function newConversation(page, stack, agentName, text) {
  await page.goto(stack.baseURL + '/')
  await page.getByLabel('Agent').selectOption({ label: agentName })
  await page.getByLabel('Message').fill(text)
  await page.keyboard.press('Enter')
  await page.waitForURL(/\/s\//)
  return page.url().split('/s/')[1]
}

/** The open conversation has no live run. */
export const idle = (page) => until(async () => (await page.locator('.conversation').getAttribute('data-run-status')) === 'idle', 'the run to end')

export const assistantTexts = (page) => page.locator('.msg-assistant .markdown').allInnerTexts()
