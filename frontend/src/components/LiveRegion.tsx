import { useAnnouncement } from '../lib/announce'

/** The one polite live region of the app (lib/announce). */
export function LiveRegion() {
  const text = useAnnouncement()
  return <div id="live-region" className="visually-hidden" role="status" aria-live="polite" aria-atomic="true">{text}</div>
}
