import { useEffect, useState } from 'react'
import { errorText, type MessageHit } from '../../lib/api'
import { useMessageSearch } from '../../lib/queries'

/** q once the typing has paused for ms: one request per pause, not per key. */
function useDebounced(q: string, ms: number) {
  const [value, setValue] = useState(q)
  useEffect(() => {
    const t = window.setTimeout(() => setValue(q), ms)
    return () => window.clearTimeout(t)
  }, [q, ms])
  return value
}

function when(iso: string) {
  const d = new Date(iso)
  if (Number.isNaN(d.getTime())) return ''
  const today = new Date().toDateString() === d.toDateString()
  return today ? d.toLocaleTimeString(undefined, { timeStyle: 'short' }) : d.toLocaleDateString(undefined, { dateStyle: 'medium' })
}

/**
 * The messages holding the sidebar search's words (2 characters or more),
 * newest first, under a "Messages" heading: the conversation, a snippet with
 * the words marked, and when. The snippet is plain text in runs from the
 * server; the marks are <mark> elements, never markup from the message.
 */
export function MessageHits({ query, onOpen }: { query: string; onOpen: (hit: MessageHit) => void }) {
  const q = useDebounced(query.trim(), 250)
  const search = useMessageSearch(q)
  if (query.trim().length < 2) return null
  const hits = search.data?.hits ?? []
  return (
    <section className="message-hits" aria-labelledby="message-hits-heading">
      <h2 id="message-hits-heading" className="message-hits-heading">Messages</h2>
      {search.isError ? (
        <p className="muted pad" role="status">{errorText(search.error)}</p>
      ) : search.isPending || q !== query.trim() ? (
        <p className="muted pad" role="status">Searching…</p>
      ) : !hits.length ? (
        <p className="muted pad" role="status">No message matches.</p>
      ) : (
        <ul className="message-hit-list">
          {hits.map((h) => (
            <li key={h.row_id}>
              <button className="message-hit" onClick={() => onOpen(h)}>
                <span className="message-hit-head">
                  <span className="message-hit-name">{h.session_name || 'New conversation'}</span>
                  <time className="message-hit-when" dateTime={h.created_at}>{when(h.created_at)}</time>
                </span>
                <span className="message-hit-snippet">
                  <span className="visually-hidden">{h.role === 'user' ? 'You: ' : 'Answer: '}</span>
                  {h.snippet.map((p, i) => (p.hit ? <mark key={i}>{p.text}</mark> : <span key={i}>{p.text}</span>))}
                </span>
              </button>
            </li>
          ))}
        </ul>
      )}
    </section>
  )
}
