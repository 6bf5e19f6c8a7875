import { QueryClient, QueryObserver } from '@tanstack/react-query'
import { describe, expect, it } from 'vitest'
import { refresh } from './queries'

// A server whose answers are released by hand, so a change can land while a
// fetch is on the wire.
function slowServer() {
  let value = 'before'
  const pending: Array<() => void> = []
  return {
    set: (v: string) => { value = v },
    fetch: () => {
      const seen = value // what the server read when the request reached it
      return new Promise<string>((resolve) => pending.push(() => resolve(seen)))
    },
    answerAll: () => { while (pending.length) pending.shift()!() },
    get waiting() { return pending.length },
  }
}

async function settle(qc: QueryClient, key: string[]) {
  for (let i = 0; i < 50 && qc.getQueryState(key)?.fetchStatus !== 'idle'; i++) await new Promise((r) => setTimeout(r, 1))
}

describe('refresh', () => {
  it('asks again when the change lands while the first fetch is on the wire', async () => {
    const qc = new QueryClient({ defaultOptions: { queries: { retry: false } } })
    const server = slowServer()
    const key = ['approvals', 's1']
    const obs = new QueryObserver(qc, { queryKey: key, queryFn: server.fetch })
    const off = obs.subscribe(() => {})
    expect(server.waiting).toBe(1)
    server.set('after') // the approval is filed; the first answer still says "before"
    const done = refresh(qc, key)
    await new Promise((r) => setTimeout(r, 0))
    server.answerAll()
    await done
    await settle(qc, key)
    expect(qc.getQueryData(key)).toBe('after')
    off()
  })

  it('with "all" refetches a query nobody watches', async () => {
    const qc = new QueryClient({ defaultOptions: { queries: { retry: false } } })
    const server = slowServer()
    const key = ['messages', 's1']
    const first = qc.fetchQuery({ queryKey: key, queryFn: server.fetch })
    server.answerAll()
    expect(await first).toBe('before')
    server.set('after')
    const done = refresh(qc, key, 'all')
    await new Promise((r) => setTimeout(r, 0))
    server.answerAll()
    await done
    expect(qc.getQueryData(key)).toBe('after')
  })
})
