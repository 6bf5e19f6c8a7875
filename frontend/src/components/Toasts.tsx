import { dismiss, useNotices } from '../lib/notices'

export function Toasts() {
  const notices = useNotices()
  if (!notices.length) return null
  return (
    // Not a live region itself: notify() says each notice through the app's one (LiveRegion).
    <div className="toasts">
      {notices.map((n) => (
        <div key={n.id} className={`toast toast-${n.tone}`}>
          <span>{n.message}</span>
          <button className="icon-btn" aria-label="Dismiss" onClick={() => dismiss(n.id)}>×</button>
        </div>
      ))}
    </div>
  )
}
