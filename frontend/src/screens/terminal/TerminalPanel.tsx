// The sandbox terminal: xterm.js over /ws/terminal (loaded on first use, so
// the main bundle does not carry it).
import { FitAddon } from '@xterm/addon-fit'
import { Terminal } from '@xterm/xterm'
import '@xterm/xterm/css/xterm.css'
import { useEffect, useRef, useState } from 'react'
import { Icon } from '../../components/Icon'
import { bearer } from '../../lib/auth'
import { TerminalSocket, type TerminalState } from '../../lib/terminalSocket'
import { withAdoptedStyles } from './adoptedStyles'
import type { TerminalTarget } from './terminalTarget'

const THEME = { background: '#0d0d12', foreground: '#e6e6ec', cursor: '#a5b4fc', selectionBackground: '#3a3a5a' }

function describe(s: TerminalState): { label: string; tone: string } {
  switch (s.phase) {
    case 'connecting':
      return { label: 'Connecting…', tone: 'muted' }
    case 'opening':
      return { label: 'Starting the sandbox…', tone: 'run' }
    case 'ready':
      return { label: 'Live', tone: 'ok' }
    case 'exited':
      return { label: `Exited with code ${s.code}`, tone: s.code === 0 ? 'muted' : 'warn' }
    case 'failed':
      return { label: 'Closed', tone: 'error' }
  }
}

/** One shell in the project's container; closing the panel ends it. */
export default function TerminalPanel({ target, onClose }: { target: TerminalTarget; onClose: () => void }) {
  const host = useRef<HTMLDivElement>(null)
  const [state, setState] = useState<TerminalState>({ phase: 'connecting' })
  const [attempt, setAttempt] = useState(0)

  useEffect(() => {
    const el = host.current
    if (!el) return
    const term = new Terminal({
      fontFamily: "ui-monospace, 'SF Mono', 'Cascadia Code', 'JetBrains Mono', Menlo, Consolas, monospace",
      fontSize: 13, cursorBlink: true, scrollback: 5000, theme: THEME,
    })
    const fit = new FitAddon()
    term.loadAddon(fit)
    const styles = withAdoptedStyles(document, () => term.open(el))
    fit.fit()
    const sock = new TerminalSocket(
      { token: bearer() ?? '', projectId: target.projectId, cols: term.cols, rows: term.rows },
      {
        onState: (s) => {
          setState(s)
          if (s.phase === 'ready') term.focus()
        },
        onData: (b) => term.write(b),
      },
    )
    const subs = [term.onData((d) => sock.input(d)), term.onBinary((d) => sock.input(Uint8Array.from(d, (c) => c.charCodeAt(0)))),
      term.onResize(({ cols, rows }) => sock.resize(cols, rows))]
    let frame = 0
    const observer = new ResizeObserver(() => {
      cancelAnimationFrame(frame)
      frame = requestAnimationFrame(() => fit.fit())
    })
    observer.observe(el)
    return () => {
      observer.disconnect()
      cancelAnimationFrame(frame)
      subs.forEach((d) => d.dispose())
      sock.close()
      term.dispose()
      styles.dispose()
    }
  }, [target.projectId, attempt])

  const st = describe(state)
  const ended = state.phase === 'exited' || state.phase === 'failed'
  return (
    <section className="terminal-panel" role="dialog" aria-label={`Terminal: ${target.name}`} data-phase={state.phase}>
      <header className="terminal-head">
        <Icon name="terminal" size={16} />
        <b className="terminal-title">{target.name}</b>
        <span className={`pill pill-${st.tone}`} role="status">{st.label}</span>
        <span className="grow" />
        {ended && <button className="btn btn-sm" onClick={() => setAttempt((n) => n + 1)}>Reconnect</button>}
        <button className="icon-btn" aria-label="Close the terminal" title="Close (ends the shell)" onClick={onClose}>
          <Icon name="x" size={16} />
        </button>
      </header>
      {state.phase === 'failed' && (
        <p className="terminal-error error-text" role="alert">{state.message} <code className="code-badge">{state.code}</code></p>
      )}
      <div className="terminal-screen" ref={host} />
    </section>
  )
}
