// Personal MCP sign-ins in a real browser: an admin shares an OAuth server
// each person signs in to. The admin's panel shows their own status, they
// sign in in a popup as themselves and sign out again, while a member's
// status stays their own (needs sign-in). The panel passes the axe checks
// and fits a phone.
import { expectAccessible } from './axe'
import { expect, test } from './fixtures'
import { expectFits } from './fits'
import { startProtectedStub } from './protectedStub'
import { authServerMissing, startAuthServer } from './stack.mjs'

// axe is injected into the page: the test's script, not the app's.
test.use({ bypassCSP: true, reducedMotion: 'reduce' })

test('mcp personal sign-ins: each person signs in and out as themselves', async ({ page, user, newUser, tag }) => {
  const missing = authServerMissing()
  if (missing && process.env.AGENTS_CI === '1') throw new Error(`e2e: ${missing}; AGENTS_CI=1 requires it`)
  test.skip(!!missing, missing)
  const as = await startAuthServer()
  const rs = await startProtectedStub(as.url)
  try {
    const name = `team-${tag}`
    const endpoint = rs.endpoint
    const server = await user.api('POST', '/mcp-servers', { name, scope: 'global', config: { endpoint, auth_mode: 'oauth', per_person_auth: true } })
    const member = await newUser('member', 'mo')

    await page.goto('/settings/mcp')
    const row = page.getByRole('listitem', { name })
    await expect(row.getByRole('status', { name: 'Status' })).toHaveText('needs sign-in')
    await expect(row).toContainText('the status shown is yours')
    await expectAccessible(page, 'the MCP panel with a server each person signs in to')

    // The admin signs in as themselves: the code is exchanged and their grant stored.
    const popup = page.waitForEvent('popup')
    await row.getByRole('button', { name: 'Sign in' }).click()
    await (await popup).waitForURL(/\/api\/v1\/mcp-servers\/oauth\/callback/).catch(() => {}) // it may close itself first
    await expect.poll(async () => (await as.state()).codeGrants, { message: 'the callback delivered the code, which was exchanged', timeout: 20_000 }).toBe(1)
    await expect.poll(async () => (await user.api('GET', `/mcp-servers/${server.id}`)).has_oauth_token, { timeout: 20_000 }).toBe(true)
    const theirs = await member.api('GET', `/mcp-servers/${server.id}`)
    expect([theirs.status, theirs.has_oauth_token], 'the member still needs their own sign-in').toEqual(['needs_auth', false])

    await expect(row).toContainText('you are signed in')
    await page.setViewportSize({ width: 360, height: 740 })
    await expectFits(page, 'the MCP panel on a phone, signed in to a server each person signs in to')
    await row.getByRole('button', { name: 'Sign out' }).click()
    await expect(row.getByRole('button', { name: 'Sign out' })).toHaveCount(0)
    expect((await user.api('GET', `/mcp-servers/${server.id}`)).has_oauth_token, 'signed out').toBe(false)
    await user.api('DELETE', `/mcp-servers/${server.id}`)
  } finally {
    await rs.close()
    await as.stop()
  }
})
