import { useQueryClient } from '@tanstack/react-query'
import { useState } from 'react'
import { errorText, type Approval } from '../../lib/api'
import { approve, reject } from './actions'

/** Approve once, or reject with a reason; the same run resumes either way. */
export function ApprovalControls({ approval }: { approval: Approval }) {
  const qc = useQueryClient()
  const [rejecting, setRejecting] = useState(false)
  const [reason, setReason] = useState('')
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState('')

  async function act(f: () => Promise<void>) {
    setBusy(true)
    setError('')
    try {
      await f()
    } catch (e) {
      setError(errorText(e))
    } finally {
      setBusy(false)
    }
  }

  return (
    <div className="approval" role="group" aria-label={`Approval for ${approval.tool_name}`}>
      <span className="approval-ask">The agent wants to run <b>{approval.tool_name}</b>.</span>
      {rejecting ? (
        <form className="approval-reject" onSubmit={(e) => { e.preventDefault(); void act(() => reject(qc, approval.session_id, approval.id, reason)) }}>
          <input autoFocus placeholder="Why not? (the agent is told)" aria-label="Reason for rejecting" value={reason} onChange={(e) => setReason(e.target.value)} />
          <button className="btn btn-danger btn-sm" disabled={busy}>Reject</button>
          <button type="button" className="btn btn-ghost btn-sm" onClick={() => setRejecting(false)}>Back</button>
        </form>
      ) : (
        <span className="approval-buttons">
          <button className="btn btn-primary btn-sm" disabled={busy} onClick={() => act(() => approve(qc, approval.session_id, approval.id, 'once'))}>Approve once</button>
          <button className="btn btn-ghost btn-sm" disabled={busy} onClick={() => setRejecting(true)}>Reject…</button>
        </span>
      )}
      {error && <span className="error-text">{error}</span>}
    </div>
  )
}
