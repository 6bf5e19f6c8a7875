import { useRef, useState, type FormEvent, type KeyboardEvent, type Ref } from 'react'
import { Avatar } from '../../components/Avatar'
import { Icon } from '../../components/Icon'
import { JsonBlock } from '../../components/JsonBlock'
import { Markdown } from '../../components/Markdown'
import type { Agent } from '../../lib/api'
import type { MessageImage } from '../../lib/attachments'
import type { AssistantItem, CompactionItem, NoteItem, ReasoningItem, Siblings, TaskNoticeItem, TriggerFiredItem, UnknownItem, UserItem, WorkflowStartItem } from '../../timeline/model'
import { navigate } from '../../lib/router'
import { openTask } from '../inspector/inspectorState'
import { useConversationTasks } from '../tasks/TaskContext'
import { TaskChip } from '../tasks/TaskControls'
import { MessageImages } from './MessageImages'

export interface MessageActions {
  onFork?: () => void
  onRegenerate?: () => void
  /** Sends an edited copy of a user message as a new version of it; resolves whether it was sent. */
  onEdit?: (text: string) => Promise<boolean>
}

function Actions({ text, actions, onEditStart, editRef }: { text: string; actions: MessageActions; onEditStart?: () => void; editRef?: Ref<HTMLButtonElement> }) {
  const [copied, setCopied] = useState(false)
  return (
    <div className="msg-actions">
      <button className="icon-btn" title={copied ? 'Copied' : 'Copy'} aria-label="Copy message" onClick={() => navigator.clipboard?.writeText(text).then(() => setCopied(true))}>
        <Icon name={copied ? 'check' : 'copy'} size={14} />
      </button>
      {onEditStart && (
        <button ref={editRef} className="icon-btn" title="Edit" aria-label="Edit message" onClick={onEditStart}>
          <Icon name="edit" size={14} />
        </button>
      )}
      {actions.onRegenerate && (
        <button className="icon-btn" title="Regenerate" aria-label="Regenerate the answer" onClick={actions.onRegenerate}>
          <Icon name="refresh" size={14} />
        </button>
      )}
      {actions.onFork && (
        <button className="icon-btn" title="Fork from here" aria-label="Fork from this message" onClick={actions.onFork}>
          <Icon name="fork" size={14} />
        </button>
      )}
    </div>
  )
}

export function UserMessage({ item, actions }: { item: UserItem; actions: MessageActions }) {
  const [editing, setEditing] = useState(false)
  const editButton = useRef<HTMLButtonElement>(null)
  const onEdit = actions.onEdit
  if (editing && onEdit) {
    return (
      <div className="msg msg-user editing" data-entry-id={item.entryId}>
        <EditMessage text={item.text} images={item.images} onSend={onEdit}
          onDone={(sent) => {
            setEditing(false)
            // Cancelled, focus goes back where it was; sent, the new version takes the screen.
            if (!sent) requestAnimationFrame(() => editButton.current?.focus())
          }} />
      </div>
    )
  }
  return (
    <div className="msg msg-user" data-entry-id={item.entryId}>
      <span className="visually-hidden">You said:</span>
      {item.images?.length ? <MessageImages images={item.images} /> : null}
      {(item.text || !item.images?.length) && <div className="bubble">{item.text}</div>}
      <Actions text={item.text} actions={actions} onEditStart={onEdit && (() => setEditing(true))} editRef={editButton} />
    </div>
  )
}

/** A user message turned into a textarea: Save & send makes it a new version of the message, Cancel (or Esc) leaves it. */
function EditMessage({ text, images, onSend, onDone }: { text: string; images?: MessageImage[]; onSend: (text: string) => Promise<boolean>; onDone: (sent: boolean) => void }) {
  const [value, setValue] = useState(text)
  const [sending, setSending] = useState(false)
  const changed = value.trim() !== '' && value.trim() !== text.trim()

  async function submit(e?: FormEvent) {
    e?.preventDefault()
    if (!changed || sending) return
    setSending(true)
    const sent = await onSend(value.trim())
    setSending(false)
    if (sent) onDone(true)
  }

  function onKey(e: KeyboardEvent<HTMLTextAreaElement>) {
    if (e.key === 'Escape') {
      // Handled here: the conversation's Esc shortcut must not see it.
      e.preventDefault()
      onDone(false)
    } else if (e.key === 'Enter' && !e.shiftKey && !e.nativeEvent.isComposing) {
      e.preventDefault()
      void submit()
    }
  }

  return (
    <form className="edit-message" onSubmit={submit} aria-label="Edit your message">
      {images?.length ? <MessageImages images={images} /> : null}
      <textarea aria-label="Edited message" value={value} autoFocus rows={Math.min(12, Math.max(2, value.split('\n').length))}
        onChange={(e) => setValue(e.target.value)} onKeyDown={onKey}
        onFocus={(e) => e.currentTarget.setSelectionRange(e.currentTarget.value.length, e.currentTarget.value.length)} />
      <div className="edit-actions">
        <span className="muted small">
          Sending starts a new version of this message{images?.length ? ', with its images' : ''}; the old one stays switchable.
        </span>
        <span className="grow" />
        <button type="button" className="btn btn-sm" onClick={() => onDone(false)}>Cancel</button>
        <button type="submit" className="btn btn-primary btn-sm" disabled={!changed || sending}>{sending ? 'Sending…' : 'Save & send'}</button>
      </div>
    </form>
  )
}

export function AssistantMessage({ item, agent, actions }: { item: AssistantItem; agent?: Agent; actions: MessageActions }) {
  return (
    <div className={`msg msg-assistant${item.streaming ? ' streaming' : ''}`} data-entry-id={item.entryId}>
      <Avatar agent={agent} name="Assistant" />
      <div className="msg-body">
        <span className="visually-hidden">{agent?.name || 'The assistant'} said:</span>
        {item.label && <div className="msg-label">{item.label}</div>}
        <Markdown text={item.text} />
        {!item.streaming && <Actions text={item.text} actions={actions} />}
      </div>
    </div>
  )
}

export function Reasoning({ item }: { item: ReasoningItem }) {
  return (
    <details className="reasoning" open={item.streaming || undefined}>
      <summary>{item.streaming ? 'Thinking…' : 'Thought'}</summary>
      <div className="reasoning-text">{item.text}</div>
    </details>
  )
}

/**
 * A run's note: an error, a diagnostic, a cancellation; the ending of a
 * failed or stopped exchange without an answer offers Regenerate. A run
 * refused for a budget says so in its title and leads to Your usage, where
 * the budget and when it resets are shown; regenerating would only be
 * refused again.
 */
export function Note({ item, actions }: { item: NoteItem; actions?: MessageActions }) {
  const budget = item.code === 'budget_exceeded'
  return (
    <div className={`note note-${item.tone}`} role={item.tone === 'error' ? 'alert' : 'note'} data-entry-id={item.entryId}>
      <div className="note-head">
        <span className="note-title">{budget ? 'A budget is used up' : item.title}</span>
        {item.code && <code className="code-badge">{item.code}</code>}
        {actions?.onRegenerate && !budget && (
          <button className="btn btn-sm note-action" aria-label="Regenerate the answer" onClick={actions.onRegenerate}>
            <Icon name="refresh" size={14} /> Regenerate
          </button>
        )}
      </div>
      {item.text && <div className="note-text">{item.text}</div>}
      {budget && (
        <div className="note-link">
          <a href="/usage/me" onClick={(e) => { e.preventDefault(); navigate('/usage/me') }}>Your usage</a>
          <span className="muted small"> — your budgets, what they have used and when they reset</span>
        </div>
      )}
      {item.details && Object.keys(item.details).length > 0 && (
        <dl className="note-details">
          {Object.entries(item.details).map(([k, v]) => (
            <div key={k}><dt>{k}</dt><dd>{v}</dd></div>
          ))}
        </dl>
      )}
    </div>
  )
}

/**
 * Where the conversation was folded: "Conversation compacted · ~12.3k → ~2.1k",
 * opening to the summary the model reads in place of what came before.
 */
export function Compaction({ item }: { item: CompactionItem }) {
  if (item.pending) return <div className="compaction compaction-pending muted" role="status">Compacting the conversation…</div>
  return (
    <details className="compaction" data-entry-id={item.entryId}>
      <summary>
        <span className="compaction-title">Conversation compacted</span>
        {item.detail && <span className="muted"> · {item.detail}</span>}
        {item.count ? <span className="muted"> · {item.count} {item.count === 1 ? 'entry' : 'entries'} folded</span> : null}
      </summary>
      {item.summary
        ? <div className="reasoning-text">{item.summary}</div>
        : <div className="muted small">The summary shows once the run has ended.</div>}
    </details>
  )
}

/** A wake-up's input: "Background task results · 2 tasks reported", opening to the text the agent read. */
export function TaskNotice({ item }: { item: TaskNoticeItem }) {
  return (
    <details className="task-notice" data-entry-id={item.entryId}>
      <summary>
        <span className="task-notice-title">{item.title}</span>
        {item.summary && <span className="muted"> · {item.summary}</span>}
      </summary>
      <div className="reasoning-text">{item.text}</div>
    </details>
  )
}

/**
 * A workflow a person started here: "▶ build (alice)", opening the
 * execution's detail in the inspector (its brief, its steps, its
 * transcript), with the execution's status beside it while the
 * conversation lists it.
 */
export function WorkflowStart({ item }: { item: WorkflowStartItem }) {
  const tasks = useConversationTasks()
  const task = item.taskId ? tasks?.byId.get(item.taskId) : undefined
  const label = `▶ ${item.workflow}${item.who ? ` (${item.who})` : ''}`
  return (
    <div className="wf-start" data-entry-id={item.entryId} data-task-id={item.taskId || undefined}>
      {tasks && item.taskId ? (
        <button className="wf-start-chip" title="Open the execution in the inspector" aria-label={`${label}: open the workflow's execution`}
          onClick={() => openTask(tasks.sessionId, item.taskId)}>{label}</button>
      ) : <span className="wf-start-chip">{label}</span>}
      {task && <TaskChip task={task} />}
    </div>
  )
}

/**
 * A trigger asked here: "⚡ nightly asked Reviewer", the label alone. The
 * message after it is the brief (with a webhook's payload); the chip is for
 * people, the model never reads it.
 */
export function TriggerFired({ item }: { item: TriggerFiredItem }) {
  return (
    <div className="wf-start" data-entry-id={item.entryId} data-trigger-id={item.triggerId || undefined}>
      <span className="wf-start-chip trigger-chip" title="A trigger sent the next message">⚡ {item.trigger} asked {item.agent}</span>
    </div>
  )
}

export function Unknown({ item }: { item: UnknownItem }) {
  return (
    <details className="unknown-item">
      <summary>Unrecognised {item.label}</summary>
      <JsonBlock value={item.data} />
    </details>
  )
}

/** "‹ 2 / 3 ›": the attempts at a branch point; switching branches to the attempt's newest entry. */
export function BranchSwitcher({ siblings, disabled, onSwitch, label = 'Answer versions' }: { siblings: Siblings; disabled: boolean; onSwitch: (tip: string) => void; label?: string }) {
  const { index, count, tips } = siblings
  return (
    <div className={`branch-switcher${label === 'Message versions' ? ' branch-switcher-user' : ''}`} role="group" aria-label={label}>
      <button className="icon-btn" aria-label="Previous version" disabled={disabled || index <= 0} onClick={() => onSwitch(tips[index - 1])}>‹</button>
      <span className="branch-count">{index + 1} / {count}</span>
      <button className="icon-btn" aria-label="Next version" disabled={disabled || index >= count - 1} onClick={() => onSwitch(tips[index + 1])}>›</button>
    </div>
  )
}
