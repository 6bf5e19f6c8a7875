// A menu's open state and the two ways out every menu has: a click
// anywhere else, and Escape, which hands focus back to the button that
// opened it.
import { useEffect, useRef, useState, type KeyboardEvent } from 'react'

/** The state a header menu (Export, the agent and model picker) needs: spread wrapProps on its wrapper, put toggle on its button. */
export function useMenu() {
  const [open, setOpen] = useState(false)
  const wrap = useRef<HTMLDivElement>(null)
  const toggle = useRef<HTMLButtonElement>(null)

  useEffect(() => {
    if (!open) return
    const away = (e: PointerEvent) => {
      if (!wrap.current?.contains(e.target as Node)) setOpen(false)
    }
    document.addEventListener('pointerdown', away)
    return () => document.removeEventListener('pointerdown', away)
  }, [open])

  const wrapProps = {
    ref: wrap,
    onKeyDown: (e: KeyboardEvent) => {
      if (e.key === 'Escape' && open) {
        // Handled: the conversation's Esc (stop the run) leaves it alone.
        e.preventDefault()
        setOpen(false)
        toggle.current?.focus()
      }
    },
  }
  return { open, setOpen, toggle, wrapProps }
}
