// The first minute on a fresh server: the ready link signs in, ONE screen
// connects a provider, lists its models from the provider and takes the
// first message, and the conversation answers — three screens in all. A
// provider that cannot be reached says so next to its base URL and leaves
// nothing behind. Each test runs its own server on an empty data dir: the
// shared stack holds other tests' shared agents, which (rightly) hide the
// first-run screen.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Page } from '@playwright/test'
import { expectAccessible } from './axe'
import { expectFits } from './fits'
import { expect, test } from './fixtures'
import { apiClient, freePort, startServer } from './stack.mjs'

// axe is injected past the app's CSP (see axe.ts); it scans light and dark.
test.use({ bypassCSP: true, reducedMotion: 'reduce' })

/** A server of the suite's binary on an empty data dir, for one test; stop() ends it and removes the dir. */
async function freshServer() {
  const dataDir = mkdtempSync(join(tmpdir(), 'agents-onboarding-'))
  const token = `onboarding-${Math.random().toString(36).slice(2)}-token`
  const server = await startServer({ bin: process.env.E2E_BIN, dataDir, port: await freePort(), token })
  const stop = async () => {
    server.child.kill('SIGTERM')
    await new Promise((r) => { server.child.once('exit', r); setTimeout(r, 5000) })
    rmSync(dataDir, { recursive: true, force: true })
  }
  return { baseURL: server.baseURL, token, link: `${server.baseURL}/#token=${token}`, ...apiClient(server.baseURL, token), stop }
}

/** Every address the tab shows, in order (pushState and replaceState too), and how many documents it loaded. */
function watchScreens(page: Page) {
  const urls: string[] = []
  let loads = 0
  page.on('framenavigated', (f) => {
    if (f === page.mainFrame() && urls.at(-1) !== f.url()) urls.push(f.url())
  })
  page.on('load', () => { loads++ })
  return { urls, loads: () => loads }
}

/** The model ids the scripted model's own models endpoint lists. */
async function scriptedModels(scriptedURL: string): Promise<string[]> {
  const r = await fetch(`${scriptedURL}/models`, { headers: { Authorization: 'Bearer any-key' } })
  return ((await r.json()) as { data: { id: string }[] }).data.map((m) => m.id)
}

test('first run: sign-in link → one screen → a streamed answer, three screens, and the agent and provider exist', async ({ page, stack }) => {
  test.setTimeout(90_000)
  const server = await freshServer()
  try {
    const screens = watchScreens(page)
    await page.goto(server.link)

    // One screen, its first field focused.
    await expect(page.getByRole('heading', { name: 'Start your first chat' })).toBeVisible()
    const provider = page.getByRole('form', { name: 'Connect a provider' })
    await expect(provider.getByLabel('Type')).toBeFocused()
    await expect(provider.getByLabel('Type').locator('option')).toHaveText(['OpenAI or OpenAI-compatible', 'Anthropic'])
    await provider.getByLabel('Base URL').fill(stack.scriptedURL)
    await provider.getByLabel('API key').fill('any-key')
    await page.keyboard.press('Enter')

    // The models are the provider's own list, in its order.
    const first = page.getByRole('form', { name: 'First message' })
    const model = first.getByLabel('Model')
    await expect(model).toBeFocused()
    const offered = await scriptedModels(stack.scriptedURL)
    expect(offered).toContain('regen')
    await expect(model.locator('option:not([disabled])')).toHaveText(offered)
    await model.selectOption('regen')
    await first.getByLabel('Message').fill('Hello, first chat')
    await first.getByLabel('Message').press('Enter')

    // The conversation, with the scripted model's answer streamed into it.
    await page.waitForURL(/\/s\/[^/]+$/)
    await expect(page.locator('.msg-user', { hasText: 'Hello, first chat' })).toBeVisible()
    await expect(page.locator('.msg-assistant .markdown', { hasText: 'An answer to regenerate.' })).toBeVisible()
    await expect(page.getByRole('textbox', { name: 'Message' })).toBeVisible()

    // Three screens: the sign-in link, the first-run screen, the conversation; one page load.
    const paths = screens.urls.map((u) => new URL(u).pathname + new URL(u).hash)
    expect(paths, 'the addresses the tab showed').toEqual([`/#token=${server.token}`, '/', expect.stringMatching(/^\/s\/[^/]+$/)])
    expect(paths.length).toBeLessThanOrEqual(3)
    expect(screens.loads(), 'page loads').toBe(1)

    // What it made: one provider on the scripted endpoint, one agent on it and the chosen model, one conversation.
    const providers = await server.api('GET', '/providers')
    expect(providers.map((p: Record<string, string>) => [p.name, p.base_url, p.api_key])).toEqual([[new URL(stack.scriptedURL).host, stack.scriptedURL, '********']])
    const agents = await server.api('GET', '/agents')
    expect(agents.map((a: Record<string, string>) => [a.name, a.model, a.provider_id])).toEqual([['Assistant', 'regen', providers[0].id]])
    const sessions = await server.api('GET', '/sessions')
    expect(sessions.map((s: Record<string, string>) => [s.agent_config_id, `/s/${s.id}`])).toEqual([[agents[0].id, new URL(page.url()).pathname]])

    // Back at the start, there is an agent now: the usual composer.
    await page.getByRole('button', { name: 'New conversation' }).click()
    await expect(page.getByRole('region', { name: 'New conversation' })).toBeVisible()
    await expect(page.getByRole('heading', { name: 'Start your first chat' })).toHaveCount(0)

    // A member of a team whose admin shared that agent can chat already: no first-run screen for them.
    await server.api('POST', `/providers/${providers[0].id}/scope`, { scope: 'global' })
    await server.api('POST', `/agents/${agents[0].id}/scope`, { scope: 'global' })
    await server.api('POST', '/auth/users', { username: 'member', password: 'member password 1', role: 'member' })
    const { token: memberToken } = await server.api('POST', '/auth/login', { username: 'member', password: 'member password 1' })
    await page.goto(`${server.baseURL}/#token=${memberToken}`)
    await expect(page.getByRole('region', { name: 'New conversation' })).toBeVisible()
    await expect(page.getByLabel('Agent')).toHaveValue(agents[0].id)
    await expect(page.getByRole('heading', { name: 'Start your first chat' })).toHaveCount(0)
  } finally {
    await server.stop()
  }
})

test('first run: an address nothing answers at is said next to the base URL and saves nothing; a retry reuses one provider', async ({ page, stack }) => {
  test.setTimeout(90_000)
  const server = await freshServer()
  try {
    await page.goto(server.link)
    const form = page.getByRole('form', { name: 'Connect a provider' })
    const baseURL = form.getByLabel('Base URL')
    await baseURL.fill(`http://127.0.0.1:${await freePort()}/v1`)
    await form.getByLabel('API key').fill('any-key')
    await form.getByRole('button', { name: 'Connect and list models' }).click()

    await expect(baseURL).toHaveAttribute('aria-invalid', 'true')
    await expect(baseURL).toHaveAccessibleDescription(/^Could not reach 127\.0\.0\.1:\d+\. Check the base URL and that the service is running\.$/)
    await expect(page.getByRole('form', { name: 'First message' })).toHaveCount(0)
    expect(await server.api('GET', '/providers'), 'no provider left behind').toEqual([])
    expect(await server.api('GET', '/agents'), 'no agent').toEqual([])
    await expectAccessible(page, 'the first-run screen with an error')

    // The right address: one provider, proved; a changed key then updates that same one.
    await baseURL.fill(stack.scriptedURL)
    await expect(baseURL, 'the error goes with the edit').not.toHaveAttribute('aria-invalid')
    await baseURL.press('Enter')
    await expect(page.getByRole('form', { name: 'First message' }).getByLabel('Model').locator('option', { hasText: 'regen' })).toHaveCount(1)
    await expectAccessible(page, 'the first-run screen with its models')
    // On a phone, the same screen fits: nothing off screen, nothing overlapping.
    await page.setViewportSize({ width: 360, height: 740 })
    await expectFits(page, 'the first-run screen on a phone')
    await page.setViewportSize({ width: 1280, height: 820 })
    const saved = await server.api('GET', '/providers')
    expect(saved).toHaveLength(1)
    await expect(form.getByLabel('API key'), 'the connected provider folds to one line').toHaveCount(0)
    await expect(form).toContainText(`Connected to ${new URL(stack.scriptedURL).host} · `)
    await form.getByRole('button', { name: 'Change' }).click()
    await expect(form.getByLabel('Type')).toBeFocused()
    await form.getByLabel('API key').fill('another-key')
    await expect(page.getByRole('form', { name: 'First message' }), 'the list is asked again for the new key').toHaveCount(0)
    await form.getByRole('button', { name: 'Connect and list models' }).click()
    await expect(page.getByRole('form', { name: 'First message' }).getByLabel('Model')).toBeVisible()
    const after = await server.api('GET', '/providers')
    expect(after.map((p: Record<string, string>) => p.id), 'the same provider, not a second one').toEqual([saved[0].id])
    expect(after[0].updated_at, 'updated with the new key').not.toBe(saved[0].updated_at)
    expect(await server.api('GET', '/agents'), 'no agent until the first message is sent').toEqual([])
  } finally {
    await server.stop()
  }
})
