// The one WebSocket connection to /ws: first-frame auth, automatic
// reconnect with backoff, typed frames out to listeners, typed commands in.
import { useSyncExternalStore } from 'react'
import { parseFrame, type ClientCommand, type ServerEvent } from './events'

export type BusStatus = 'idle' | 'connecting' | 'open' | 'closed'
type EventListener = (ev: ServerEvent) => void
type StatusListener = (s: BusStatus) => void

export class Bus {
  private ws: WebSocket | null = null
  private token: string | null = null
  private retry = 0
  private timer: ReturnType<typeof setTimeout> | undefined
  private queue: ClientCommand[] = []
  private events = new Set<EventListener>()
  private statuses = new Set<StatusListener>()
  private reconnects = new Set<() => void>()
  status: BusStatus = 'idle'

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
    const proto = location.protocol === 'https:' ? 'wss:' : 'ws:'
    const ws = new WebSocket(`${proto}//${location.host}/ws`)
    const wasRetry = this.retry > 0
    this.ws = ws
    this.setStatus('connecting')
    ws.onopen = () => ws.send(JSON.stringify({ type: 'auth', token: this.token }))
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
        console.warn('bus:', (f.payload as { message?: string }).message)
        return
      }
      this.events.forEach((l) => l(f as ServerEvent))
    }
    ws.onclose = () => {
      if (this.ws !== ws) return
      this.ws = null
      this.setStatus('closed')
      if (!this.token) return
      const delay = Math.min(10_000, 500 * 2 ** this.retry++)
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
