// Single sign-on in a real browser: the sign-in page offers the provider,
// the provider's OWN login page (tools/oidcop: zitadel's OpenID Provider)
// signs the person in, and the browser lands in the workbench as that
// person; a refused sign-in comes back saying why. The server runs for
// this test alone, with --oidc-issuer pointing at the provider.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expectAccessible } from './axe'
import { expectFits } from './fits'
import { expect, expectConsole, test } from './fixtures'
import { apiClient, freePort, startOIDCProvider, startServer } from './stack.mjs'

// axe is injected past the app's CSP (see axe.ts); it scans light and dark.
test.use({ bypassCSP: true, reducedMotion: 'reduce' })

const client = { clientID: 'agents-web', clientSecret: 'agents-web-secret' }

// The provider's login page asks for a /favicon.ico it does not serve.
const noFavicon = expectConsole(/\/login\/username\?authRequestID=\S+: Failed to load resource: the server responded with a status of 404/)

test('oidc: signs in on the provider\'s own login page and lands in the workbench as that person', { annotation: noFavicon }, async ({ page }) => {
  const dir = mkdtempSync(join(tmpdir(), 'agents-oidc-'))
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  const token = `oidc-${Math.random().toString(36).slice(2)}-token`
  const op = await startOIDCProvider({
    dir, ...client, redirectURIs: [`${base}/api/v1/auth/oidc/callback`],
    users: [
      { username: 'olivia', password: 'olivia-password', email: 'olivia@example.com', email_verified: true },
      { username: 'mallory', password: 'mallory-password', email: 'mallory@elsewhere.test', email_verified: true },
    ],
  })
  const server = await startServer({
    bin: process.env.E2E_BIN, dataDir: dir, port, token,
    args: ['--base-url', base, '--oidc-issuer', op.issuer, '--oidc-client-id', client.clientID, '--oidc-name', 'Test IdP',
      '--oidc-allowed-domains', 'example.com'],
    env: { AGENTS_OIDC_CLIENT_SECRET: client.clientSecret },
  })
  try {
    await page.goto(`${base}/`)
    const sso = page.getByRole('link', { name: 'Sign in with Test IdP' })
    await expect(sso).toBeVisible()
    await expect(page.getByLabel('Password')).toBeVisible()
    await expectAccessible(page, 'the sign-in page with single sign-on')
    await page.setViewportSize({ width: 360, height: 740 })
    await expectFits(page, 'the sign-in page with single sign-on on a phone')
    await page.setViewportSize({ width: 1280, height: 820 })

    // A person of another domain: the provider signs them in, the server
    // refuses, and the sign-in page says why.
    await sso.click()
    await page.waitForURL((u) => u.href.startsWith(`${op.issuer}/login/`))
    await page.getByLabel('Username:').fill('mallory')
    await page.getByLabel('Password:').fill('mallory-password')
    await page.getByRole('button', { name: 'Login' }).click()
    await expect(page.getByRole('alert')).toContainText('not of a domain allowed here')
    expect(page.url(), 'the reason left the address bar').toBe(`${base}/`)
    await expectAccessible(page, 'the sign-in page saying why it was refused')

    // Olivia signs in on the provider's page and lands in the workbench.
    await page.getByRole('link', { name: 'Sign in with Test IdP' }).click()
    await page.waitForURL((u) => u.href.startsWith(`${op.issuer}/login/`))
    await page.getByLabel('Username:').fill('olivia')
    await page.getByLabel('Password:').fill('olivia-password')
    await page.getByRole('button', { name: 'Login' }).click()
    await expect(page.getByRole('navigation', { name: 'Conversations' })).toBeVisible()
    await expect(page.getByText('olivia', { exact: true })).toBeVisible()
    expect(page.url(), 'the token stayed in the URL').not.toContain('token=')
    const users = await apiClient(base, token).api('GET', '/auth/users')
    expect(users.map((u: { username: string }) => u.username).sort()).toEqual(['admin', 'olivia'])
  } finally {
    server.child.kill('SIGTERM')
    op.child.kill('SIGTERM')
    await new Promise((r) => { server.child.once('exit', r); setTimeout(r, 5000) })
    rmSync(dir, { recursive: true, force: true })
  }
})
