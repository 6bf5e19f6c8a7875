import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { Bus } from './bus'
import type { SocketLike } from './terminalSocket'

class FakeSocket implements SocketLike {
  binaryType = 'blob'
  readyState = 0
  sent: string[] = []
  onopen: SocketLike['onopen'] = null
  onmessage: SocketLike['onmessage'] = null
  onclose: SocketLike['onclose'] = null
  onerror: SocketLike['onerror'] = null
  send(data: string | ArrayBufferLike | ArrayBufferView) {
    this.sent.push(String(data))
  }
  close() {
    this.readyState = 3
  }
  // The server's side.
  open() {
    this.readyState = 1
    this.onopen?.({})
  }
  text(type: string, payload?: unknown) {
    this.onmessage?.({ data: JSON.stringify({ type, payload }) })
  }
  drop(code: number, reason = '') {
    this.readyState = 3
    this.onclose?.({ code, reason })
  }
}

function start() {
  const sockets: FakeSocket[] = []
  const signOut = vi.fn()
  const bus = new Bus({ dial: () => (sockets.push(new FakeSocket()), sockets[sockets.length - 1]), signOut })
  bus.connect('tok')
  return { bus, sockets, signOut, last: () => sockets[sockets.length - 1] }
}

describe('the bus after the server ends a socket', () => {
  beforeEach(() => {
    vi.useFakeTimers()
  })
  afterEach(() => {
    vi.useRealTimers()
  })

  it('signs out when the reconnect finds the token refused', () => {
    const { bus, sockets, signOut, last } = start()
    last().open()
    last().text('auth.ok')
    expect(bus.status).toBe('open')
    // Revoked: the server closes 1008; the bus reconnects and asks again.
    last().drop(1008, 'token revoked')
    vi.advanceTimersByTime(1_000)
    expect(sockets).toHaveLength(2)
    last().open()
    expect(JSON.parse(last().sent[0])).toEqual({ type: 'auth', token: 'tok' })
    last().text('error', { code: 'unauthorized', message: 'invalid or expired token' })
    expect(signOut).toHaveBeenCalledOnce()
    last().drop(1008, 'invalid or expired token')
    vi.advanceTimersByTime(60_000)
    expect(sockets).toHaveLength(2) // no more attempts with a dead token
    expect(bus.status).toBe('idle')
  })

  it('resumes when the reconnect is accepted (a demoted admin)', () => {
    const { bus, sockets, signOut, last } = start()
    last().open()
    last().text('auth.ok')
    last().drop(1008, 'role changed')
    vi.advanceTimersByTime(1_000)
    last().open()
    last().text('auth.ok')
    expect(bus.status).toBe('open')
    expect(sockets).toHaveLength(2)
    expect(signOut).not.toHaveBeenCalled()
  })

  it('waits before asking again after too many open streams (1013)', () => {
    const { sockets, signOut, last } = start()
    last().open()
    last().text('error', { code: 'rate_limited', message: 'too many streams' })
    last().drop(1013, 'too many open streams')
    vi.advanceTimersByTime(9_000)
    expect(sockets).toHaveLength(1)
    vi.advanceTimersByTime(1_000)
    expect(sockets).toHaveLength(2)
    expect(signOut).not.toHaveBeenCalled()
  })
})
