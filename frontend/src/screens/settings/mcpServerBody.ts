// The MCP server form's state → the body the API takes, and the API's
// field errors → the rows they are about. Secrets are write-only: the mask
// keeps a stored value, "" clears it (a header sent "" is dropped) — and a
// stored secret may not be kept for a new endpoint (or, the client secret,
// a new client), so the person enters it again.
import { rowUsed, secretRowsOf, type RowErrors, type SecretRow } from '../../components/SecretRowsEditor'
import type { SecretEdit } from '../../components/SecretField'
import { MASK, type MCPServer, type Schemas } from '../../lib/api'

export type MCPBody = Schemas['MCPServerInput']
export type AuthMode = NonNullable<Schemas['MCPConfigInput']['auth_mode']>

export interface MCPFormState {
  name: string
  enabled: boolean
  endpoint: string
  authMode: AuthMode
  clientId: string
  secret: SecretEdit
  /** The scopes as typed: separated by spaces or commas. */
  scopes: string
  /** Each person signs in with their own account (a global OAuth server only), rather than one shared sign-in. */
  perPerson: boolean
  headers: SecretRow[]
}

export const headerRowsOf = (s?: MCPServer): SecretRow[] =>
  secretRowsOf(Object.entries(s?.config.headers ?? {}).map(([name, value]) => ({ name, value })))

export function initialState(s?: MCPServer): MCPFormState {
  return {
    name: s?.name ?? '',
    enabled: s?.enabled ?? true,
    endpoint: s?.config.endpoint ?? '',
    authMode: s?.config.auth_mode ?? 'header',
    clientId: s?.config.oauth_client_id ?? '',
    secret: s ? { mode: 'keep', value: '' } : { mode: 'replace', value: '' },
    scopes: (s?.config.oauth_scopes ?? []).join(' '),
    perPerson: s?.config.per_person_auth ?? false,
    headers: headerRowsOf(s),
  }
}

/** Whether the stored header values may be kept: the endpoint they were given for is unchanged. */
export const headersKeepable = (f: MCPFormState, s?: MCPServer) => !s || f.endpoint.trim() === s.config.endpoint

/** Whether the stored client secret may be kept: same endpoint, same client. */
export const secretKeepable = (f: MCPFormState, s?: MCPServer) => headersKeepable(f, s) && f.clientId === s?.config.oauth_client_id

export const secretStored = (s?: MCPServer) => s?.config.oauth_client_secret === MASK

export const AGAIN_HEADER = 'Enter the value again — the stored one is not sent to a new endpoint — or remove the header'
export const AGAIN_SECRET = 'Enter the secret again — the stored one is not sent to a new endpoint or client — or clear it'

export interface Built {
  body: MCPBody
  /** The row each sent header came from, by the name it was sent under. */
  rowOf: Record<string, number>
  /** What must change before anything is sent. */
  headerErrors: RowErrors
  fieldErrors: Record<string, string>
}

/** The body to send (PUT replaces the whole server), or the problems that keep it from being sent. */
export function buildBody(f: MCPFormState, s?: MCPServer): Built {
  const keepHeaders = headersKeepable(f, s)
  const headers: Record<string, string> = {}
  const rowOf: Record<string, number> = {}
  const headerErrors: RowErrors = {}
  const fieldErrors: Record<string, string> = {}
  const seen = new Set<string>()
  for (const r of f.headers.filter(rowUsed)) {
    const name = r.name.trim()
    if (!name) {
      headerErrors[r.key] = { name: 'Name the header' }
      continue
    }
    if (seen.has(name.toLowerCase())) {
      headerErrors[r.key] = { name: 'Given twice (header names are case-insensitive)' }
      continue
    }
    seen.add(name.toLowerCase())
    let value = r.edit.value
    if (r.stored && r.edit.mode === 'keep') {
      if (!keepHeaders) {
        headerErrors[r.key] = { value: AGAIN_HEADER }
        continue
      }
      value = MASK
    } else if (r.stored && !keepHeaders && !value) {
      headerErrors[r.key] = { value: AGAIN_HEADER }
      continue
    }
    headers[name] = value
    rowOf[name] = r.key
  }
  const config: MCPBody['config'] = { endpoint: f.endpoint.trim(), headers, auth_mode: f.authMode }
  if (f.authMode === 'oauth') {
    config.oauth_client_id = f.clientId.trim()
    config.oauth_client_secret = secretToSend(f, s, fieldErrors)
    config.oauth_scopes = f.scopes.split(/[\s,]+/).filter(Boolean)
    if (f.perPerson) config.per_person_auth = true
  }
  return { body: { name: f.name.trim(), enabled: f.enabled, config }, rowOf, headerErrors, fieldErrors }
}

function secretToSend(f: MCPFormState, s: MCPServer | undefined, fieldErrors: Record<string, string>): string {
  const stored = secretStored(s)
  const keepable = secretKeepable(f, s)
  switch (f.secret.mode) {
    case 'clear':
      return ''
    case 'keep':
      if (!stored) return ''
      if (!keepable) fieldErrors['config.oauth_client_secret'] = AGAIN_SECRET
      return MASK
    default:
      if (stored && !keepable && !f.secret.value) fieldErrors['config.oauth_client_secret'] = AGAIN_SECRET
      return f.secret.value
  }
}

/** The API's field errors split: per header row (config.headers.<name>), and the rest by field. */
export function splitFieldErrors(fields: Record<string, string>, rowOf: Record<string, number>): { rows: RowErrors; rest: Record<string, string> } {
  const rows: RowErrors = {}
  const rest: Record<string, string> = {}
  const prefix = 'config.headers.'
  for (const [k, v] of Object.entries(fields)) {
    const row = k.startsWith(prefix) ? rowOf[k.slice(prefix.length)] : undefined
    if (row !== undefined) rows[row] = { ...rows[row], value: v }
    else if (/^config\.oauth_scopes\[\d+\]$/.test(k)) rest['config.oauth_scopes'] = v
    else rest[k] = v
  }
  return { rows, rest }
}
