// One sandbox terminal over GET /ws/terminal: first-frame auth, then
// terminal.open; binary frames carry the bytes both ways, text frames the
// JSON control envelopes. Deliberately apart from the /ws bus: an ordered
// byte stream, no replay, no automatic reconnect (a new shell is a choice).
import { socketURL } from './base'

export type TerminalState =
  | { phase: 'connecting' }
  | { phase: 'opening' }
  | { phase: 'ready' }
  | { phase: 'exited'; code: number }
  | { phase: 'failed'; code: string; message: string }

export interface TerminalHandlers {
  onState: (s: TerminalState) => void
  onData: (bytes: Uint8Array) => void
}

/** The part of WebSocket this client uses (a fake stands in for it in tests). */
export interface SocketLike {
  binaryType: string
  readyState: number
  onopen: ((ev: unknown) => void) | null
  onmessage: ((ev: { data: unknown }) => void) | null
  onclose: ((ev: { code: number; reason: string }) => void) | null
  onerror: ((ev: unknown) => void) | null
  send(data: string | ArrayBufferLike | ArrayBufferView): void
  close(code?: number, reason?: string): void
}

export interface OpenOptions {
  token: string
  projectId: string
  cols: number
  rows: number
  /** The endpoint; default /ws/terminal on this origin. */
  url?: string
  /** Makes the socket (a fake in tests); default a WebSocket. */
  dial?: (url: string) => SocketLike
}

const OPEN = 1

export function terminalURL(loc: Pick<Location, 'protocol' | 'host'> = location): string {
  return socketURL('/ws/terminal', loc)
}

/** A live terminal connection; close() ends it (the server ends the shell). */
export class TerminalSocket {
  private ws: SocketLike
  private state: TerminalState = { phase: 'connecting' }
  private pendingSize: { cols: number; rows: number } | null = null
  private readonly encoder = new TextEncoder()

  constructor(private opts: OpenOptions, private h: TerminalHandlers) {
    const dial = opts.dial ?? ((url: string) => new WebSocket(url) as unknown as SocketLike)
    this.ws = dial(opts.url ?? terminalURL())
    this.ws.binaryType = 'arraybuffer'
    this.ws.onopen = () => this.ws.send(JSON.stringify({ type: 'auth', token: opts.token }))
    this.ws.onmessage = (m) => this.onMessage(m.data)
    this.ws.onclose = (ev) => this.onClose(ev.code, ev.reason)
    this.ws.onerror = () => {} // onclose follows and says what happened
    h.onState(this.state)
  }

  get phase(): TerminalState['phase'] {
    return this.state.phase
  }

  /** Keystrokes (or pasted text) to the shell. */
  input(data: string | Uint8Array) {
    if (this.state.phase !== 'ready' || this.ws.readyState !== OPEN) return
    this.ws.send(typeof data === 'string' ? this.encoder.encode(data) : data)
  }

  /** The terminal's size changed (fit): the PTY follows. */
  resize(cols: number, rows: number) {
    if (cols <= 0 || rows <= 0) return
    if (this.state.phase !== 'ready') {
      this.pendingSize = { cols, rows }
      return
    }
    this.control('terminal.resize', { cols, rows })
  }

  close() {
    this.ws.onmessage = null
    this.ws.onclose = null
    this.ws.close(1000, 'closed by the user')
  }

  private control(type: string, payload: unknown) {
    if (this.ws.readyState === OPEN) this.ws.send(JSON.stringify({ type, payload }))
  }

  private set(s: TerminalState) {
    this.state = s
    this.h.onState(s)
  }

  private onMessage(data: unknown) {
    if (data instanceof ArrayBuffer) {
      this.h.onData(new Uint8Array(data))
      return
    }
    if (typeof data !== 'string') return
    let f: { type?: unknown; payload?: Record<string, unknown> }
    try {
      f = JSON.parse(data)
    } catch {
      return
    }
    const p = f.payload ?? {}
    switch (f.type) {
      case 'auth.ok':
        this.set({ phase: 'opening' })
        this.control('terminal.open', { project_id: this.opts.projectId, cols: this.opts.cols, rows: this.opts.rows })
        return
      case 'terminal.ready': {
        this.set({ phase: 'ready' })
        const size = this.pendingSize
        this.pendingSize = null
        if (size && (size.cols !== this.opts.cols || size.rows !== this.opts.rows)) this.control('terminal.resize', size)
        return
      }
      case 'error':
      case 'terminal.error':
        this.set({ phase: 'failed', code: String(p.code ?? 'error'), message: String(p.message ?? 'the terminal failed') })
        return
      case 'terminal.exit':
        this.set({ phase: 'exited', code: typeof p.code === 'number' ? p.code : -1 })
        return
    }
  }

  private onClose(code: number, reason: string) {
    const ph = this.state.phase
    if (ph === 'exited' || ph === 'failed') return
    const why = reason || (code === 1006 ? 'the connection dropped' : `closed (${code})`)
    this.set({ phase: 'failed', code: ph === 'ready' ? 'disconnected' : 'unavailable', message: ph === 'ready' ? `The connection was lost: ${why}.` : `Could not open the terminal: ${why}.` })
  }
}
