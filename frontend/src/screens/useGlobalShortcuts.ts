import { useEffect } from 'react'
import { navigate } from '../lib/router'
import { focusComposer, inDialog, isTyping } from '../lib/shortcuts'

/**
 * The workbench's shortcuts: new conversation (Ctrl/⌘+Shift+O), focus the
 * composer (Shift+Esc, or / when not typing) and the help (? when not
 * typing, or Ctrl/⌘+/). A key something else handled (defaultPrevented)
 * or typed in a dialog is left alone.
 */
export function useGlobalShortcuts(onHelp: () => void) {
  useEffect(() => {
    function onKey(e: KeyboardEvent) {
      if (e.defaultPrevented || e.isComposing || inDialog(e.target)) return
      const mod = e.ctrlKey || e.metaKey
      const typing = isTyping(e.target)
      if (mod && e.shiftKey && !e.altKey && e.key.toLowerCase() === 'o') {
        e.preventDefault()
        navigate('/')
        // On the new conversation's screen already, navigate changes nothing.
        requestAnimationFrame(() => focusComposer())
      } else if (e.key === 'Escape' && e.shiftKey && !mod) {
        if (focusComposer()) e.preventDefault()
      } else if (e.key === '/' && mod && !e.shiftKey) {
        e.preventDefault()
        onHelp()
      } else if (typing || mod || e.altKey) {
        return
      } else if (e.key === '/') {
        if (focusComposer()) e.preventDefault()
      } else if (e.key === '?') {
        e.preventDefault()
        onHelp()
      }
    }
    window.addEventListener('keydown', onKey)
    return () => window.removeEventListener('keydown', onKey)
  }, [onHelp])
}
