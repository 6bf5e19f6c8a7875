import { useQuery, useQueryClient } from '@tanstack/react-query'
import { useState } from 'react'
import { api, errorText, ok, type Project, type Sandbox } from '../../lib/api'
import { keys } from '../../lib/queries'

const tone: Record<string, string> = { running: 'pill-ok', stopped: 'pill-muted', absent: 'pill-muted' }

/**
 * The project's instance (absent, stopped or running) and the hand
 * controls: start (where a person watches the image pull), stop (deferred
 * while work uses it) and rebuild (only where the sandbox supports it).
 */
export function SandboxState({ project, sandbox, own }: { project: Project; sandbox?: Sandbox; own: boolean }) {
  const qc = useQueryClient()
  const key = keys.projectState(project.id)
  const state = useQuery({ queryKey: key, retry: false, staleTime: 10_000, queryFn: () => ok(api.GET('/api/v1/projects/{id}/sandbox', { params: { path: { id: project.id } } })) })
  const [busy, setBusy] = useState('')
  const [note, setNote] = useState('')
  const [error, setError] = useState('')
  const path = { params: { path: { id: project.id } } }

  async function act(label: string, f: () => Promise<string | void>) {
    setBusy(label)
    setNote('')
    setError('')
    try {
      const n = await f()
      if (n) setNote(n)
    } catch (e) {
      setError(errorText(e))
    } finally {
      setBusy('')
      await qc.invalidateQueries({ queryKey: key })
    }
  }

  const s = state.data?.state
  return (
    <div className="sandbox-state" aria-label={`Sandbox of ${project.name}`}>
      <span className="muted small">Sandbox:</span>
      {state.isLoading && <span className="muted small">checking…</span>}
      {s && <span className={`pill ${tone[s] ?? ''}`} data-state={s}>{s}</span>}
      {state.isError && <span className="error-text small" role="alert">{errorText(state.error)}</span>}
      {busy && <span className="pill pill-run">{busy}…</span>}
      <span className="grow" />
      {own && s !== 'running' && (
        <button className="btn btn-ghost btn-xs" disabled={!!busy} onClick={() => act('Starting', async () => { await ok(api.POST('/api/v1/projects/{id}/sandbox/start', path)) })}>Start</button>
      )}
      {s === 'running' && (
        <button className="btn btn-ghost btn-xs" disabled={!!busy} onClick={() => act('Stopping', async () => {
          const r = await ok(api.POST('/api/v1/projects/{id}/sandbox/stop', path))
          if (!r.stopped) return 'In use by a run or a terminal: it will stop when the current work ends.'
        })}>Stop</button>
      )}
      {sandbox?.supports.rebuild && (
        <button className="btn btn-ghost btn-xs" disabled={!!busy} title="A fresh container from the current image; /workspace stays"
          onClick={() => act('Rebuilding', async () => { await ok(api.POST('/api/v1/projects/{id}/sandbox/rebuild', path)) })}>Rebuild</button>
      )}
      {(note || error) && (
        <p className={note ? 'muted small state-note' : 'error-text small state-note'} role={error ? 'alert' : 'status'}>{error || note}</p>
      )}
    </div>
  )
}
