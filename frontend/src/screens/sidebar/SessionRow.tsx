import { useQueryClient } from '@tanstack/react-query'
import { useEffect, useRef, useState, type KeyboardEvent } from 'react'
import { Icon } from '../../components/Icon'
import { api, errorText, ok, type Session } from '../../lib/api'
import { notify } from '../../lib/notices'
import { keys } from '../../lib/queries'
import { navigate } from '../../lib/router'
import type { RunStatus } from '../../timeline/reduce'

export function SessionRow({ session, active, status, onOpen }: { session: Session; active: boolean; status?: RunStatus; onOpen: () => void }) {
  const qc = useQueryClient()
  const [editing, setEditing] = useState(false)
  const [name, setName] = useState(session.name)
  const [confirming, setConfirming] = useState(false)
  const renameButton = useRef<HTMLButtonElement>(null)
  const refocus = useRef(false)
  const title = session.name || 'New conversation'

  async function patch(body: { name?: string; pinned?: boolean }) {
    try {
      await ok(api.PATCH('/api/v1/sessions/{id}', { params: { path: { id: session.id } }, body }))
      await qc.invalidateQueries({ queryKey: keys.sessions })
      qc.invalidateQueries({ queryKey: keys.session(session.id) })
    } catch (e) {
      notify(errorText(e))
    }
  }

  async function remove() {
    try {
      await ok(api.DELETE('/api/v1/sessions/{id}', { params: { path: { id: session.id } } }))
      if (active) navigate('/', true)
      await qc.invalidateQueries({ queryKey: keys.sessions })
    } catch (e) {
      notify(errorText(e))
    }
  }

  function onKey(e: KeyboardEvent<HTMLInputElement>) {
    if (e.key === 'Enter') {
      // Not to reach Rename as it takes the focus (and open the box again).
      e.preventDefault()
      refocus.current = true
      setEditing(false)
      if (name.trim() && name !== session.name) void patch({ name: name.trim() })
    } else if (e.key === 'Escape') {
      // The conversation's Esc (stop a run) is not this one's.
      e.preventDefault()
      refocus.current = true
      setEditing(false)
      setName(session.name)
    }
  }

  // Leaving the box by key gives focus back to Rename, not to the page.
  useEffect(() => {
    if (!editing && refocus.current) {
      refocus.current = false
      renameButton.current?.focus()
    }
  }, [editing])

  return (
    <li className={`session-row${active ? ' active' : ''}`} data-session-id={session.id}>
      {editing ? (
        <input className="rename" autoFocus aria-label="Conversation name" value={name} onChange={(e) => setName(e.target.value)} onKeyDown={onKey}
          onBlur={() => setEditing(false)} />
      ) : (
        <button className="session-open" onClick={onOpen} aria-current={active ? 'page' : undefined}>
          {session.pinned && <span className="pin-mark" title="Pinned"><Icon name="pin" size={13} /></span>}
          <span className="session-title">{title}</span>
          {status && <span className={`live-dot live-${status}`} title={status === 'interrupted' ? 'Waiting for approval' : 'Running'} />}
        </button>
      )}
      {!editing && (
        <span className="row-actions">
          <button ref={renameButton} className="icon-btn" aria-label={`Rename ${title}`} title="Rename" onClick={() => { setName(session.name); setEditing(true) }}>
            <Icon name="edit" size={14} />
          </button>
          <button className="icon-btn" aria-label={session.pinned ? `Unpin ${title}` : `Pin ${title}`} title={session.pinned ? 'Unpin' : 'Pin'}
            onClick={() => patch({ pinned: !session.pinned })}>
            <Icon name="pin" size={14} />
          </button>
          {confirming ? (
            <button className="btn btn-danger btn-xs" onClick={remove} onBlur={() => setConfirming(false)} autoFocus>Delete?</button>
          ) : (
            <button className="icon-btn" aria-label={`Delete ${title}`} title="Delete" onClick={() => setConfirming(true)}>
              <Icon name="trash" size={14} />
            </button>
          )}
        </span>
      )}
    </li>
  )
}
