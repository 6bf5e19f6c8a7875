// MCP OAuth in a real browser: the sign-in completes in the browser that
// asked for it (the connect answer's cookie rides the authorization
// server's redirect back to the callback), and a browser that did not ask
// — someone the link was forwarded to — completes nothing.
import { expect, test } from './fixtures'
import { startProtectedStub } from './protectedStub'
import { authServerMissing, startAuthServer } from './stack.mjs'

test('mcp oauth: the sign-in completes in the browser that asked for it, and in no other', async ({ page, browser, user, tag }) => {
  const missing = authServerMissing()
  if (missing && process.env.AGENTS_CI === '1') throw new Error(`e2e: ${missing}; AGENTS_CI=1 requires it`)
  test.skip(!!missing, missing)
  const as = await startAuthServer()
  const rs = await startProtectedStub(as.url)
  const other = await browser.newContext()
  try {
    const name = `secure-${tag}`
    const endpoint = rs.endpoint
    const server = await user.api('POST', '/mcp-servers', { name, config: { endpoint, auth_mode: 'oauth' } })

    // The person signs in from the MCP servers panel: a popup, the
    // authorization server, back to the callback with the cookie.
    await page.goto('/settings/mcp')
    const row = page.getByRole('listitem', { name })
    const popup = page.waitForEvent('popup')
    await row.getByRole('button', { name: 'Sign in' }).click()
    await (await popup).waitForURL(/\/api\/v1\/mcp-servers\/oauth\/callback/).catch(() => {}) // it may close itself first
    await expect.poll(async () => (await as.state()).codeGrants, { message: 'the callback delivered the code, which was exchanged', timeout: 20_000 }).toBe(1)

    // The same sign-in's link, opened by someone else: nothing completes.
    await expect.poll(async () => (await user.api('GET', `/mcp-servers/${server.id}`)).status, { timeout: 20_000 }).not.toBe('authorizing')
    const { authorize_url: link } = await user.api('POST', `/mcp-servers/${server.id}/connect`)
    expect(link, 'connect asked for a sign-in').toBeTruthy()
    const stranger = await other.newPage()
    const answer = await stranger.goto(link)
    expect(answer?.status(), 'the callback refuses a browser that did not ask').toBe(403)
    await expect(stranger.getByRole('heading')).toHaveText('Sign-in failed')
    await expect(stranger.locator('body')).toContainText('begun by another account or in another browser')
    expect((await as.state()).codeGrants, 'no code was exchanged for the stranger').toBe(1)
    expect((await user.api('GET', `/mcp-servers/${server.id}`)).status).toBe('authorizing')
    await user.api('DELETE', `/mcp-servers/${server.id}`)
  } finally {
    await other.close()
    await rs.close()
    await as.stop()
  }
})
