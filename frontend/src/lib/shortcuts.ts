// The keyboard shortcuts: the one list the help dialog shows and the
// helpers the handlers share. Handlers live where their action does (the
// workbench for global ones, the conversation for Esc = stop).

export interface Shortcut { keys: string[]; what: string }

const mac = typeof navigator !== 'undefined' && /Mac|iPhone|iPad/.test(navigator.platform)
export const MOD = mac ? '⌘' : 'Ctrl'

export const SHORTCUTS: Shortcut[] = [
  { keys: [MOD, 'Shift', 'O'], what: 'New conversation' },
  { keys: ['/'], what: 'Focus the message box (when not typing)' },
  { keys: ['Shift', 'Esc'], what: 'Focus the message box' },
  { keys: ['Esc'], what: 'Stop the running answer' },
  { keys: ['Enter'], what: 'Send the message' },
  { keys: ['Shift', 'Enter'], what: 'New line in the message' },
  { keys: ['/'], what: 'At the start of a message: the commands (/workflow, /plan); ↑ ↓ walk them, Tab or Enter completes, Esc closes' },
  { keys: ['?'], what: 'Show these shortcuts (when not typing)' },
  { keys: [MOD, '/'], what: 'Show these shortcuts' },
]

/** Whether keys typed at el are text (a field, an editable region): single-key shortcuts stay out of its way. */
export function isTyping(el: EventTarget | null): boolean {
  if (!(el instanceof HTMLElement)) return false
  if (el.isContentEditable) return true
  if (el instanceof HTMLTextAreaElement || el instanceof HTMLSelectElement) return true
  if (el instanceof HTMLInputElement) return !['checkbox', 'radio', 'button', 'submit', 'reset', 'range', 'color', 'file'].includes(el.type)
  return false
}

/** Whether el is inside a dialog: its keys are the dialog's. */
export const inDialog = (el: EventTarget | null) => el instanceof Element && !!el.closest('dialog, [role="dialog"], [role="alertdialog"]')

/** Puts the caret in the composer's message box, when one is on screen. */
export function focusComposer(): boolean {
  const box = document.querySelector<HTMLTextAreaElement>('.composer textarea')
  box?.focus()
  return !!box
}

// Whether the shortcuts help is open: a module store, so the sidebar's
// button and the ? key open the same dialog. Each opening has its own
// number: a <dialog> says it closed in a task queued after Esc, so a close
// arriving after the help was opened again closes nothing.
let help = { open: false, opening: 0 }
const helpListeners = new Set<() => void>()
const emitHelp = () => helpListeners.forEach((l) => l())
export function openShortcutsHelp() {
  help = { open: true, opening: help.opening + 1 }
  emitHelp()
}
/** Closes the help opened as opening (a later opening stays open). */
export function closeShortcutsHelp(opening: number) {
  if (!help.open || help.opening !== opening) return
  help = { ...help, open: false }
  emitHelp()
}
export const subscribeShortcutsHelp = (l: () => void) => {
  helpListeners.add(l)
  return () => {
    helpListeners.delete(l)
  }
}
export const shortcutsHelp = () => help
