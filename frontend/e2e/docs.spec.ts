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
  // The sidebar lists a tag's operations by id once the tag is opened. The
  // whole reference is one page, so what a click navigates to is checked
  // in the viewport, not merely on the page.
  await page.getByRole('menuitem', { name: 'agents', exact: true }).click({ timeout: 60_000 })
  await expect(page.getByText('createAgent', { exact: true }).first()).toBeVisible()
  await page.getByRole('menuitem', { name: 'sessions', exact: true }).click()
  await expect(page.getByRole('heading', { level: 2 }).filter({ hasText: /^sessions$/ })).toBeInViewport()
  await page.getByText('createSession', { exact: true }).first().click()
  await expect(page.getByRole('heading', { name: 'Start a session' }).first()).toBeInViewport()
  expect(outside, 'the page reached outside the server').toEqual([])
})
