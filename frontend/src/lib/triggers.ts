// Triggers as the UI reads them: their label, the request that writes one
// back, how the last fire went, and the signed test delivery a person can
// copy and run. Pure, so it is unit-tested.
import type { Schemas } from './api'

export type Trigger = Schemas['TriggerView']
export type TriggerSecret = Schemas['TriggerSecretView']
export type TriggerRequest = Schemas['TriggerRequest']
export type Fire = Schemas['FireView']

/** The env var the signing example reads the secret from once it is no longer shown. */
export const SECRET_ENV = 'AGENTS_HOOK_SECRET'

/** A trigger's name for people: its name, else what fires it ("cron @daily", "webhook"), as the server names it. */
export function triggerLabel(t: Pick<Trigger, 'name' | 'kind' | 'schedule'>): string {
  if (t.name) return t.name
  return t.kind === 'cron' ? `cron ${t.schedule ?? ''}`.trim() : 'webhook'
}

/** The body a PUT sends to write t back as it is, with over applied (Enable/Disable). */
export function requestOf(t: Trigger, over: Partial<TriggerRequest> = {}): TriggerRequest {
  return {
    name: t.name, kind: t.kind, target: t.target, session_id: t.session_id, brief: t.brief, enabled: t.enabled,
    ...(t.kind === 'cron' ? { schedule: t.schedule ?? '' } : {}),
    ...(t.target === 'workflow' ? { workflow_id: t.workflow_id ?? '' } : { agent_config_id: t.agent_config_id ?? '' }),
    ...over,
  }
}

/** How a trigger last went: it started something, it was refused (why), or it never fired. */
export type LastResult = { kind: 'started'; id: string; at?: string | null } | { kind: 'refused'; error: string; at?: string | null } | { kind: 'never' }

export function lastResult(t: Pick<Trigger, 'last_error' | 'last_started_id' | 'last_fired_at'>): LastResult {
  if (t.last_error) return { kind: 'refused', error: t.last_error, at: t.last_fired_at }
  if (t.last_started_id) return { kind: 'started', id: t.last_started_id, at: t.last_fired_at }
  return { kind: 'never' }
}

/** A value inside single quotes in bash, whatever it holds. */
export const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`

/**
 * A bash snippet that signs and sends a test delivery to hookUrl: the
 * signature is hex HMAC-SHA256(secret, timestamp + "." + body), sent with
 * the timestamp as the server checks it. With the secret (right after
 * creation or rotation) it is embedded; without, the snippet reads it from
 * $AGENTS_HOOK_SECRET.
 */
export function curlExample(hookUrl: string, secret?: string): string {
  return [
    secret ? `SECRET=${shellQuote(secret)}` : `SECRET="$${SECRET_ENV}"`,
    `BODY='{"event":"test"}'`,
    'TS=$(date +%s)',
    `SIG=$(printf '%s.%s' "$TS" "$BODY" | openssl dgst -sha256 -hmac "$SECRET" | sed 's/^.* //')`,
    `curl -sS -X POST ${shellQuote(hookUrl)} -H "X-Timestamp: $TS" -H "X-Signature-256: sha256=$SIG" --data "$BODY"`,
  ].join('\n')
}
