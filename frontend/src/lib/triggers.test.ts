import { describe, expect, it } from 'vitest'
import { curlExample, lastResult, requestOf, shellQuote, triggerLabel, type Trigger } from './triggers'

const hook: Trigger = {
  id: 'tr1', name: '', kind: 'webhook', target: 'agent', agent_config_id: 'a1', session_id: 's1', brief: 'Summarize it', enabled: true,
  hook_url: 'https://agents.example/hooks/tr1', last_error: '', last_started_id: '', created_at: '', updated_at: '',
}

describe('the signed test delivery', () => {
  it('embeds the secret shown right after creation, signing timestamp + "." + body as the server checks it', () => {
    expect(curlExample('https://agents.example/hooks/tr1', 'whsec_abc123')).toBe([
      "SECRET='whsec_abc123'",
      `BODY='{"event":"test"}'`,
      'TS=$(date +%s)',
      `SIG=$(printf '%s.%s' "$TS" "$BODY" | openssl dgst -sha256 -hmac "$SECRET" | sed 's/^.* //')`,
      `curl -sS -X POST 'https://agents.example/hooks/tr1' -H "X-Timestamp: $TS" -H "X-Signature-256: sha256=$SIG" --data "$BODY"`,
    ].join('\n'))
  })

  it('reads the secret from $AGENTS_HOOK_SECRET once it is no longer shown', () => {
    const text = curlExample('http://127.0.0.1:8080/hooks/tr1')
    expect(text.split('\n')[0]).toBe('SECRET="$AGENTS_HOOK_SECRET"')
    expect(text.split('\n')[4]).toBe(`curl -sS -X POST 'http://127.0.0.1:8080/hooks/tr1' -H "X-Timestamp: $TS" -H "X-Signature-256: sha256=$SIG" --data "$BODY"`)
  })

  it('quotes whatever a value holds for bash', () => {
    expect(shellQuote("it's")).toBe(`'it'\\''s'`)
    expect(curlExample("https://x.example/hooks/a'b", "s'1").split('\n')[0]).toBe(`SECRET='s'\\''1'`)
  })
})

describe('a trigger read for people', () => {
  it('is named by its name, else by what fires it', () => {
    expect(triggerLabel({ name: 'nightly', kind: 'cron', schedule: '@daily' })).toBe('nightly')
    expect(triggerLabel({ name: '', kind: 'cron', schedule: '@daily' })).toBe('cron @daily')
    expect(triggerLabel({ name: '', kind: 'webhook' })).toBe('webhook')
  })

  it('says how it last went: started, refused (why), or never fired', () => {
    expect(lastResult(hook)).toEqual({ kind: 'never' })
    expect(lastResult({ ...hook, last_started_id: 'r9', last_fired_at: '2026-01-01T10:00:00Z' })).toEqual({ kind: 'started', id: 'r9', at: '2026-01-01T10:00:00Z' })
    // A refusal wins over what an earlier fire started.
    expect(lastResult({ ...hook, last_started_id: '', last_error: 'the conversation is busy' })).toMatchObject({ kind: 'refused', error: 'the conversation is busy' })
  })

  it('is written back as it is, the target and kind picking the fields sent', () => {
    expect(requestOf(hook, { enabled: false })).toEqual({ name: '', kind: 'webhook', target: 'agent', session_id: 's1', brief: 'Summarize it', enabled: false, agent_config_id: 'a1' })
    const cron: Trigger = { ...hook, kind: 'cron', schedule: '@every 30m', target: 'workflow', workflow_id: 'w1', agent_config_id: undefined }
    expect(requestOf(cron)).toEqual({ name: '', kind: 'cron', schedule: '@every 30m', target: 'workflow', workflow_id: 'w1', session_id: 's1', brief: 'Summarize it', enabled: true })
  })
})
