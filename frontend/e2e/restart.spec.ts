// A server that dies under a streaming run: the open tab reconnects by
// itself and shows how the run ended, and the answer it had streamed is
// kept, cut short — no reload.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { assistantTexts, expect, expectConsole, test } from './fixtures'
import { apiClient, freePort, startServer } from './stack.mjs'

test('a run a crash cut short ends by itself in the open tab, its partial answer kept',
  // The tab's socket and fetches fail while the server is down.
  { annotation: expectConsole(/ERR_CONNECTION_REFUSED|WebSocket|Failed to load resource|Failed to fetch/) },
  async ({ page, stack }) => {
    test.setTimeout(120_000)
    const dataDir = mkdtempSync(join(tmpdir(), 'agents-restart-'))
    const port = await freePort()
    const token = `restart-${Math.random().toString(36).slice(2)}-token`
    const start = () => startServer({ bin: process.env.E2E_BIN, dataDir, port, token })
    let server = await start()
    try {
      const { api } = apiClient(server.baseURL, token)
      const provider = await api('POST', '/providers', { name: 'scripted', base_url: stack.scriptedURL, api_key: 'any-key' })
      const agent = await api('POST', '/agents', { name: 'Slow', model: 'slow', provider_id: provider.id })
      const session = await api('POST', '/sessions', { agent_config_id: agent.id, name: 'Cut short' })
      await page.goto(`${server.baseURL}/#token=${token}`)
      await page.goto(`${server.baseURL}/s/${session.id}`)
      await api('POST', `/sessions/${session.id}/runs`, { input: 'Tell me slowly' })
      // Streaming, and past a checkpoint (one a second).
      await expect.poll(async () => (await assistantTexts(page)).join('').length, { message: 'streamed text' }).toBeGreaterThan(8)
      await page.waitForTimeout(1500)
      const exited = new Promise((r) => server.child.once('exit', r))
      server.child.kill('SIGKILL')
      await exited
      server = await start()
      // The tab finds out by itself: the ending the restart recorded, and
      // the answer so far, labelled as stopped.
      await expect(page.getByText('Run interrupted by a restart')).toBeVisible({ timeout: 30_000 })
      const cut = page.locator('.msg-assistant', { hasText: 'Stopped' })
      await expect(cut).toBeVisible()
      expect((await cut.locator('.markdown').innerText()).length).toBeGreaterThan(0)
      await expect(page.locator('.conv-head').getByText(/Running|Streaming/)).toHaveCount(0)
    } finally {
      server.child.kill('SIGTERM')
      await new Promise((r) => { server.child.once('exit', r); setTimeout(r, 5000) })
      rmSync(dataDir, { recursive: true, force: true })
    }
  })
