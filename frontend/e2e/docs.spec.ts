// /docs: the bundled API reference.
import { expect, test } from './fixtures'

test('docs: the API reference renders the served document, offline', async ({ page, stack }) => {
  // The reference is a large bundle that parses the whole document: slow on a busy machine.
  test.slow()
  // Every request the page makes stays on this server (the CSP would refuse
  // the rest, and a refusal is a console error that fails the test anyway;
  // this names the address).
  const outside: string[] = []
  page.on('request', (r) => { if (!r.url().startsWith(stack.baseURL) && !/^(data|blob):/.test(r.url())) outside.push(r.url()) })
  await page.goto('/docs')
  // The first tag opens by itself; the others open from the sidebar.
  await expect(page.getByText('createAgent', { exact: true }).first()).toBeVisible({ timeout: 60_000 })
  await page.getByText('sessions', { exact: true }).first().click()
  await expect(page.getByRole('heading', { name: 'sessions' }).first()).toBeVisible()
  await expect(page.getByText('createSession', { exact: true }).first()).toBeVisible()
  await expect(page.getByText('Start a session').first()).toBeVisible()
  expect(outside, 'the page reached outside the server').toEqual([])
})
