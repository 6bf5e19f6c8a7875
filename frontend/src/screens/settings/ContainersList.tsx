import { useQuery, useQueryClient } from '@tanstack/react-query'
import { useState } from 'react'
import { api, errorText, ok } from '../../lib/api'

/** This server's containers on a sandbox's daemon: the operator's reclaim surface (stop, remove; volumes stay). */
export function ContainersList({ sandboxId }: { sandboxId: string }) {
  const qc = useQueryClient()
  const key = ['sandbox-containers', sandboxId]
  const list = useQuery({ queryKey: key, retry: false, queryFn: () => ok(api.GET('/api/v1/sandboxes/{id}/containers', { params: { path: { id: sandboxId } } })) })
  const [busy, setBusy] = useState('')
  const [error, setError] = useState('')

  async function act(name: string, f: () => Promise<unknown>) {
    setBusy(name)
    setError('')
    try {
      await f()
    } catch (e) {
      setError(errorText(e))
    } finally {
      setBusy('')
      await qc.invalidateQueries({ queryKey: key })
    }
  }
  const path = (name: string) => ({ params: { path: { id: sandboxId, name } } })

  return (
    <div className="containers" aria-label="Containers">
      {list.isLoading && <p className="muted small">Listing containers…</p>}
      {list.isError && <p className="error-text" role="alert">{errorText(list.error)}</p>}
      {list.data?.length === 0 && <p className="muted small">No containers on this daemon.</p>}
      {!!list.data?.length && (
        <table className="table">
          <thead><tr><th>Container</th><th>Project</th><th>State</th><th>Image</th><th /></tr></thead>
          <tbody>
            {list.data.map((c) => (
              <tr key={c.name} data-container={c.name}>
                <td><code>{c.name}</code></td>
                <td><code className="small">{c.project_id || '—'}</code></td>
                <td><span className={`pill${c.state === 'running' ? ' pill-ok' : ''}`}>{c.state}</span></td>
                <td className="small">{c.image}</td>
                <td className="actions">
                  {c.state === 'running' && (
                    <button className="btn btn-ghost btn-xs" disabled={!!busy} onClick={() => act(c.name, () => ok(api.POST('/api/v1/sandboxes/{id}/containers/{name}/stop', path(c.name))))}>Stop</button>
                  )}
                  <button className="btn btn-danger btn-xs" disabled={!!busy} onClick={() => act(c.name, () => ok(api.DELETE('/api/v1/sandboxes/{id}/containers/{name}', path(c.name))))}>Remove</button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {error && <p className="error-text" role="alert">{error}</p>}
      <button className="btn btn-ghost btn-xs" onClick={() => void list.refetch()}>Refresh</button>
    </div>
  )
}
