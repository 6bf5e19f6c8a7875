import { useQueryClient } from '@tanstack/react-query'
import { useState } from 'react'
import { api, errorText, ok, type Sandbox } from '../../lib/api'
import { keys } from '../../lib/queries'

const when = (s: string) => new Date(s).toLocaleString()

/**
 * The host key pinned for a sandbox's ssh:// daemon: the first key it
 * presented, which every later connection must present too. Admins reset
 * it after the host was reinstalled or its key rotated; the next
 * connection then pins the key it meets.
 */
export function SSHHostKey({ sandbox: s, admin }: { sandbox: Sandbox; admin: boolean }) {
  const qc = useQueryClient()
  const [confirming, setConfirming] = useState(false)
  const [note, setNote] = useState('')
  const [error, setError] = useState('')
  const key = s.ssh_host_key

  async function reset() {
    setConfirming(false)
    setError('')
    setNote('')
    try {
      await ok(api.DELETE('/api/v1/sandboxes/{id}/ssh-host-key', { params: { path: { id: s.id } } }))
      setNote('Forgotten: the next connection pins the key it meets.')
      await qc.invalidateQueries({ queryKey: keys.sandboxes })
    } catch (e) {
      setError(errorText(e))
    }
  }

  return (
    <div className="row-line muted small" data-host-key={key?.fingerprint ?? ''}>
      {key ? (
        <span title={key.public_key}>
          SSH host key <code>{key.type} {key.fingerprint}</code> · pinned {when(key.pinned_at)}
        </span>
      ) : (
        <span>SSH host key: none pinned yet — the next connection pins the key it meets</span>
      )}
      {admin && key && (confirming ? (
        <button className="btn btn-danger btn-xs" autoFocus onBlur={() => setConfirming(false)} onClick={reset}>Forget this key?</button>
      ) : (
        <button className="btn btn-ghost btn-xs" title="After the host was reinstalled or its key rotated: the next connection pins the key it meets"
          onClick={() => setConfirming(true)}>Reset host key</button>
      ))}
      {note && <span role="status">{note}</span>}
      {error && <span className="error-text" role="alert">{error}</span>}
    </div>
  )
}
