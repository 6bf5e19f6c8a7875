// MCP servers as the API reads them, and openapi-fetch answers, for the
// component tests of the MCP panel and the agent form's tool picker.
import { MASK, type MCPServer, type User } from '../lib/api'

export const member: User = { id: 'u1', username: 'ann', role: 'member', bootstrap: false, disabled: false, has_password: true, created_at: '', updated_at: '' }
export const admin: User = { ...member, id: 'u9', username: 'root', role: 'admin' }

export const echoTool = { name: 'calc__echo', tool: 'echo', title: '', description: 'Echoes back the input', annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true } }
export const addTool = { name: 'calc__add', tool: 'add', title: 'Add numbers', description: 'Adds two numbers', annotations: { readOnlyHint: true, openWorldHint: false } }
export const wipeTool = { name: 'calc__wipe', tool: 'wipe', title: '', description: 'Forgets everything', annotations: { readOnlyHint: false, destructiveHint: true } }

/** A connected header-auth server of member's, with one stored header (reads carry the stdio fields empty). */
export function mcpServer(over: Partial<MCPServer> = {}, config: Partial<MCPServer['config']> = {}): MCPServer {
  const c: MCPServer['config'] = {
    endpoint: 'https://calc.example/mcp', headers: { 'X-Api-Key': MASK }, auth_mode: 'header', oauth_client_id: '', oauth_client_secret: '', oauth_scopes: [], per_person_auth: false,
    transport: 'http', command: '', args: [], env: {}, project_id: '', ...config,
  }
  return {
    id: 's1', name: 'calc', enabled: true, scope: 'private', owner_id: member.id, status: 'connected', last_error: '', has_oauth_token: false,
    tools: [echoTool, addTool], created_at: '', updated_at: '',
    ...over,
    config: c,
  }
}

/** A connected stdio server (a local program, one stored variable) on this server's host. */
export const stdioServer = (over: Partial<MCPServer> = {}, config: Partial<MCPServer['config']> = {}) =>
  mcpServer({ name: 'local', ...over }, {
    transport: 'stdio', endpoint: '', headers: {}, command: 'npx', args: ['-y', '@modelcontextprotocol/server-everything', 'stdio'], env: { API_KEY: MASK }, ...config,
  })

/** The same server signed in over OAuth with a stored client secret. */
export const oauthServer = (over: Partial<MCPServer> = {}) =>
  mcpServer({ has_oauth_token: true, ...over }, { auth_mode: 'oauth', oauth_client_id: 'workbench', oauth_client_secret: MASK, oauth_scopes: ['tools.read', 'tools.call'] })

/** What an openapi-fetch call resolves to: the data, or the error envelope with its status. */
export function answer(status: number, body?: unknown) {
  const failed = status >= 400
  return Promise.resolve({ data: failed ? undefined : body, error: failed ? body : undefined, response: { ok: !failed, status } as Response })
}

export const refusal = (status: number, code: string, message: string, fields?: Record<string, string>) => answer(status, { error: { code, message, fields } })
