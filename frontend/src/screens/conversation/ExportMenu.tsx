import { useState } from 'react'
import { Icon } from '../../components/Icon'
import { api, errorText, ok, type Entry, type Session } from '../../lib/api'
import { saveBlob } from '../../lib/download'
import { exportFileName, toJSON, toMarkdown } from '../../lib/exportConversation'
import { notify } from '../../lib/notices'
import { PAGE } from '../../lib/queries'
import { useMenu } from '../../lib/useMenu'

/** Every entry of a session, oldest first: the screen holds only the newest page, an export needs them all. */
async function allEntries(sessionId: string): Promise<Entry[]> {
  const pages: Entry[][] = []
  let before = ''
  for (;;) {
    const page = await ok(api.GET('/api/v1/sessions/{id}/messages', {
      params: { path: { id: sessionId }, query: before ? { limit: PAGE, before_id: before } : { limit: PAGE } },
    }))
    pages.push(page)
    if (page.length < PAGE || !page[0]) break
    before = page[0].row_id
  }
  return pages.reverse().flat()
}

/** "Export": the conversation's active branch as a Markdown or a JSON file. */
export function ExportMenu({ session, agentName }: { session: Session; agentName?: string }) {
  const { open, setOpen, toggle, wrapProps } = useMenu()
  const [busy, setBusy] = useState(false)

  async function save(kind: 'md' | 'json') {
    setBusy(true)
    try {
      const source = { session, agentName, entries: await allEntries(session.id) }
      const text = kind === 'md' ? toMarkdown(source) : toJSON(source)
      saveBlob(new Blob([text], { type: kind === 'md' ? 'text/markdown' : 'application/json' }), exportFileName(session, kind))
      setOpen(false)
      toggle.current?.focus()
    } catch (e) {
      notify(errorText(e))
    } finally {
      setBusy(false)
    }
  }

  return (
    <div className="menu-wrap" {...wrapProps}>
      <button ref={toggle} className={`icon-btn${open ? ' active' : ''}`} aria-label="Export the conversation" title="Export" aria-expanded={open}
        aria-controls="export-menu" onClick={() => setOpen(!open)}>
        <Icon name="download" size={18} />
      </button>
      {open && (
        <div className="menu" id="export-menu" role="group" aria-label="Export the active branch">
          <button className="menu-item" disabled={busy} autoFocus onClick={() => void save('md')}>Export as Markdown</button>
          <button className="menu-item" disabled={busy} onClick={() => void save('json')}>Export as JSON</button>
        </div>
      )}
    </div>
  )
}
