import { describe, expect, it } from 'vitest'
import { TerminalSocket, terminalURL, type SocketLike, type TerminalState } from './terminalSocket'

class FakeSocket implements SocketLike {
  binaryType = 'blob'
  readyState = 0
  sent: (string | Uint8Array)[] = []
  closed?: { code?: number; reason?: string }
  onopen: SocketLike['onopen'] = null
  onmessage: SocketLike['onmessage'] = null
  onclose: SocketLike['onclose'] = null
  onerror: SocketLike['onerror'] = null
  constructor(public url: string) {}
  send(data: string | ArrayBufferLike | ArrayBufferView) {
    this.sent.push(typeof data === 'string' ? data : new Uint8Array(data as ArrayBuffer))
  }
  close(code?: number, reason?: string) {
    this.closed = { code, reason }
  }
  // The server's side.
  open() {
    this.readyState = 1
    this.onopen?.({})
  }
  text(type: string, payload?: unknown) {
    this.onmessage?.({ data: JSON.stringify({ type, payload }) })
  }
  bytes(s: string) {
    this.onmessage?.({ data: new TextEncoder().encode(s).buffer })
  }
  drop(code: number, reason = '') {
    this.readyState = 3
    this.onclose?.({ code, reason })
  }
  json() {
    return this.sent.filter((s): s is string => typeof s === 'string').map((s) => JSON.parse(s))
  }
}

function start(cols = 100, rows = 30) {
  let fake!: FakeSocket
  const states: TerminalState[] = []
  const data: string[] = []
  const t = new TerminalSocket(
    { token: 'tok', projectId: 'p1', cols, rows, url: 'ws://h/ws/terminal', dial: (u) => (fake = new FakeSocket(u)) },
    { onState: (s) => states.push(s), onData: (b) => data.push(new TextDecoder().decode(b)) },
  )
  return { t, fake, states, data }
}

describe('the terminal protocol', () => {
  it('authenticates, opens with the size, then carries bytes both ways', () => {
    const { t, fake, states, data } = start()
    expect(fake.binaryType).toBe('arraybuffer')
    fake.open()
    expect(fake.json()).toEqual([{ type: 'auth', token: 'tok' }])
    fake.text('auth.ok')
    expect(fake.json()[1]).toEqual({ type: 'terminal.open', payload: { project_id: 'p1', cols: 100, rows: 30 } })
    // Keystrokes before ready go nowhere: there is no shell yet.
    t.input('early')
    expect(fake.sent.filter((s) => typeof s !== 'string')).toEqual([])
    fake.text('terminal.ready', { project_id: 'p1', cols: 100, rows: 30 })
    t.input('echo hi\r')
    const bin = fake.sent.filter((s): s is Uint8Array => typeof s !== 'string')
    expect(bin.map((b) => new TextDecoder().decode(b))).toEqual(['echo hi\r'])
    fake.bytes('hi\r\n$ ')
    expect(data).toEqual(['hi\r\n$ '])
    t.resize(120, 40)
    expect(fake.json().at(-1)).toEqual({ type: 'terminal.resize', payload: { cols: 120, rows: 40 } })
    expect(states.map((s) => s.phase)).toEqual(['connecting', 'opening', 'ready'])
  })

  it('sends a size that changed while opening once the shell is ready', () => {
    const { t, fake } = start(80, 24)
    fake.open()
    fake.text('auth.ok')
    t.resize(132, 50)
    expect(fake.json().some((m) => m.type === 'terminal.resize')).toBe(false)
    fake.text('terminal.ready')
    expect(fake.json().at(-1)).toEqual({ type: 'terminal.resize', payload: { cols: 132, rows: 50 } })
  })

  it('reports the exit code, and the close after it is not a failure', () => {
    const { fake, states } = start()
    fake.open()
    fake.text('auth.ok')
    fake.text('terminal.ready')
    fake.text('terminal.exit', { code: 3 })
    fake.drop(1000, 'shell exited')
    expect(states.at(-1)).toEqual({ phase: 'exited', code: 3 })
  })

  it('shows terminal.error (an open refused, or the sandbox changed under it)', () => {
    const { fake, states } = start()
    fake.open()
    fake.text('auth.ok')
    fake.text('terminal.error', { code: 'not_found', message: 'project not found' })
    fake.drop(1000, 'terminal not opened')
    expect(states.at(-1)).toEqual({ phase: 'failed', code: 'not_found', message: 'project not found' })
  })

  it('shows a refused token', () => {
    const { fake, states } = start()
    fake.open()
    fake.text('error', { code: 'unauthorized', message: 'invalid or expired token' })
    expect(states.at(-1)).toEqual({ phase: 'failed', code: 'unauthorized', message: 'invalid or expired token' })
  })

  it('a dropped connection is a failure that says so', () => {
    const { fake, states } = start()
    fake.open()
    fake.text('auth.ok')
    fake.text('terminal.ready')
    fake.drop(1006)
    expect(states.at(-1)).toMatchObject({ phase: 'failed', code: 'disconnected' })
    expect((states.at(-1) as { message: string }).message).toContain('connection dropped')
  })

  it('close() ends the socket without reporting a failure', () => {
    const { t, fake, states } = start()
    fake.open()
    t.close()
    expect(fake.closed).toEqual({ code: 1000, reason: 'closed by the user' })
    expect(states.at(-1)?.phase).toBe('connecting')
  })

  it('dials the same origin, wss on https', () => {
    expect(terminalURL({ protocol: 'https:', host: 'a.example:8443' })).toBe('wss://a.example:8443/ws/terminal')
    expect(terminalURL({ protocol: 'http:', host: '127.0.0.1:9527' })).toBe('ws://127.0.0.1:9527/ws/terminal')
  })
})
