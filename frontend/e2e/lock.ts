// A lock the suite's worker processes share, for the few things that are
// one per server rather than one per test: an MCP server's name is unique
// across every user, and a scripted model calls its tools by that name, so
// two tests holding it at once (--repeat-each, several workers) would
// collide. The lock is a file made exclusively in the run's own folder
// (E2E_LOCK_DIR, the stack's temp dir), holding the owner's pid so a lock
// left by a worker that died is taken over rather than waited on forever.
import { closeSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

function alive(pid: number) {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM'
  }
}

function ownerOf(path: string): number | null {
  try {
    return Number(readFileSync(path, 'utf8'))
  } catch {
    return null
  }
}

/** Waits (up to timeoutMs) to hold the lock called name; resolves with its release. */
export async function exclusive(name: string, timeoutMs: number): Promise<() => void> {
  const path = join(process.env.E2E_LOCK_DIR || tmpdir(), `e2e-${name}.lock`)
  const deadline = Date.now() + timeoutMs
  for (;;) {
    try {
      const fd = openSync(path, 'wx')
      writeSync(fd, String(process.pid))
      closeSync(fd)
      return () => rmSync(path, { force: true })
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e
    }
    const owner = ownerOf(path)
    if (owner === null) continue // released meanwhile
    // Written but not yet filled in (owner 0), or held by another live
    // worker: wait. This worker's own is left from an earlier test of it.
    if (owner && (owner === process.pid || !alive(owner))) {
      rmSync(path, { force: true })
      continue
    }
    if (Date.now() > deadline) throw new Error(`e2e: the ${name} lock is still held by pid ${owner} after ${timeoutMs} ms`)
    await new Promise((r) => setTimeout(r, 200))
  }
}
