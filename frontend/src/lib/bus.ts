// The one WebSocket connection to /ws: first-frame auth, automatic
// reconnect with backoff, typed frames out to listeners, typed commands in.
import { useSyncExternalStore } from 'react'
import { asBearer, setToken } from './auth'
import { socketURL } from './base'
import { parseFrame, type ClientCommand, type ServerEvent } from './events'
import type { SocketLike } from './terminalSocket'

/** Close code of a refusal worth retrying later (too many open streams). */
const CLOSE_TRY_AGAIN_LATER = 1013
/** How long a 1013 refusal waits: the server's Retry-After for the same refusal over SSE. */
const RETRY_LATER_MS = 10_000

export interface BusOptions {
  /** Makes the socket (a fake in tests); default a WebSocket to /ws on this origin. */
  dial?: () => SocketLike
  /** Drops the token the server refused; default signs out, as a REST 401 does. */
  signOut?: () => void
}

function busURL(): string {
  return socketURL('/ws')
}

export type BusStatus = 'idle' | 'connecting' | 'open' | 'closed'
type EventListener = (ev: ServerEvent) => void
type StatusListener = (s: BusStatus) => void

export class Bus {
  private ws: SocketLike | null = null
  private token: string | null = null
  private retry = 0
  private timer: ReturnType<typeof setTimeout> | undefined
  private queue: ClientCommand[] = []
  private events = new Set<EventListener>()
  private statuses = new Set<StatusListener>()
  private reconnects = new Set<() => void>()
  status: BusStatus = 'idle'
  private readonly dial: () => SocketLike
  private readonly signOut: () => void

  constructor(opts: BusOptions = {}) {
    this.dial = opts.dial ?? (() => new WebSocket(busURL()) as unknown as SocketLike)
    this.signOut = opts.signOut ?? (() => setToken(null))
  }

  /** Connects (or reconnects) with a token; null disconnects. */
  connect(token: string | null) {
    if (token === this.token && this.ws) return
    this.token = token
    this.teardown()
    if (token) this.open()
  }

  send(cmd: ClientCommand) {
    if (this.ws && this.status === 'open') this.ws.send(JSON.stringify(cmd))
    else this.queue.push(cmd)
  }

  onEvent(l: EventListener): () => void {
    this.events.add(l)
    return () => this.events.delete(l)
  }

  onStatus(l: StatusListener): () => void {
    this.statuses.add(l)
    return () => this.statuses.delete(l)
  }

  /** Called after every successful re-authentication but the first. */
  onReconnect(l: () => void): () => void {
    this.reconnects.add(l)
    return () => this.reconnects.delete(l)
  }

  private setStatus(s: BusStatus) {
    this.status = s
    this.statuses.forEach((l) => l(s))
  }

  private open() {
    const ws = this.dial()
    const wasRetry = this.retry > 0
    this.ws = ws
    this.setStatus('connecting')
    ws.onopen = () => ws.send(JSON.stringify({ type: 'auth', token: asBearer(this.token) ?? '' }))
    ws.onmessage = (m) => {
      let data: unknown
      try {
        data = JSON.parse(String(m.data))
      } catch {
        return
      }
      const f = parseFrame(data)
      if (!f) return
      if (f.type === 'auth.ok') {
        this.retry = 0
        this.setStatus('open')
        const pending = this.queue.splice(0)
        pending.forEach((c) => ws.send(JSON.stringify(c)))
        if (wasRetry) this.reconnects.forEach((l) => l())
        return
      }
      if (f.type === 'error' && !('unknown' in f)) {
        const { code, message } = f.payload as { code?: string; message?: string }
        // The token itself was refused (revoked, expired, the account
        // disabled): retrying cannot help, so sign out as a REST 401 does.
        if (code === 'unauthorized' && this.status === 'connecting') {
          this.connect(null)
          this.signOut()
          return
        }
        console.warn('bus:', message)
        return
      }
      this.events.forEach((l) => l(f as ServerEvent))
    }
    ws.onclose = (ev) => {
      if (this.ws !== ws) return
      this.ws = null
      this.setStatus('closed')
      if (!this.token) return
      // A 1008 after auth.ok means the socket's credential changed
      // (revoked, disabled, demoted): the backoff was reset at auth.ok, so
      // the reconnect comes soon and its auth answer decides (a refused
      // token signs out above, a demoted admin's resumes as a member).
      // A 1013 is too many open streams: asking again soon would be refused.
      let delay = Math.min(10_000, 500 * 2 ** this.retry++)
      if (ev.code === CLOSE_TRY_AGAIN_LATER) delay = Math.max(delay, RETRY_LATER_MS)
      this.timer = setTimeout(() => this.open(), delay)
    }
  }

  private teardown() {
    clearTimeout(this.timer)
    this.retry = 0
    const ws = this.ws
    this.ws = null
    if (ws) ws.close()
    this.setStatus('idle')
  }
}

export const bus = new Bus()

/** The bus's connection state, for a "reconnecting" hint. */
export function useBusStatus(): BusStatus {
  return useSyncExternalStore((l) => bus.onStatus(l), () => bus.status)
}
