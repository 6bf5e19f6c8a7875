import { useId, useMemo, useRef, useState, type FormEvent, type KeyboardEvent, type ReactNode } from 'react'
import { Icon } from '../../components/Icon'
import { errorText, type Agent } from '../../lib/api'
import { MAX_INPUT_BYTES } from './actions'
import { AttachImageButton, ComposerAttachments } from './ComposerAttachments'
import { usePendingAttachments } from './pendingAttachments'
import { parseSlash, suggest, type CommandName, type Named, type Parsed, type Suggestion } from './slash'

interface Props {
  /** With onAgent, the agent picker in the bar (a new conversation's; a conversation picks in its header). */
  agents?: Agent[]
  agentId: string
  onAgent?: (id: string) => void
  plan: boolean
  onPlan: (on: boolean) => void
  /** Set while a run is live: sending steers it, and Stop cancels it. */
  liveRun?: { status: string; onStop: () => void; onSteer: (text: string) => void }
  /**
   * attachmentIds: the images uploaded for this message (the text may then
   * be empty); o.plan: sent in plan mode whatever the toggle said (/plan).
   */
  onSend: (text: string, attachmentIds: string[], o?: { plan?: boolean }) => Promise<boolean>
  autoFocus?: boolean
  /** The project control: a picker while unbound, the fixed chip once bound. */
  project?: ReactNode
  /** The workflows /workflow may name; with onStartWorkflow, the command is offered. */
  workflows?: Named[]
  /** Starts a workflow into this conversation with the brief; a refusal is thrown, and shown. */
  onStartWorkflow?: (workflowId: string, brief: string) => Promise<unknown>
}

const encoder = new TextEncoder()

/**
 * Enter sends, Shift+Enter is a newline; a prompt past the socket's 1 MiB
 * frame is refused here. A "/" at the start offers the slash commands in a
 * listbox walked with the arrow keys (Enter or Tab completes, Escape
 * closes); after "/workflow " it offers the workflows by name.
 */
export function Composer({ agents, agentId, onAgent, plan, onPlan, liveRun, onSend, autoFocus, project, workflows, onStartWorkflow }: Props) {
  const [text, setText] = useState('')
  const [error, setError] = useState('')
  const [sending, setSending] = useState(false)
  const box = useRef<HTMLTextAreaElement>(null)
  const uid = useId()
  // Plan mode changes between answers, not during one; a workflow start
  // during one is the server's to refuse, in its words.
  const commands = useMemo<CommandName[]>(() => [...(onStartWorkflow ? ['workflow' as const] : []), ...(liveRun ? [] : ['plan' as const])], [onStartWorkflow, liveRun])
  const named = useMemo(() => workflows ?? [], [workflows])
  // Escape closes the popup until the text changes.
  const [closedFor, setClosedFor] = useState<string | null>(null)
  const [activeIndex, setActiveIndex] = useState(0)
  const suggestions = useMemo(() => (closedFor === text ? [] : suggest(text, commands, named)), [text, commands, named, closedFor])
  const open = suggestions.length > 0
  const active = open ? suggestions[Math.min(activeIndex, suggestions.length - 1)] : undefined
  const listId = `${uid}-slash`
  const optionId = (sg: Suggestion) => `${uid}-${sg.id}`
  const images = usePendingAttachments()
  // Images go with a new message only: a steer is text, so they wait for the next one.
  const withImages = !liveRun && images.ids.length > 0
  const waitingForImages = !liveRun && images.uploading

  function edit(value: string) {
    setText(value)
    setActiveIndex(0)
    if (error) setError('')
  }

  function complete(sg: Suggestion) {
    edit(sg.completion)
    box.current?.focus()
  }

  /** Runs a slash command: an incomplete one says what is missing and sends nothing. */
  async function command(cmd: Parsed<Named>) {
    if (cmd.kind === 'error') {
      setError(cmd.message)
      return
    }
    if (cmd.kind === 'plan') {
      onPlan(true)
      if (!cmd.text && !withImages) {
        setText('')
        return
      }
      setSending(true)
      const sent = await onSend(cmd.text, images.ids, { plan: true })
      setSending(false)
      if (sent) {
        setText('')
        images.clear()
      }
      return
    }
    setSending(true)
    try {
      await onStartWorkflow!(cmd.workflow.id, cmd.brief)
      setText('')
    } catch (err) {
      setError(errorText(err))
    } finally {
      setSending(false)
    }
  }

  async function submit(e?: FormEvent) {
    e?.preventDefault()
    const t = text.trim()
    if ((!t && !withImages) || sending || waitingForImages) return
    const cmd = parseSlash(t, commands, named)
    if (cmd) {
      await command(cmd)
      box.current?.focus()
      return
    }
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
    if (open && active && !e.nativeEvent.isComposing) {
      const n = suggestions.length
      const at = suggestions.indexOf(active)
      if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
        e.preventDefault()
        setActiveIndex((at + (e.key === 'ArrowDown' ? 1 : n - 1)) % n)
        return
      }
      if (e.key === 'Escape') {
        // Handled here: the conversation's Esc (stop the answer) must not see it.
        e.preventDefault()
        setClosedFor(text)
        return
      }
      // Enter on what is already typed in full runs it; otherwise it completes, as Tab does.
      if ((e.key === 'Tab' && !e.shiftKey) || (e.key === 'Enter' && !e.shiftKey && active.completion.trim() !== text.trim())) {
        e.preventDefault()
        complete(active)
        return
      }
    }
    if (e.key === 'Enter' && !e.shiftKey && !e.nativeEvent.isComposing) {
      e.preventDefault()
      void submit()
    }
  }

  const placeholder = liveRun ? 'Steer the running answer… (Enter sends)' : `Message the agent… (Enter sends, Shift+Enter for a new line${commands.length ? ', / for commands' : ''})`
  return (
    <form className="composer" onSubmit={submit}>
      {error && <p className="error-text" role="alert">{error}</p>}
      <div className={images.dragging ? 'composer-box dragging' : 'composer-box'} {...images.dropProps}>
        {open && (
          <ul className="slash-popup" role="listbox" id={listId} aria-label={suggestions[0].id.startsWith('cmd-') ? 'Commands' : 'Workflows'}>
            {suggestions.map((sg) => (
              <li key={sg.id} id={optionId(sg)} role="option" aria-selected={sg === active} className={`slash-option${sg === active ? ' active' : ''}`}
                onMouseDown={(e) => e.preventDefault()} onClick={() => complete(sg)}>
                <span className="slash-label">{sg.label}</span>
                <span className="slash-detail">{sg.detail}</span>
              </li>
            ))}
          </ul>
        )}
        <ComposerAttachments pending={images} />
        <textarea onPaste={images.onPaste} ref={box} rows={Math.min(10, Math.max(2, text.split('\n').length))} value={text} autoFocus={autoFocus} aria-label="Message"
          aria-autocomplete="list" aria-controls={open ? listId : undefined} aria-activedescendant={active ? optionId(active) : undefined}
          placeholder={placeholder} onChange={(e) => edit(e.target.value)} onKeyDown={onKey} />
        <div className="composer-bar">
          {agents && onAgent && (
            <select aria-label="Agent" value={agentId} onChange={(e) => onAgent(e.target.value)} disabled={!!liveRun}>
              {!agents.length && <option value="">No agents yet</option>}
              {agents.map((a) => <option key={a.id} value={a.id}>{a.name}</option>)}
            </select>
          )}
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
