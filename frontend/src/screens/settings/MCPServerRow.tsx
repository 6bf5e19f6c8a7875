import { useQueryClient } from '@tanstack/react-query'
import { useState } from 'react'
import { api, errorText, ok, type MCPServer } from '../../lib/api'
import { commandLine, followMCPServers, statusPill } from '../../lib/mcpServers'
import '../../styles/mcp-stdio.css'
import { MCPToolHints } from './MCPToolHints'
import { useMCPConnect } from './useMCPConnect'
import { ScopeButton } from './ScopeButton'

/** What the caller may do with a row: edit (and connect) as its author or, for a global one, as an admin; delete as its author or an admin. */
export interface MCPRights { edit: boolean; remove: boolean }

interface Props {
  server: MCPServer
  rights: MCPRights
  onEdit: () => void
  /** The caller's projects' names by id: where a stdio server runs. */
  projectNames: Map<string, string>
}

/** One MCP server: its live status, where it is (an endpoint, or a program and where it runs), why it is not connected, its tools, and what the caller may do with it. */
export function MCPServerRow({ server: s, rights, onEdit, projectNames }: Props) {
  const qc = useQueryClient()
  const { connect, connecting, error: connectError, blockedURL } = useMCPConnect(s)
  const [confirming, setConfirming] = useState(false)
  const [showTools, setShowTools] = useState(false)
  const [error, setError] = useState('')
  const pill = statusPill(s.status)
  const connected = s.status === 'connected'
  // Each person signs in: the status, grant and tools shown are the reader's own, and anyone who sees it connects as themselves.
  const personal = s.config.auth_mode === 'oauth' && s.config.per_person_auth
  const [signingOut, setSigningOut] = useState(false)

  async function signOut() {
    setError('')
    setSigningOut(true)
    try {
      await ok(api.DELETE('/api/v1/mcp-servers/{id}/my-sign-in', { params: { path: { id: s.id } } }))
      await followMCPServers(qc)
    } catch (e) {
      setError(errorText(e))
    } finally {
      setSigningOut(false)
    }
  }

  async function remove() {
    setConfirming(false)
    setError('')
    try {
      await ok(api.DELETE('/api/v1/mcp-servers/{id}', { params: { path: { id: s.id } } }))
      await followMCPServers(qc)
    } catch (e) {
      setError(errorText(e))
    }
  }

  return (
    <li className="row row-stack" data-mcp-server={s.name} aria-label={s.name}>
      <div className="row-line">
        <div className="row-main">
          <b>{s.name}</b> <span className={`pill pill-${pill.tone}`} role="status" aria-label="Status">{pill.label}</span>
          {' '}<span className="pill" title="Who sees it">{s.scope}</span>
          {s.config.auth_mode === 'oauth' && (
            <> <span className="pill" title="Authentication">{personal ? 'OAuth · each person' : 'OAuth'}{s.has_oauth_token && !personal ? ' · signed in' : ''}</span></>
          )}
          {personal && s.has_oauth_token && <> <span className="pill" title="Your own sign-in">you are signed in</span></>}
          <div className="muted small">
            <Where server={s} projectNames={projectNames} />
            {connected && <> · {s.tools.length === 1 ? '1 tool' : `${s.tools.length} tools`}</>}
          </div>
        </div>
        {connected && s.tools.length > 0 && (
          <button className="btn btn-ghost btn-sm" aria-expanded={showTools} onClick={() => setShowTools((o) => !o)}>Tools</button>
        )}
        {(rights.edit || personal) && s.enabled && (
          <button className="btn btn-ghost btn-sm" disabled={connecting} onClick={connect}>
            {connecting ? 'Connecting…' : connected ? 'Reconnect' : s.status === 'needs_auth' || s.status === 'authorizing' ? 'Sign in' : 'Connect'}
          </button>
        )}
        {personal && s.has_oauth_token && (
          <button className="btn btn-ghost btn-sm" disabled={signingOut} onClick={signOut}>{signingOut ? 'Signing out…' : 'Sign out'}</button>
        )}
        {rights.edit && <button className="btn btn-ghost btn-sm" onClick={onEdit}>Edit</button>}
        <ScopeButton kind="mcp-servers" id={s.id} scope={s.scope} />
        {rights.remove && (confirming ? (
          <button className="btn btn-danger btn-sm" autoFocus onBlur={() => setConfirming(false)} onClick={remove}>Delete?</button>
        ) : (
          <button className="btn btn-danger btn-sm" onClick={() => setConfirming(true)}>Delete</button>
        ))}
      </div>
      {personal && <p className="muted small">Each person signs in with their own account; the status shown is yours.</p>}
      {!connected && s.last_error && <p className="result result-error" data-last-error>{s.last_error}</p>}
      {s.status === 'authorizing' && <p className="muted small">Waiting for the sign-in in the popup window. Closed it? Sign in again for a fresh one.</p>}
      {blockedURL && (
        <p className="callout callout-warn">
          The browser blocked the sign-in window. <a href={blockedURL} target="_blank" rel="noopener noreferrer">Open the sign-in page</a>
        </p>
      )}
      {connectError && <p className="error-text" role="alert">{connectError}</p>}
      {error && <p className="error-text" role="alert">{error}</p>}
      {showTools && (
        <ul className="mcp-tools" aria-label={`Tools of ${s.name}`}>
          {s.tools.map((t) => (
            <li key={t.name}>
              <code>{t.name}</code> <MCPToolHints hints={t.annotations} />
              {(t.title || t.description) && <div className="muted small clamp">{t.title && t.title !== t.tool ? `${t.title}: ` : ''}{t.description}</div>}
            </li>
          ))}
        </ul>
      )}
    </li>
  )
}

/** An HTTP server's endpoint; a stdio server's command line, and the project whose sandbox runs it. */
function Where({ server, projectNames }: { server: MCPServer; projectNames: Map<string, string> }) {
  const c = server.config
  if (c.transport !== 'stdio') return <code>{c.endpoint}</code>
  const line = commandLine(c.command, c.args)
  return (
    <>
      <span className="pill" title="Transport">stdio</span>{' '}
      <code className="mcp-command" title={line.full} data-command-line>{line.short}</code>
      {c.project_id && <> in project {projectNames.get(c.project_id) ?? <code>{c.project_id}</code>}</>}
    </>
  )
}
