import { useState } from 'react'
import { Avatar } from '../../components/Avatar'
import { Icon } from '../../components/Icon'
import { JsonBlock } from '../../components/JsonBlock'
import { Markdown } from '../../components/Markdown'
import type { Agent } from '../../lib/api'
import type { AssistantItem, CompactionItem, NoteItem, ReasoningItem, Siblings, TaskNoticeItem, UnknownItem, UserItem } from '../../timeline/model'
import { MessageImages } from './MessageImages'

export interface MessageActions {
  onFork?: () => void
  onRegenerate?: () => void
}

function Actions({ text, actions }: { text: string; actions: MessageActions }) {
  const [copied, setCopied] = useState(false)
  return (
    <div className="msg-actions">
      <button className="icon-btn" title="Copy" aria-label="Copy message" onClick={() => navigator.clipboard?.writeText(text).then(() => setCopied(true))}>
        <Icon name={copied ? 'check' : 'copy'} size={14} />
      </button>
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
  return (
    <div className="msg msg-user" data-entry-id={item.entryId}>
      {item.images?.length ? <MessageImages images={item.images} /> : null}
      {(item.text || !item.images?.length) && <div className="bubble">{item.text}</div>}
      <Actions text={item.text} actions={actions} />
    </div>
  )
}

export function AssistantMessage({ item, agent, actions }: { item: AssistantItem; agent?: Agent; actions: MessageActions }) {
  return (
    <div className={`msg msg-assistant${item.streaming ? ' streaming' : ''}`} data-entry-id={item.entryId}>
      <Avatar agent={agent} name="Assistant" />
      <div className="msg-body">
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

export function Note({ item }: { item: NoteItem }) {
  return (
    <div className={`note note-${item.tone}`} role={item.tone === 'error' ? 'alert' : 'note'}>
      <div className="note-head">
        <span className="note-title">{item.title}</span>
        {item.code && <code className="code-badge">{item.code}</code>}
      </div>
      {item.text && <div className="note-text">{item.text}</div>}
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

export function Unknown({ item }: { item: UnknownItem }) {
  return (
    <details className="unknown-item">
      <summary>Unrecognised {item.label}</summary>
      <JsonBlock value={item.data} />
    </details>
  )
}

/** "‹ 2 / 3 ›": the attempts at a branch point; switching branches to the attempt's newest entry. */
export function BranchSwitcher({ siblings, disabled, onSwitch }: { siblings: Siblings; disabled: boolean; onSwitch: (tip: string) => void }) {
  const { index, count, tips } = siblings
  return (
    <div className="branch-switcher" role="group" aria-label="Answer versions">
      <button className="icon-btn" aria-label="Previous version" disabled={disabled || index <= 0} onClick={() => onSwitch(tips[index - 1])}>‹</button>
      <span className="branch-count">{index + 1} / {count}</span>
      <button className="icon-btn" aria-label="Next version" disabled={disabled || index >= count - 1} onClick={() => onSwitch(tips[index + 1])}>›</button>
    </div>
  )
}
