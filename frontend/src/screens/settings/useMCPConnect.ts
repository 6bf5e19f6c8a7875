import { useQueryClient } from '@tanstack/react-query'
import { useEffect, useRef, useState } from 'react'
import { api, errorText, ok, type MCPServer } from '../../lib/api'
import { followMCPServers } from '../../lib/mcpServers'

export const POPUP_NAME = 'mcp-oauth'
export const POPUP_FEATURES = 'popup,width=520,height=720'

/** Whether connecting will (most likely) answer an authorize URL: an OAuth server without a usable grant. */
const wantsSignIn = (s: MCPServer) =>
  s.config.auth_mode === 'oauth' && (!s.has_oauth_token || s.status === 'needs_auth' || s.status === 'authorizing')

/**
 * Connect one server. An OAuth server without a grant answers an authorize
 * URL, opened in a popup; the sign-in completes on the server's callback
 * page, and the list is polled until the status settles. The popup is
 * opened empty within the click when a sign-in is expected, so no popup
 * blocker stands between the person and it, and pointed at the URL once it
 * arrives; a blocked popup leaves the URL as a link.
 */
export function useMCPConnect(server: MCPServer) {
  const qc = useQueryClient()
  const [connecting, setConnecting] = useState(false)
  const [error, setError] = useState('')
  const [blockedURL, setBlockedURL] = useState('')
  const popup = useRef<Window | null>(null)

  // The callback page tells its opener when the sign-in went through
  // (when the browser kept the opener): ask at once rather than at the
  // next poll.
  useEffect(() => {
    function onMessage(e: MessageEvent) {
      if (e.origin === window.location.origin && (e.data as { type?: unknown } | null)?.type === 'mcp-oauth') void followMCPServers(qc)
    }
    window.addEventListener('message', onMessage)
    return () => window.removeEventListener('message', onMessage)
  }, [qc])

  // Connected: a popup still open has done its job.
  useEffect(() => {
    if (server.status === 'connected' && popup.current) {
      if (!popup.current.closed) popup.current.close()
      popup.current = null
    }
  }, [server.status])

  async function connect() {
    setError('')
    setBlockedURL('')
    setConnecting(true)
    if (wantsSignIn(server)) popup.current = window.open('', POPUP_NAME, POPUP_FEATURES) ?? null
    try {
      const r = await ok(api.POST('/api/v1/mcp-servers/{id}/connect', { params: { path: { id: server.id } } }))
      if (r.authorize_url) {
        // The same name reuses the window opened above.
        const w = window.open(r.authorize_url, POPUP_NAME, POPUP_FEATURES)
        if (w) popup.current = w
        else setBlockedURL(r.authorize_url)
      } else {
        closePopup()
      }
    } catch (e) {
      closePopup()
      setError(errorText(e))
    } finally {
      setConnecting(false)
    }
    await followMCPServers(qc)
  }

  function closePopup() {
    if (popup.current && !popup.current.closed) popup.current.close()
    popup.current = null
  }

  return { connect, connecting, error, blockedURL }
}
