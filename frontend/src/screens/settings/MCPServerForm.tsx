import { useQueryClient } from '@tanstack/react-query'
import { useState, type FormEvent } from 'react'
import { Field } from '../../components/Field'
import { SecretInput, type SecretEdit } from '../../components/SecretField'
import { SecretRowsEditor, type RowErrors } from '../../components/SecretRowsEditor'
import { api, ApiError, errorText, ok, type MCPServer } from '../../lib/api'
import { followMCPServers } from '../../lib/mcpServers'
import { MCPStdioFields, TransportChoice, useStdioPlaces } from './MCPStdioFields'
import { buildBody, envKeepable, headersKeepable, initialState, secretKeepable, secretStored, splitFieldErrors, type AuthMode, type MCPFormState } from './mcpServerBody'

const KNOWN = new Set(['name', 'enabled', 'scope', 'config.endpoint', 'config.auth_mode', 'config.headers', 'config.oauth_client_id', 'config.oauth_client_secret', 'config.oauth_scopes', 'config.per_person_auth',
  'config.transport', 'config.command', 'config.args', 'config.env', 'config.project_id'])

interface Props {
  /** The server as it was when the form opened; absent for a new one. */
  server?: MCPServer
  /** The same server as the list reads it now (its grant and status move while the form is open). */
  live?: MCPServer
  admin: boolean
  onDone: () => void
}

/**
 * Add or edit an MCP server: an HTTP endpoint, or a local program (stdio).
 * PUT replaces it whole; header and variable values and the client secret
 * are write-only — kept with the mask, replaced, or cleared — and a header or
 * the secret is asked for again when the endpoint (or the client) changes.
 */
export function MCPServerForm({ server, live, admin, onDone }: Props) {
  const qc = useQueryClient()
  const [f, setF] = useState<MCPFormState>(() => initialState(server))
  const [scope, setScope] = useState<'private' | 'global'>('private')
  const [errors, setErrors] = useState<Record<string, string>>({})
  const [headerErrors, setHeaderErrors] = useState<RowErrors>({})
  const [envErrors, setEnvErrors] = useState<RowErrors>({})
  const [error, setError] = useState('')
  const [saving, setSaving] = useState(false)
  const [clearing, setClearing] = useState(false)
  const set = <K extends keyof MCPFormState>(k: K, v: MCPFormState[K]) => setF((x) => ({ ...x, [k]: v }))
  const keepHeaders = headersKeepable(f, server)
  const stored = secretStored(server)
  const keepSecret = secretKeepable(f, server)
  const now = live ?? server
  // A personal sign-in is the caller's own: they sign out in the list, not here.
  const signedIn = now?.has_oauth_token && now.config.auth_mode === 'oauth' && !now.config.per_person_auth
  // Only a shared server may ask each person to sign in (its scope is set at creation by an admin, later with Publish).
  const global = server ? server.scope === 'global' : admin && scope === 'global'
  const stdio = f.transport === 'stdio'
  const places = useStdioPlaces(admin, stdio)

  async function save(e: FormEvent) {
    e.preventDefault()
    setError('')
    const built = buildBody(f, server, { hostAllowed: places.hostAllowed })
    setErrors(built.fieldErrors)
    setHeaderErrors(built.headerErrors)
    setEnvErrors(built.envErrors)
    if ([built.fieldErrors, built.headerErrors, built.envErrors].some((e) => Object.keys(e).length)) {
      setError('Some values need your attention.')
      return
    }
    setSaving(true)
    try {
      if (server) await ok(api.PUT('/api/v1/mcp-servers/{id}', { params: { path: { id: server.id } }, body: built.body }))
      else await ok(api.POST('/api/v1/mcp-servers', { body: admin ? { ...built.body, scope } : built.body }))
      await followMCPServers(qc)
      onDone()
    } catch (err) {
      const { rows, envRows, rest } = splitFieldErrors(err instanceof ApiError ? err.fields : {}, { headers: built.rowOf, env: built.envRowOf })
      setErrors(rest)
      setHeaderErrors(rows)
      setEnvErrors(envRows)
      setError(errorText(err))
    } finally {
      setSaving(false)
    }
  }

  async function clearSignIn() {
    if (!server) return
    setError('')
    setClearing(true)
    try {
      await ok(api.DELETE('/api/v1/mcp-servers/{id}/oauth-token', { params: { path: { id: server.id } } }))
      await followMCPServers(qc)
    } catch (err) {
      setError(errorText(err))
    } finally {
      setClearing(false)
    }
  }

  const stray = Object.entries(errors).filter(([k]) => !KNOWN.has(k))
  const title = server ? `Edit ${server.name}` : 'New MCP server'
  return (
    <form className="card form" onSubmit={save} aria-label={title}>
      <h2>{title}</h2>
      <div className="grid2">
        <Field label="Name" hint="Prefixes its tools (name__tool): letters, digits, '-' and single '_'; unique on this server" error={errors.name}>{(id) => (
          <input id={id} value={f.name} onChange={(e) => set('name', e.target.value)} required maxLength={40} spellCheck={false} />
        )}</Field>
        <TransportChoice value={f.transport} onChange={(t) => set('transport', t)} error={errors['config.transport']} />
        {!stdio && (
          <>
            <Field label="Endpoint" hint="The server's streamable HTTP endpoint" error={errors['config.endpoint']}>{(id) => (
              <input id={id} value={f.endpoint} placeholder="https://mcp.example.com/mcp" onChange={(e) => set('endpoint', e.target.value)} required spellCheck={false} />
            )}</Field>
            <Field label="Authentication" error={errors['config.auth_mode']}>{(id) => (
              <select id={id} value={f.authMode} onChange={(e) => set('authMode', e.target.value as AuthMode)}>
                <option value="header">Headers only</option>
                <option value="oauth">OAuth sign-in</option>
              </select>
            )}</Field>
          </>
        )}
        {!server && admin && (
          <Field label="Scope" hint="Global: every user sees it and may give its tools to agents" error={errors.scope}>{(id) => (
            <select id={id} value={scope} onChange={(e) => setScope(e.target.value as 'private' | 'global')}>
              <option value="private">private</option>
              <option value="global">global</option>
            </select>
          )}</Field>
        )}
      </div>
      <Field label="Enabled" inline hint="A disabled server is disconnected: agents go without its tools" error={errors.enabled}>{(id) => (
        <input id={id} type="checkbox" checked={f.enabled} onChange={(e) => set('enabled', e.target.checked)} />
      )}</Field>
      {stdio && <MCPStdioFields f={f} keepEnv={envKeepable(f, server)} set={set} errors={errors} envErrors={envErrors} hostAllowed={places.hostAllowed} projects={places.projects} />}
      {!stdio && f.authMode === 'oauth' && (
        <fieldset className="subgroup" aria-label="OAuth">
          <legend>OAuth</legend>
          <div className="grid2">
            <Field label="Client ID" hint="A pre-registered client; empty registers one with the server" error={errors['config.oauth_client_id']}>{(id) => (
              <input id={id} value={f.clientId} onChange={(e) => set('clientId', e.target.value)} spellCheck={false} />
            )}</Field>
            <Field label="Client secret" error={errors['config.oauth_client_secret']}
              hint={stored && !keepSecret ? 'The endpoint or client changed: enter the secret again, or clear it' : 'Write-only: stored sealed, never shown again'}>{(id) => (
              <ClientSecret id={id} edit={f.secret} stored={stored} keepable={keepSecret} onChange={(v) => set('secret', v)} />
            )}</Field>
          </div>
          <Field label="Scopes" hint="Separated by spaces or commas; empty asks for what the server advertises" error={errors['config.oauth_scopes']}>{(id) => (
            <input id={id} value={f.scopes} onChange={(e) => set('scopes', e.target.value)} spellCheck={false} />
          )}</Field>
          {(global || f.perPerson) && (
            <Field label="Who signs in" error={errors['config.per_person_auth']}
              hint={f.perPerson
                ? 'Everyone connects their own account; a run uses the sign-in of the person it runs for. Switching drops the stored sign-ins.'
                : 'One account (a service account) serves everyone who uses the server. Switching drops the stored sign-in.'}>{(id) => (
              <select id={id} value={f.perPerson ? 'personal' : 'shared'} onChange={(e) => set('perPerson', e.target.value === 'personal')}>
                <option value="shared">One shared sign-in</option>
                <option value="personal">Each person signs in</option>
              </select>
            )}</Field>
          )}
          {signedIn && (
            <div className="inline">
              <span className="muted small">A sign-in is stored.</span>
              <button type="button" className="btn btn-ghost btn-sm" disabled={clearing} onClick={clearSignIn}>{clearing ? 'Clearing…' : 'Clear sign-in'}</button>
            </div>
          )}
        </fieldset>
      )}
      {!stdio && (
        <SecretRowsEditor legend="Headers" noun="Header" namePlaceholder="Authorization" rows={f.headers} errors={headerErrors} keepable={keepHeaders}
          onChange={(rows) => set('headers', rows)}
          intro={keepHeaders
            ? 'Sent with every request to the server (an API key, a bearer token). Values are write-only: stored sealed and never shown again.'
            : 'The endpoint changed: stored values are not sent to a new endpoint — enter each again, or remove the header.'} />
      )}
      {errors['config.headers'] && <p className="error-text">{errors['config.headers']}</p>}
      {stray.map(([k, v]) => <p key={k} className="error-text">{k}: {v}</p>)}
      {error && <p className="error-text" role="alert">{error}</p>}
      <div className="form-actions">
        <button className="btn btn-primary" disabled={saving}>{saving ? 'Saving…' : 'Save'}</button>
        <button type="button" className="btn btn-ghost" onClick={onDone}>Cancel</button>
      </div>
    </form>
  )
}

/** The client secret: the usual keep / replace / clear, except that a secret that may not be kept must be entered again or cleared. */
function ClientSecret({ id, edit, stored, keepable, onChange }: { id: string; edit: SecretEdit; stored: boolean; keepable: boolean; onChange: (e: SecretEdit) => void }) {
  if (stored && !keepable && edit.mode !== 'clear') {
    return (
      <span className="inline secret">
        <input id={id} type="password" autoComplete="off" value={edit.mode === 'replace' ? edit.value : ''} placeholder="enter it again"
          onChange={(e) => onChange({ mode: 'replace', value: e.target.value })} />
        <button type="button" className="btn btn-ghost btn-sm" onClick={() => onChange({ mode: 'clear', value: '' })}>Clear</button>
      </span>
    )
  }
  return <SecretInput id={id} edit={edit} stored={stored} existing={stored} onChange={onChange} />
}
