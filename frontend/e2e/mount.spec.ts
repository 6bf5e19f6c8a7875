// The workbench embedded in a Go program (examples/mount): the console
// served under /agents behind the program's own sign-in. No token ever
// reaches the browser: the program's session cookie signs in the page,
// its API calls and its event socket.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect, expectConsole, idle, test } from './fixtures'
import { freePort, startMount } from './stack.mjs'

test('a Go service mounts the console under /agents behind its own sign-in',
  // Once the service signs the person out, the console's calls are refused.
  { annotation: expectConsole(/401|Failed to load resource/) },
  async ({ page, stack }) => {
    test.setTimeout(120_000)
    const dataDir = mkdtempSync(join(tmpdir(), 'agents-mount-'))
    const mount = await startMount({ dataDir, port: await freePort(), users: 'ada:pw-ada:admin' })
    try {
      // The console is the service's page: it sends the browser to its own sign-in first.
      await page.goto(`${mount.baseURL}/agents/`)
      await expect(page).toHaveURL(/\/login\?next=\/agents\//)
      await page.getByLabel('Name').fill('ada')
      await page.getByLabel('Password').fill('pw-ada')
      await page.getByRole('button', { name: 'Sign in' }).click()
      await expect(page).toHaveURL(`${mount.baseURL}/agents/`)

      // Set up over the API as the signed-in person (the page's cookie).
      const api = async (method: string, path: string, data: unknown) => {
        const r = await page.request.fetch(`${mount.baseURL}/agents/api/v1${path}`, { method, data })
        expect(r.ok(), `${method} ${path}: ${r.status()} ${await r.text()}`).toBeTruthy()
        return r.json()
      }
      const me = await (await page.request.get(`${mount.baseURL}/agents/api/v1/auth/me`)).json()
      expect(me.username).toBe('ada')
      const provider = await api('POST', '/providers', { name: 'scripted', base_url: stack.scriptedURL, api_key: 'any-key' })
      await api('POST', '/agents', { name: 'Echo', model: 'echo', provider_id: provider.id })

      // A conversation in the console: the composer posts under the mount,
      // the answer streams over the socket the host's session signed in.
      await page.reload()
      await page.getByLabel('Agent').selectOption({ label: 'Echo' })
      await page.getByLabel('Message').fill('hello from the host')
      await page.keyboard.press('Enter')
      await page.waitForURL(/\/agents\/s\//)
      await expect(page.locator('.msg-assistant .markdown', { hasText: 'You said: hello from the host' })).toBeVisible()
      await idle(page)
      await expect(page.getByRole('button', { name: 'Sign out' }), 'the host signs people out, not the console').toHaveCount(0)

      // Client-side navigation stays under the mount, and a reload there holds.
      await page.getByRole('button', { name: /Settings/ }).click()
      await expect(page).toHaveURL(`${mount.baseURL}/agents/settings/providers`)
      await page.reload()
      await expect(page.getByText('scripted').first()).toBeVisible()

      // The service signs the person out: the console says where to sign in again.
      await page.request.post(`${mount.baseURL}/logout`)
      await page.getByRole('button', { name: /Workflows/ }).click()
      await expect(page.getByRole('heading', { name: 'Signed out' })).toBeVisible()
    } finally {
      mount.child.kill('SIGTERM')
      await new Promise((r) => { mount.child.once('exit', r); setTimeout(r, 5000) })
      rmSync(dataDir, { recursive: true, force: true })
    }
  })
