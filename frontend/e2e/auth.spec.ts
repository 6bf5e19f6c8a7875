// Signing in from the server's link, and with a password.
import { expect, expectConsole, test } from './fixtures'

test.describe('from the link', () => {
  // This one starts signed out and uses the link the server printed.
  test.use({ signedIn: false })

  test('signs in from the token link', async ({ page, stack }) => {
    await page.goto(`/#token=${stack.token}`)
    await expect(page.getByRole('navigation', { name: 'Conversations' })).toBeVisible()
    expect(page.url(), 'the token stayed in the URL').not.toContain('token=')
    await expect(page.getByText('admin', { exact: true })).toBeVisible()
  })
})

test('sign out and in with a password', { annotation: expectConsole(/status of 401/) }, async ({ page, user }) => {
  await user.api('PATCH', `/auth/users/${user.id}`, { password: 'correct horse battery' })
  await page.goto('/')
  await page.getByRole('button', { name: 'Sign out' }).click()
  await expect(page.getByRole('heading', { name: 'Sign in' })).toBeVisible()
  await page.getByLabel('Username').fill(user.username)
  await page.getByLabel('Password').fill('wrong')
  await page.getByRole('button', { name: 'Sign in' }).click()
  await expect(page.getByRole('alert')).toBeVisible()
  await page.getByLabel('Password').fill('correct horse battery')
  await page.getByRole('button', { name: 'Sign in' }).click()
  await expect(page.getByRole('navigation', { name: 'Conversations' })).toBeVisible()
})
