// Starts the real stack for browser tests: the agents-server binary (with
// the built UI embedded), its scripted model, and system Chromium driven by
// playwright-core.
import { execFileSync, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { chromium } from 'playwright-core'

export const frontendDir = fileURLToPath(new URL('..', import.meta.url))
export const repoDir = join(frontendDir, '..')
export const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium'

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer()
    s.once('error', reject)
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address()
      s.close(() => resolve(port))
    })
  })
}

/** Spawns a process and resolves with the first stdout match of re. */
function startProcess(bin, args, re, label) {
  return new Promise((resolve, reject) => {
    // The environment passes through: the server reads DOCKER_HOST itself
    // (the docker-backed tests need the daemon it names).
    const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'], env: process.env })
    let out = ''
    const timer = setTimeout(() => reject(new Error(`${label} did not start in 30s:\n${out}`)), 30_000)
    const onData = (d) => {
      out += d
      const m = re.exec(out)
      if (m) {
        clearTimeout(timer)
        resolve({ child, match: m })
      }
    }
    child.stdout.on('data', onData)
    child.stderr.on('data', (d) => {
      out += d
      if (process.env.E2E_VERBOSE) process.stderr.write(`[${label}] ${d}`)
    })
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`${label} exited with ${code}:\n${out}`))
    })
  })
}

/** Builds the binary unless AGENTS_BIN names one; the UI must be built first (npm run build). */
export function buildBinary(dir) {
  if (process.env.AGENTS_BIN) return process.env.AGENTS_BIN
  if (!existsSync(join(frontendDir, 'dist/index.html'))) {
    console.log('e2e: frontend/dist is empty; building the UI first (npm run build)')
    execFileSync('npm', ['run', 'build'], { cwd: frontendDir, stdio: 'inherit' })
  }
  const bin = join(dir, 'agents-server')
  console.log('e2e: go build -o', bin)
  execFileSync('go', ['build', '-o', bin, './cmd/agents-server'], { cwd: repoDir, stdio: 'inherit' })
  return bin
}

export async function startStack() {
  const tmp = mkdtempSync(join(tmpdir(), 'agents-e2e-'))
  const bin = buildBinary(tmp)
  const scriptedPort = await freePort()
  const scripted = await startProcess(bin, ['scripted-model', '--addr', `127.0.0.1:${scriptedPort}`, '--scripts', join(frontendDir, 'e2e/scripts.json')],
    /scripted model ready/, 'scripted-model')
  const port = await freePort()
  const server = await startProcess(bin, ['--addr', `127.0.0.1:${port}`, '--data-dir', join(tmp, 'data'), '--log-level', 'warn'],
    /agents-server ready: (http:\/\/\S+?)\/#token=(\S+)/, 'agents-server')
  const [, baseURL, token] = server.match
  const scriptedURL = `http://127.0.0.1:${scriptedPort}/v1`
  const children = [server.child, scripted.child]

  /** Calls the REST API (as the bootstrap admin unless `as` names another token): the status and the parsed body. */
  async function request(method, path, body, as = token) {
    const res = await fetch(baseURL + '/api/v1' + path, {
      method, headers: { Authorization: `Bearer ${as}`, 'Content-Type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body),
    })
    const text = await res.text()
    let data
    try {
      data = text ? JSON.parse(text) : null
    } catch {
      data = text
    }
    return { status: res.status, ok: res.ok, data, text }
  }

  /** Calls the REST API as the bootstrap admin (or `as`); a refusal throws. */
  async function api(method, path, body, as = token) {
    const r = await request(method, path, body, as)
    if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${r.text}`)
    return r.data
  }

  async function stop() {
    for (const c of children) {
      if (c.exitCode === null) {
        c.removeAllListeners('exit')
        c.kill('SIGTERM')
        await new Promise((r) => { c.once('exit', r); setTimeout(r, 5000) })
      }
    }
    rmSync(tmp, { recursive: true, force: true })
  }
  return { baseURL, token, scriptedURL, api, request, stop, tmp }
}

export async function launchBrowser(profileDir, options = {}) {
  return chromium.launchPersistentContext(profileDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
    viewport: { width: 1280, height: 820 },
    ...options,
  })
}

/** Thrown by a test whose peer (a Docker daemon) is missing: printed as a skip, not a failure. */
export class Skip extends Error {}

/** Where a missing Chromium is a failure (CI) or a printed skip (a laptop). */
export function chromiumOrSkip() {
  if (existsSync(CHROMIUM)) return true
  const why = `${CHROMIUM} not found (install it: apt-get install chromium)`
  if (process.env.AGENTS_CI === '1') {
    console.error(`e2e: FAIL — ${why}; AGENTS_CI=1 requires the browser suite`)
    process.exit(1)
  }
  console.log(`e2e: SKIP — ${why}`)
  return false
}
