// The typed REST client (openapi-fetch over the generated paths) with the
// bearer token, and the one error type every screen shows.
import createClient, { type Middleware } from 'openapi-fetch'
import type { components, paths } from './apiTypes.gen'
import { bearer, setToken } from './auth'
import { at, BASE } from './base'

export type Schemas = components['schemas']
export type Session = Schemas['SessionView']
export type Entry = Schemas['EntryView']
export type MessageHit = Schemas['MessageHitView']
export type Agent = Schemas['AgentView']
export type Provider = Schemas['ProviderView']
export type User = Schemas['UserView']
export type AuditRecord = Schemas['AuditRecordView']
export type Span = Schemas['SpanPayload']
export type Approval = Schemas['ApprovalView']
export type Sandbox = Schemas['SandboxView']
export type Project = Schemas['ProjectView']
export type EnvVar = Schemas['EnvVar']
export type Container = Schemas['ContainerView']
export type MCPServer = Schemas['MCPServerView']
export type MCPTool = Schemas['MCPToolView']
export type MCPHints = NonNullable<Schemas['MCPAnnotations']>
export type Skill = Schemas['SkillView']
export type Task = Schemas['TaskView']
/** A task as task.updated carries it: a TaskView without the parent's name. */
export type TaskInfo = Schemas['TaskInfo']

/** What every write-only field reads as; sending it back keeps the stored value. */
export const MASK = '********'

/** ApiError is the server's error envelope: a stable code, a message, and per-field messages for validation. */
export class ApiError extends Error {
  constructor(
    public status: number,
    public code: string,
    message: string,
    public fields: Record<string, string> = {},
  ) {
    super(message)
  }
}

const auth: Middleware = {
  onRequest({ request }) {
    const token = bearer()
    if (token) request.headers.set('Authorization', `Bearer ${token}`)
    return request
  },
  onResponse({ response, request }) {
    if (response.status === 401 && !request.url.endsWith('/auth/login')) setToken(null)
    return response
  },
}

export const api = createClient<paths>({ baseUrl: BASE })
api.use(auth)

/**
 * A request openapi-fetch cannot make (a download, a multipart upload) with
 * the bearer token: a 401 signs out as every other call does, and a refusal
 * becomes an ApiError.
 */
export async function authFetch(url: string, init: Omit<RequestInit, 'headers'> & { headers?: Record<string, string> } = {}): Promise<Response> {
  const token = bearer()
  const headers = { ...init.headers, ...(token ? { Authorization: `Bearer ${token}` } : {}) }
  const res = await fetch(url.startsWith('/') ? at(url) : url, { ...init, headers })
  if (res.status === 401) setToken(null)
  if (!res.ok) throw await errorOf(res)
  return res
}

/** The error envelope of a response read without openapi-fetch (a download). */
export async function errorOf(res: Response): Promise<ApiError> {
  const body = await res.json().catch(() => undefined)
  return toError(res.status, body)
}

function toError(status: number, body: unknown): ApiError {
  const e = (body as { error?: { code?: string; message?: string; fields?: Record<string, string> } } | undefined)?.error
  return new ApiError(status, e?.code ?? 'internal', e?.message ?? `request failed (${status})`, e?.fields ?? {})
}

/** Unwraps an openapi-fetch result: the data, or an ApiError. */
export async function ok<T>(p: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await p
  if (!response.ok) throw toError(response.status, error)
  return data as T
}

export function errorText(e: unknown): string {
  if (e instanceof ApiError) return `${e.message} (${e.code})`
  if (e instanceof Error) return e.message
  return String(e)
}
