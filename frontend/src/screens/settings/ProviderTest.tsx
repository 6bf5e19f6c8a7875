import { useCallback, useState } from 'react'
import { api, errorText, ok, type Schemas } from '../../lib/api'

export type ProviderTestView = Schemas['ProviderTestView']

/** One provider's connection test: asked, answered (ok or the vendor's refusal), or not answered at all. */
export type ProviderTestState = { status: 'running' } | { status: 'done'; view: ProviderTestView } | { status: 'failed'; error: string }

/** A test's answer in words: "Connected · 123 ms · 7 models", or the vendor's error led by its class. */
export function describeTest(v: ProviderTestView): string {
  if (v.ok) return `Connected · ${v.latency_ms} ms · ${v.models} model${v.models === 1 ? '' : 's'}`
  return `Not connected${v.kind ? ` (${v.kind})` : ''}: ${v.error || 'the provider gave no reason'}`
}

/**
 * Connection tests by provider id: test(id) makes one uncached call to the
 * vendor (POST /providers/{id}/test) and keeps the answer to show; a test
 * the server itself refuses (the provider gone, its config unusable) is
 * kept as that refusal.
 */
export function useProviderTests() {
  const [results, setResults] = useState<Record<string, ProviderTestState>>({})
  const test = useCallback(async (id: string) => {
    setResults((r) => ({ ...r, [id]: { status: 'running' } }))
    try {
      const view = await ok(api.POST('/api/v1/providers/{id}/test', { params: { path: { id } } }))
      setResults((r) => ({ ...r, [id]: { status: 'done', view } }))
    } catch (err) {
      setResults((r) => ({ ...r, [id]: { status: 'failed', error: `Not tested: ${errorText(err)}` } }))
    }
  }, [])
  return { results, test }
}

/** A test's result, in a live region so that a screen reader hears the answer when it comes. */
export function ProviderTestResult({ state, id }: { state?: ProviderTestState; id?: string }) {
  let shown = null
  if (state?.status === 'running') shown = <span className="muted">Testing the connection…</span>
  else if (state?.status === 'failed') shown = <span className="error-text">{state.error}</span>
  else if (state?.status === 'done') shown = <span className={state.view.ok ? 'ok-text' : 'error-text'}>{describeTest(state.view)}</span>
  return <div id={id} className="provider-test small" role="status" data-test-result={state?.status === 'done' ? (state.view.ok ? 'ok' : 'error') : state?.status}>{shown}</div>
}
