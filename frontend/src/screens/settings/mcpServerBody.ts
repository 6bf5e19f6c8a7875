// The MCP server form's state → the body the API takes, and the API's
// field errors → the rows they are about. Secrets are write-only: the mask
// keeps a stored value, "" clears it (a header or variable sent "" is
// dropped) — and a stored secret may not be kept for somewhere new: a header
// for a new endpoint, the client secret for a new endpoint or client, a
// variable for a new command line or project — so the person enters it
// again. A server speaks HTTP (an endpoint) or is a local program the
// workbench starts (stdio: a command, its arguments and environment, run on
// this server's host or in a project's sandbox); the body carries only the
// chosen transport's fields.
import { rowUsed, secretRowsOf, type RowErrors, type SecretRow } from '../../components/SecretRowsEditor'
import type { SecretEdit } from '../../components/SecretField'
import { MASK, type MCPServer, type Schemas } from '../../lib/api'

type MCPConfigInput = Schemas['MCPConfigInput']
export type MCPBody = Schemas['MCPServerInput']
export type Transport = Schemas['MCPConfigView']['transport']
export const transportOf = (s: MCPServer): Transport => s.config.transport ?? 'http'

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
  transport: Transport
  command: string
  /** The arguments as typed: one per line. */
  args: string
  env: SecretRow[]
  /** '' = this server's host. */
  projectId: string
}

const rowsOf = (m: Record<string, string> | undefined): SecretRow[] => secretRowsOf(Object.entries(m ?? {}).map(([name, value]) => ({ name, value })))
export const headerRowsOf = (s?: MCPServer): SecretRow[] => rowsOf(s?.config.headers)

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
    transport: s ? transportOf(s) : 'http',
    command: s?.config.command ?? '',
    args: (s?.config.args ?? []).join('\n'),
    env: rowsOf(s?.config.env),
    projectId: s?.config.project_id ?? '',
  }
}

/** The arguments typed one per line: each line one argument as it stands (no shell splitting), blank lines skipped. */
export const argsOf = (text: string): string[] => text.split(/\r?\n/).filter((a) => a.trim() !== '')

/** Whether the stored header values may be kept: the endpoint they were given for is unchanged. */
export const headersKeepable = (f: MCPFormState, s?: MCPServer) => !s || f.endpoint.trim() === s.config.endpoint

/**
 * Whether the stored variable values may be kept: the same program (command
 * and arguments) runs in the same place — a value is never handed to a
 * different program, or into another project's sandbox.
 */
export function envKeepable(f: MCPFormState, s?: MCPServer): boolean {
  if (!s) return true
  const args = argsOf(f.args)
  return transportOf(s) === 'stdio' && f.command.trim() === s.config.command && f.projectId === s.config.project_id &&
    args.length === s.config.args.length && args.every((a, i) => a === s.config.args[i])
}

/** Whether the stored client secret may be kept: same endpoint, same client. */
export const secretKeepable = (f: MCPFormState, s?: MCPServer) => headersKeepable(f, s) && f.clientId === s?.config.oauth_client_id

export const secretStored = (s?: MCPServer) => s?.config.oauth_client_secret === MASK

export const AGAIN_HEADER = 'Enter the value again — the stored one is not sent to a new endpoint — or remove the header'
export const HOST_ADMINS_ONLY = 'Only admins may run a program on this server’s host: pick one of your projects to run it in, or ask an admin'
export const AGAIN_VARIABLE = 'Enter the value again — the stored one is not given to a new command line or project — or remove the variable'
export const AGAIN_SECRET = 'Enter the secret again — the stored one is not sent to a new endpoint or client — or clear it'

export interface Built {
  body: MCPBody
  /** The row each sent header came from, by the name it was sent under. */
  rowOf: Record<string, number>
  /** The same for each sent environment variable. */
  envRowOf: Record<string, number>
  /** What must change before anything is sent. */
  headerErrors: RowErrors
  envErrors: RowErrors
  fieldErrors: Record<string, string>
}

/** What the form knows beyond its own state: whether the caller may run a program on this server's host. */
export interface BuildContext { hostAllowed: boolean }

/** The body to send (PUT replaces the whole server), or the problems that keep it from being sent. */
export function buildBody(f: MCPFormState, s: MCPServer | undefined, ctx: BuildContext): Built {
  const fieldErrors: Record<string, string> = {}
  const body = (config: MCPConfigInput): MCPBody => ({ name: f.name.trim(), enabled: f.enabled, config })
  if (f.transport === 'stdio') {
    const env = sendRows(f.env, { keepable: envKeepable(f, s), noun: 'variable', again: AGAIN_VARIABLE, caseInsensitive: false })
    if (!f.projectId && !ctx.hostAllowed) fieldErrors['config.project_id'] = HOST_ADMINS_ONLY
    const config: MCPConfigInput = {
      transport: 'stdio', command: f.command.trim(), args: argsOf(f.args), env: env.values, project_id: f.projectId,
      endpoint: '', auth_mode: 'header',
    }
    return { body: body(config), rowOf: {}, envRowOf: env.rowOf, headerErrors: {}, envErrors: env.errors, fieldErrors }
  }
  const headers = sendRows(f.headers, { keepable: headersKeepable(f, s), noun: 'header', again: AGAIN_HEADER, caseInsensitive: true })
  const config: MCPConfigInput = { transport: 'http', endpoint: f.endpoint.trim(), headers: headers.values, auth_mode: f.authMode }
  if (f.authMode === 'oauth') {
    config.oauth_client_id = f.clientId.trim()
    config.oauth_client_secret = secretToSend(f, s, fieldErrors)
    config.oauth_scopes = f.scopes.split(/[\s,]+/).filter(Boolean)
    if (f.perPerson) config.per_person_auth = true
  }
  return { body: body(config), rowOf: headers.rowOf, envRowOf: {}, headerErrors: headers.errors, envErrors: {}, fieldErrors }
}

/**
 * The named write-only rows as sent: a stored value kept goes back as the
 * mask — unless it may not be kept (it would go somewhere new), when the
 * row asks for the value again (`again`).
 */
function sendRows(rows: SecretRow[], o: { keepable: boolean; noun: string; again: string; caseInsensitive: boolean }) {
  const values: Record<string, string> = {}
  const rowOf: Record<string, number> = {}
  const errors: RowErrors = {}
  const seen = new Set<string>()
  for (const r of rows.filter(rowUsed)) {
    const name = r.name.trim()
    const folded = o.caseInsensitive ? name.toLowerCase() : name
    if (!name) {
      errors[r.key] = { name: `Name the ${o.noun}` }
      continue
    }
    if (seen.has(folded)) {
      errors[r.key] = { name: o.caseInsensitive ? `Given twice (${o.noun} names are case-insensitive)` : 'Given twice' }
      continue
    }
    seen.add(folded)
    let value = r.edit.value
    if (r.stored && r.edit.mode === 'keep') {
      if (!o.keepable) {
        errors[r.key] = { value: o.again }
        continue
      }
      value = MASK
    } else if (r.stored && !o.keepable && !value) {
      errors[r.key] = { value: o.again }
      continue
    }
    values[name] = value
    rowOf[name] = r.key
  }
  return { values, rowOf, errors }
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

/** Where the API's per-row field errors go: the row each header and each variable was sent from, by name. */
export interface RowsSent { headers: Record<string, number>; env: Record<string, number> }

/**
 * The API's field errors split: per header row (config.headers.<name>), per
 * variable row (config.env.<name>), and the rest by field — a list item's
 * (config.args[2]) on its list.
 */
export function splitFieldErrors(fields: Record<string, string>, sent: RowsSent): { rows: RowErrors; envRows: RowErrors; rest: Record<string, string> } {
  const rows: RowErrors = {}
  const envRows: RowErrors = {}
  const rest: Record<string, string> = {}
  const rowFor = (k: string, prefix: string, of: Record<string, number>) => (k.startsWith(prefix) ? of[k.slice(prefix.length)] : undefined)
  for (const [k, v] of Object.entries(fields)) {
    const header = rowFor(k, 'config.headers.', sent.headers)
    const variable = rowFor(k, 'config.env.', sent.env)
    const item = /^(config\.(?:oauth_scopes|args))\[\d+\]$/.exec(k)
    if (header !== undefined) rows[header] = { ...rows[header], value: v }
    else if (variable !== undefined) envRows[variable] = { ...envRows[variable], value: v }
    else if (item) rest[item[1]] = v
    else rest[k] = v
  }
  return { rows, envRows, rest }
}
