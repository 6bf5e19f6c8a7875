import { useQueryClient } from '@tanstack/react-query'
import { useState } from 'react'
import { errorText, type Approval } from '../../lib/api'
import { approve, reject } from './actions'
import { WorkflowPreviewView } from './WorkflowPreviewView'

/** The shell command an exec_command approval is about. */
function commandOf(args: unknown): string {
  try {
    const v = typeof args === 'string' ? JSON.parse(args) : args
    return typeof v?.cmd === 'string' ? v.cmd : ''
  } catch {
    return ''
  }
}

/**
 * Approve, or reject with a reason; the same run resumes either way. A shell
 * command may be trusted further — this exact command, or every command, for
 * the rest of the conversation; a plan is approved or sent back.
 */
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

  const isPlan = approval.tool_name === 'submit_plan'
  const isStep = approval.tool_name === 'workflow_step'
  const command = approval.tool_name === 'exec_command' ? commandOf(approval.arguments) : ''
  return (
    <div className="approval" role="group" aria-label={`Approval for ${approval.tool_name}`}>
      <span className="approval-ask">
        {isPlan
          ? <>The agent submitted its plan. Approving it ends planning mode and the agent starts the work.</>
          : isStep
          ? <>The workflow waits for you before this step. Approving runs it; rejecting cancels the workflow.</>
          : command
            ? <>The agent wants to run <code className="approval-command">{command}</code></>
            : <>The agent wants to run <b>{approval.tool_name}</b>.</>}
      </span>
      {approval.workflow_preview && <WorkflowPreviewView preview={approval.workflow_preview} />}
      {rejecting ? (
        <form className="approval-reject" onSubmit={(e) => { e.preventDefault(); void act(() => reject(qc, approval.session_id, approval.id, reason)) }}>
          <input autoFocus placeholder={isPlan ? 'What should change? (the agent is told)' : isStep ? 'Why not? (kept with the cancelled workflow)' : 'Why not? (the agent is told)'} aria-label="Reason for rejecting" value={reason} onChange={(e) => setReason(e.target.value)} />
          <button className="btn btn-danger btn-sm" disabled={busy}>{isStep ? 'Reject and cancel' : 'Reject'}</button>
          <button type="button" className="btn btn-ghost btn-sm" onClick={() => setRejecting(false)}>Back</button>
        </form>
      ) : (
        <span className="approval-buttons">
          <button className="btn btn-primary btn-sm" disabled={busy} onClick={() => act(() => approve(qc, approval.session_id, approval.id, 'once'))}>
            {isPlan ? 'Approve plan' : isStep ? 'Run the step' : 'Approve once'}
          </button>
          {command && (
            <>
              <button className="btn btn-ghost btn-sm" disabled={busy} title="Run this exact command unasked for the rest of this conversation"
                onClick={() => act(() => approve(qc, approval.session_id, approval.id, 'same'))}>Always this command</button>
              <button className="btn btn-ghost btn-sm" disabled={busy} title="Run every shell command unasked for the rest of this conversation"
                onClick={() => act(() => approve(qc, approval.session_id, approval.id, 'all'))}>Any command</button>
            </>
          )}
          <button className="btn btn-ghost btn-sm" disabled={busy} onClick={() => setRejecting(true)}>Reject…</button>
        </span>
      )}
      {error && <span className="error-text">{error}</span>}
    </div>
  )
}
