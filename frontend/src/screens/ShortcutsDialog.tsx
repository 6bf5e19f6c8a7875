import { useEffect, useRef } from 'react'
import { Icon } from '../components/Icon'
import { SHORTCUTS } from '../lib/shortcuts'

/**
 * The keyboard shortcuts, in a modal <dialog>: the page behind is inert
 * (focus stays inside), Esc closes it, and focus goes back where it was.
 */
export function ShortcutsDialog({ onClose }: { onClose: () => void }) {
  const dialog = useRef<HTMLDialogElement>(null)
  // Read at the first render, before the dialog takes focus.
  const back = useRef<Element | null>(typeof document !== 'undefined' ? document.activeElement : null)

  useEffect(() => {
    const d = dialog.current
    if (d && !d.open) {
      if (typeof d.showModal === 'function') d.showModal()
      else d.setAttribute('open', '')
    }
    const returnTo = back.current
    return () => {
      if (returnTo instanceof HTMLElement && returnTo.isConnected) returnTo.focus()
    }
  }, [])

  return (
    <dialog ref={dialog} className="dialog shortcuts-dialog" aria-labelledby="shortcuts-title" onClose={onClose}>
      <div className="dialog-head">
        <h2 id="shortcuts-title">Keyboard shortcuts</h2>
        <span className="grow" />
        <button className="icon-btn" aria-label="Close" autoFocus onClick={onClose}><Icon name="x" /></button>
      </div>
      <table className="shortcuts">
        <thead className="visually-hidden">
          <tr><th scope="col">Keys</th><th scope="col">Action</th></tr>
        </thead>
        <tbody>
          {SHORTCUTS.map((s) => (
            <tr key={s.what}>
              <td>{s.keys.map((k, i) => <span key={k}>{i > 0 && ' + '}<kbd>{k}</kbd></span>)}</td>
              <td>{s.what}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </dialog>
  )
}
