// @vitest-environment jsdom
// The sign-in screen follows what the server offers: the single sign-on
// button named for the provider, the password form unless turned off, and
// a refused single sign-on's reason in people's terms.
import { render, screen } from '@testing-library/react'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { api } from '../lib/api'
import { captureTokenFromHash } from '../lib/auth'
import { answer } from '../test/mcp'
import { SignIn } from './SignIn'

const show = (methods: { password: boolean; oidc: boolean; oidc_name?: string }) => {
  vi.spyOn(api, 'GET').mockImplementation((() => answer(200, methods)) as never)
  return render(<SignIn />)
}

describe('SignIn', () => {
  beforeEach(() => window.history.replaceState(null, '', '/s/abc'))
  afterEach(() => vi.restoreAllMocks())

  it('offers the provider next to the password form', async () => {
    show({ password: true, oidc: true, oidc_name: 'Acme ID' })
    const sso = await screen.findByRole('link', { name: 'Sign in with Acme ID' })
    expect(sso).toHaveAttribute('href', '/api/v1/auth/oidc/start?return_to=%2Fs%2Fabc')
    expect(screen.getByLabelText('Password')).toBeVisible()
  })

  it('hides the password form when password sign-in is off', async () => {
    show({ password: false, oidc: true, oidc_name: 'Acme ID' })
    expect(await screen.findByRole('link', { name: 'Sign in with Acme ID' })).toBeVisible()
    expect(screen.queryByLabelText('Password')).toBeNull()
  })

  it('shows only the password form without single sign-on', async () => {
    show({ password: true, oidc: false })
    await vi.waitFor(() => expect(api.GET).toHaveBeenCalled())
    expect(screen.queryByRole('link')).toBeNull()
    expect(screen.getByRole('button', { name: 'Sign in' })).toBeVisible()
  })

  it('says why a single sign-on was refused, and strips the reason from the address', async () => {
    window.history.replaceState(null, '', '/#signin_error=domain')
    captureTokenFromHash()
    expect(window.location.hash).toBe('')
    show({ password: false, oidc: true, oidc_name: 'Acme ID' })
    await screen.findByRole('link', { name: 'Sign in with Acme ID' }) // the provider's name has arrived
    expect(screen.getByRole('alert')).toHaveTextContent(
      "Your Acme ID account's email is not of a domain allowed here (or Acme ID has not verified it). Sign in with your organization's account.",
    )
  })
})
