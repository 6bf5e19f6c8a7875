// The first-run screen's rules, apart from its looks: when it shows, what
// it names things, what a failed connection means in people's words, and
// how a provider is saved, proved and — when it fails — taken back, so an
// error leaves the workbench as it was.
import { api, ApiError, errorText, ok, type Provider, type Session } from '../../lib/api'
import { startRun } from './actions'

/** The name of the agent the first-run screen makes. */
export const DEFAULT_AGENT_NAME = 'Assistant'

/**
 * Whether the start screen is the first-run screen: the agent list has
 * loaded and holds nothing the person could chat with. The list is every
 * agent the caller can see, shared ones included, so a member of a team
 * whose admin shared agents never sees it; a list that failed to load is
 * not "empty" either.
 */
export function needsOnboarding(agents: readonly unknown[] | undefined): boolean {
  return agents !== undefined && agents.length === 0
}

/** base, or base with the first free number after it ("Assistant 2"), compared as the server does (case aside). */
export function uniqueName(base: string, taken: readonly string[]): string {
  const used = new Set(taken.map((n) => n.toLowerCase()))
  if (!used.has(base.toLowerCase())) return base
  for (let i = 2; ; i++) if (!used.has(`${base} ${i}`.toLowerCase())) return `${base} ${i}`
}

/** What the person fills in about a new provider. */
export interface ProviderForm {
  type: string
  baseURL: string
  apiKey: string
}

/** The vendors' own names for their official endpoints. */
const VENDORS: Record<string, string> = { openai: 'OpenAI', anthropic: 'Anthropic' }

/** The name a new provider is saved under: the vendor for its official endpoint, else the host it points at. */
export function providerName(type: string, baseURL: string): string {
  const url = baseURL.trim()
  if (!url) return VENDORS[type] ?? type
  try {
    return new URL(url).host || url
  } catch {
    return url
  }
}

/** Where a provider is, in words: its base URL's host, or the vendor for the official endpoint. */
export function whereIs(type: string, baseURL: string): string {
  return baseURL.trim() ? providerName(type, baseURL) : `${VENDORS[type] ?? type}'s official endpoint`
}

/** The fields an error belongs next to; 'form' is the screen's own line. */
export type ErrorField = 'provider' | 'type' | 'base_url' | 'api_key' | 'model' | 'message' | 'form'
export type FieldErrors = Partial<Record<ErrorField, string>>

/** What the form says before anything is sent: a base URL that is not one, or no way to reach an official endpoint. */
export function checkProviderForm(f: ProviderForm): FieldErrors {
  const url = f.baseURL.trim()
  if (url) {
    let u: URL | undefined
    try {
      u = new URL(url)
    } catch {
      // said below
    }
    if (!u || (u.protocol !== 'http:' && u.protocol !== 'https:')) {
      return { base_url: 'Enter the address as a full URL, such as http://localhost:11434/v1.' }
    }
    return {}
  }
  if (!f.apiKey.trim()) return { api_key: `Enter your ${VENDORS[f.type] ?? f.type} API key, or a base URL for a server that needs none.` }
  return {}
}

/** How a provider answered its connection test (POST /providers/{id}/test). */
export interface TestAnswer {
  ok: boolean
  models: number
  kind?: string
  error?: string
}

/** A failed connection in people's words, next to the field to change; listingOnly marks an endpoint that answered but listed nothing, which may be used anyway. */
export interface ConnectionError {
  field: ErrorField
  text: string
  listingOnly?: boolean
}

/**
 * A failed test in people's words. The vendor's own text stays in the
 * server's log: it names transports and status codes, not what to do.
 */
export function connectionError(t: TestAnswer, where: string): ConnectionError {
  switch (t.kind) {
    case 'auth':
      return { field: 'api_key', text: `${where} refused this API key. Check the key, and that its account may use the API.` }
    case 'rate_limited':
      return { field: 'form', text: `${where} is turning requests away for now. Wait a moment and try again.` }
    case 'unavailable':
      return { field: 'base_url', text: `Could not reach ${where}. Check the base URL and that the service is running.` }
    case 'invalid_request':
      return {
        field: 'base_url', listingOnly: true,
        text: `${where} answered, but not with a list of models. Check the base URL (an OpenAI-compatible server's usually ends in /v1), or use it anyway and type the model's name.`,
      }
  }
  if (/outbound policy/i.test(t.error ?? '')) {
    return { field: 'base_url', text: 'This server does not let your account call that address. An admin can allow it in Settings → Global.' }
  }
  return { field: 'form', text: `Could not check ${where}. Try again, or set the provider up in Settings → Providers.` }
}

/** The provider this screen saved and proved, with what it was saved from (the key included, to put it back). */
export interface Held {
  id: string
  name: string
  form: ProviderForm
}

/** What connecting came to: the provider and its models (unlisted when the person chose to type one), or why not. */
export type Connected =
  | { ok: true; held: Held; models: string[]; listed: boolean }
  | { ok: false; errors: FieldErrors; listingOnly?: boolean }

const same = (a: ProviderForm, b: ProviderForm) => a.type === b.type && a.baseURL.trim() === b.baseURL.trim() && a.apiKey === b.apiKey

const bodyOf = (name: string, f: ProviderForm) => ({ name, type: f.type, base_url: f.baseURL.trim(), api_key: f.apiKey.trim() })

/** The server's refusal of a save, next to its field when it names one. */
function refusedSave(err: unknown): FieldErrors {
  if (err instanceof ApiError && Object.keys(err.fields).length) {
    const out: FieldErrors = {}
    for (const [k, v] of Object.entries(err.fields)) out[k === 'base_url' || k === 'api_key' || k === 'type' ? k : 'form'] = v
    return out
  }
  return { form: `The provider could not be saved: ${err instanceof ApiError ? err.message : errorText(err)}` }
}

async function listModels(id: string): Promise<string[]> {
  const r = await ok(api.GET('/api/v1/providers/{id}/models', { params: { path: { id } } }))
  return r.models.map((m) => m.id)
}

/**
 * Saves the provider the form describes and asks it for its models. The
 * provider is saved once: a retry with the same entries reuses it, and
 * changed entries update it in place. A connection that fails takes the
 * save back — a new provider is deleted, an updated one gets its previous
 * entries again — so nothing is left that the screen would not reuse.
 * With anyway, an endpoint that answers but lists no models is kept, for
 * a model name typed by hand. others are the names of the caller's other
 * providers, which a new name must not take.
 */
export async function connectProvider(f: ProviderForm, held: Held | null, others: readonly string[], anyway = false): Promise<Connected> {
  const where = whereIs(f.type, f.baseURL)
  if (held && same(f, held.form) && !anyway) {
    try {
      return { ok: true, held, models: await listModels(held.id), listed: true }
    } catch {
      // The endpoint changed its mind since: test it again below.
    }
  }
  const name = held && providerName(held.form.type, held.form.baseURL) === providerName(f.type, f.baseURL)
    ? held.name : uniqueName(providerName(f.type, f.baseURL), others)
  let saved: Provider
  try {
    saved = held
      ? await ok(api.PUT('/api/v1/providers/{id}', { params: { path: { id: held.id } }, body: bodyOf(name, f) }))
      : await ok(api.POST('/api/v1/providers', { body: bodyOf(name, f) }))
  } catch (err) {
    return { ok: false, errors: refusedSave(err) }
  }
  const next: Held = { id: saved.id, name: saved.name, form: { ...f } }
  let failure: ConnectionError
  try {
    const t = await ok(api.POST('/api/v1/providers/{id}/test', { params: { path: { id: saved.id } } }))
    if (t.ok) return { ok: true, held: next, models: await listModels(saved.id), listed: true }
    failure = connectionError(t, where)
    if (failure.listingOnly && anyway) return { ok: true, held: next, models: [], listed: false }
  } catch (err) {
    failure = { field: 'form', text: `Could not check ${where}: ${err instanceof ApiError ? err.message : errorText(err)}` }
  }
  await undo(saved.id, held)
  return { ok: false, errors: { [failure.field]: failure.text }, listingOnly: failure.listingOnly }
}

/** Takes back a save that did not connect: a new provider goes, an updated one gets its previous entries. */
async function undo(id: string, held: Held | null) {
  try {
    if (held) await ok(api.PUT('/api/v1/providers/{id}', { params: { path: { id } }, body: bodyOf(held.name, held.form) }))
    else await ok(api.DELETE('/api/v1/providers/{id}', { params: { path: { id } } }))
  } catch {
    // Left as it is, the screen still holds it (or a retry makes a new one).
  }
}

/** Asks a provider already saved (the caller's, or one shared with them) for its models; nothing is written. */
export async function connectSaved(p: Provider): Promise<Connected> {
  const where = p.auth_mode === 'chatgpt_login' ? 'The ChatGPT account' : whereIs(p.type, p.base_url)
  try {
    const t = await ok(api.POST('/api/v1/providers/{id}/test', { params: { path: { id: p.id } } }))
    if (!t.ok) {
      const e = connectionError(t, where)
      return { ok: false, errors: { provider: e.text } }
    }
    return { ok: true, held: { id: p.id, name: p.name, form: { type: p.type, baseURL: p.base_url, apiKey: '' } }, models: await listModels(p.id), listed: true }
  } catch (err) {
    return { ok: false, errors: { form: `Could not check ${where}: ${err instanceof ApiError ? err.message : errorText(err)}` } }
  }
}

/**
 * Makes the default agent on the provider and model, opens a conversation
 * with it and starts the first message's run. A step that fails takes the
 * earlier ones back (the agent, the conversation), so a failed send leaves
 * the screen where it was; the error says which step it was.
 */
export async function startFirstChat(providerId: string, model: string, message: string, agentNames: readonly string[]): Promise<Session> {
  const agent = await ok(api.POST('/api/v1/agents', { body: { name: uniqueName(DEFAULT_AGENT_NAME, agentNames), model, provider_id: providerId } }))
  let session: Session | undefined
  try {
    session = await ok(api.POST('/api/v1/sessions', { body: { agent_config_id: agent.id } }))
    await startRun(session.id, message)
    return session
  } catch (err) {
    if (session) await ok(api.DELETE('/api/v1/sessions/{id}', { params: { path: { id: session.id } } })).catch(() => {})
    await ok(api.DELETE('/api/v1/agents/{id}', { params: { path: { id: agent.id } } })).catch(() => {})
    throw err
  }
}
