import { useRef, useState, type FormEvent, type KeyboardEvent, type ReactNode } from 'react'
import { Icon } from '../../components/Icon'
import type { Agent } from '../../lib/api'
import { MAX_INPUT_BYTES } from './actions'
import { AttachImageButton, ComposerAttachments } from './ComposerAttachments'
import { usePendingAttachments } from './pendingAttachments'

interface Props {
  agents: Agent[]
  agentId: string
  onAgent: (id: string) => void
  plan: boolean
  onPlan: (on: boolean) => void
  /** Set while a run is live: sending steers it, and Stop cancels it. */
  liveRun?: { status: string; onStop: () => void; onSteer: (text: string) => void }
  /** attachmentIds: the images uploaded for this message (the text may then be empty). */
  onSend: (text: string, attachmentIds: string[]) => Promise<boolean>
  autoFocus?: boolean
  /** The project control: a picker while unbound, the fixed chip once bound. */
  project?: ReactNode
}

const encoder = new TextEncoder()

/** Enter sends, Shift+Enter is a newline; a prompt past the socket's 1 MiB frame is refused here. */
export function Composer({ agents, agentId, onAgent, plan, onPlan, liveRun, onSend, autoFocus, project }: Props) {
  const [text, setText] = useState('')
  const [error, setError] = useState('')
  const [sending, setSending] = useState(false)
  const box = useRef<HTMLTextAreaElement>(null)
  const images = usePendingAttachments()
  // Images go with a new message only: a steer is text, so they wait for the next one.
  const withImages = !liveRun && images.ids.length > 0
  const waitingForImages = !liveRun && images.uploading

  async function submit(e?: FormEvent) {
    e?.preventDefault()
    const t = text.trim()
    if ((!t && !withImages) || sending || waitingForImages) return
    if (encoder.encode(t).length > MAX_INPUT_BYTES) {
      setError('This message is over 1 MiB, the most one message may carry. Shorten it or attach less.')
      return
    }
    setError('')
    if (liveRun) {
      if (!t) return
      liveRun.onSteer(t)
      setText('')
      return
    }
    setSending(true)
    const sent = await onSend(t, images.ids)
    setSending(false)
    if (sent) {
      setText('')
      images.clear()
    }
    box.current?.focus()
  }

  function onKey(e: KeyboardEvent<HTMLTextAreaElement>) {
    if (e.key === 'Enter' && !e.shiftKey && !e.nativeEvent.isComposing) {
      e.preventDefault()
      void submit()
    }
  }

  const placeholder = liveRun ? 'Steer the running answer… (Enter sends)' : 'Message the agent… (Enter sends, Shift+Enter for a new line)'
  return (
    <form className="composer" onSubmit={submit}>
      {error && <p className="error-text" role="alert">{error}</p>}
      <div className={images.dragging ? 'composer-box dragging' : 'composer-box'} {...images.dropProps}>
        <ComposerAttachments pending={images} />
        <textarea onPaste={images.onPaste} ref={box} rows={Math.min(10, Math.max(2, text.split('\n').length))} value={text} autoFocus={autoFocus} aria-label="Message"
          placeholder={placeholder} onChange={(e) => { setText(e.target.value); if (error) setError('') }} onKeyDown={onKey} />
        <div className="composer-bar">
          <select aria-label="Agent" value={agentId} onChange={(e) => onAgent(e.target.value)} disabled={!!liveRun}>
            {!agents.length && <option value="">No agents yet</option>}
            {agents.map((a) => <option key={a.id} value={a.id}>{a.name}</option>)}
          </select>
          <label className="toggle" title="Plan mode: the agent plans before it acts">
            <input type="checkbox" checked={plan} onChange={(e) => onPlan(e.target.checked)} disabled={!!liveRun} /> Plan
          </label>
          {project}
          <AttachImageButton onFiles={images.add} />
          <span className="grow" />
          {liveRun && (
            <button type="button" className="btn btn-danger btn-sm" title="Stop (Esc)" aria-keyshortcuts="Escape" onClick={liveRun.onStop}>
              <Icon name="stop" size={14} /> Stop
            </button>
          )}
          <button className="btn btn-primary btn-sm" disabled={(!text.trim() && !withImages) || sending || waitingForImages || (!liveRun && !agentId)}
            title={waitingForImages ? 'Waiting for the images to upload' : undefined}>
            <Icon name="send" size={14} /> {liveRun ? 'Steer' : 'Send'}
          </button>
        </div>
      </div>
    </form>
  )
}
