import { useQueryClient } from '@tanstack/react-query'
import { useLayoutEffect, useMemo, useRef } from 'react'
import { errorText, type Agent, type Approval } from '../../lib/api'
import { notify } from '../../lib/notices'
import { navigate, sessionPath } from '../../lib/router'
import { callKey } from '../../timeline/keys'
import type { TimelineItem } from '../../timeline/model'
import { BRANCH_ROOT, editAndResend, fork, regenerate, switchBranch, type RunOptions } from './actions'
import { BranchSwitcher, type MessageActions } from './Items'
import { ItemView } from './ItemView'
import { ApprovalCard } from './ToolCard'

interface Props {
  sessionId: string
  items: TimelineItem[]
  agent?: Agent
  approvals: Approval[]
  live: boolean
  runOptions: RunOptions
  /** The entry id of a message to bring into view and mark (a search hit's). */
  target?: string
  hasEarlier: boolean
  loadingEarlier: boolean
  onLoadEarlier: () => void
}

const FOLDED = 'Folded into a summary; the model no longer sees it'

/** The conversation, kept scrolled to the newest while the reader is at the bottom. */
export function Timeline({ sessionId, items, agent, approvals, live, runOptions, target, hasEarlier, loadingEarlier, onLoadEarlier }: Props) {
  const qc = useQueryClient()
  const scroller = useRef<HTMLDivElement>(null)
  const atBottom = useRef(true)
  const prevHeight = useRef(0)
  const keepOffset = useRef(false)
  const shown = useRef<string | undefined>(undefined)

  // A background task's approval is listed here too, but its call is in the
  // task's own transcript, not this one: it is never matched to a card of
  // this conversation (call ids need not be unique across sessions) and is
  // drawn apart, naming its task.
  const byCall = useMemo(() => new Map(approvals.filter((a) => !a.task_id).map((a) => [callKey(a.run_id, a.tool_call_id), a])), [approvals])
  const loose = useMemo(() => {
    const drawn = new Set(items.flatMap((i) => (i.kind === 'tool' ? [callKey(i.runId, i.callId)] : [])))
    return approvals.filter((a) => a.task_id || !drawn.has(callKey(a.run_id, a.tool_call_id)))
  }, [items, approvals])

  useLayoutEffect(() => {
    const el = scroller.current
    if (!el) return
    if (keepOffset.current) {
      // Earlier messages were added above: keep what the reader was looking at.
      el.scrollTop += el.scrollHeight - prevHeight.current
      keepOffset.current = false
    } else if (atBottom.current) el.scrollTop = el.scrollHeight
    prevHeight.current = el.scrollHeight
  }, [items, loose])

  // A target message is scrolled into view once it is drawn; after that the
  // reader scrolls where they like (new messages no longer pull them down).
  useLayoutEffect(() => {
    const el = scroller.current
    if (!el || !target || shown.current === target) return
    const li = el.querySelector<HTMLElement>(`[data-entry-id="${CSS.escape(target)}"]`)
    if (!li) return
    shown.current = target
    li.scrollIntoView({ block: 'center' })
    atBottom.current = false
  }, [items, target])

  function run(f: () => Promise<unknown>) {
    f().catch((e) => notify(errorText(e)))
  }

  // The user message each answer replies to: regenerate branches back to it.
  let lastUser: string | undefined
  // Whether that exchange has an answer offering Regenerate already; one
  // that failed or was stopped before any text offers it on its ending note.
  let answered = false
  const rendered = items.map((item) => {
    const actions: MessageActions = {}
    if (item.entryId && !live && (item.kind === 'user' || item.kind === 'assistant')) {
      const id = item.entryId
      actions.onFork = () => run(async () => navigate(sessionPath((await fork(qc, sessionId, id)).id)))
    }
    if (item.kind === 'user' && item.entryId) {
      lastUser = item.entryId
      answered = false
      // The first message has nothing before it: its edit branches to the
      // root and opens a new first branch. The images go again with the text.
      const parent = item.parentId ?? BRANCH_ROOT
      const attachmentIds = item.images?.map((i) => i.attachmentId)
      if (!live) {
        actions.onEdit = (text) => editAndResend(qc, sessionId, parent, text, { ...runOptions, attachmentIds }).then(() => true, (e) => {
          notify(errorText(e))
          return false
        })
      }
    }
    // What answers a wake-up answers background results, not the person's
    // message before them: there is nothing of theirs to regenerate it from.
    if (item.kind === 'task_notice') lastUser = undefined
    const u = lastUser
    if (item.kind === 'assistant' && item.entryId && u && !live) {
      actions.onRegenerate = () => run(() => regenerate(qc, sessionId, u, runOptions))
      answered = true
    }
    if (item.kind === 'note' && item.ending && u && !answered && !live) {
      actions.onRegenerate = () => run(() => regenerate(qc, sessionId, u, runOptions))
    }
    const switcher = item.siblings && item.siblings.count > 1 && (
      <BranchSwitcher siblings={item.siblings} disabled={live} label={item.kind === 'user' ? 'Message versions' : 'Answer versions'}
        onSwitch={(tip) => run(() => switchBranch(qc, sessionId, tip))} />
    )
    return (
      <li className={`item${item.folded ? ' item-folded' : ''}${target && item.entryId === target ? ' item-target' : ''}`} key={item.key}
        data-kind={item.kind} data-entry-id={item.entryId}
        {...(item.folded ? { title: FOLDED, 'aria-description': FOLDED } : {})}>
        {switcher}
        <ItemView item={item} agent={agent} approval={item.kind === 'tool' ? byCall.get(callKey(item.runId, item.callId)) : undefined} live={live} actions={actions} />
      </li>
    )
  })

  return (
    <div
      className="timeline"
      ref={scroller}
      onScroll={(e) => {
        const el = e.currentTarget
        atBottom.current = el.scrollHeight - el.scrollTop - el.clientHeight < 80
      }}
    >
      {/* The transcript is a list of messages (each says who spoke), for screen readers to move through. */}
      <ol className="timeline-inner" aria-label="Messages">
        {hasEarlier && (
          <li className="load-earlier">
            <button className="btn btn-ghost" disabled={loadingEarlier} onClick={() => { keepOffset.current = true; onLoadEarlier() }}>
              {loadingEarlier ? 'Loading…' : 'Load earlier messages'}
            </button>
          </li>
        )}
        {rendered}
        {loose.map((a) => (
          <li className="item" key={`approval:${a.id}`}><ApprovalCard approval={a} /></li>
        ))}
      </ol>
    </div>
  )
}
