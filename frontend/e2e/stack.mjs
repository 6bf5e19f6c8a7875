// The real stack the browser suite and the screenshot script drive: the
// agents-server binary (with the built UI embedded), its scripted model, a
// temp data dir and the bootstrap admin's token; and how system Chromium is
// launched. Plain JavaScript, so `node e2e/screenshots.mjs` runs it as it is
// and the Playwright config and fixtures import it.
import { execFileSync, spawn } from 'node:child_process'
import { appendFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

export const frontendDir = fileURLToPath(new URL('..', import.meta.url))
export const repoDir = join(frontendDir, '..')

/** System Chromium; never a downloaded build. */
export const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium'

/** How Chromium is launched, by the suite and by the screenshot script alike. */
export const chromiumLaunch = {
  executablePath: CHROMIUM,
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
}

/** Why the browser suite cannot run here (no Chromium), or '' when it can. */
export function chromiumMissing() {
  return existsSync(CHROMIUM) ? '' : `${CHROMIUM} not found (install it: apt-get install chromium)`
}

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

/**
 * Spawns a process and resolves with the first stdout match of re. Its
 * output goes to logFile when one is named, and to stderr with E2E_VERBOSE.
 */
function startProcess(bin, args, re, label, logFile) {
  return new Promise((resolve, reject) => {
    // The environment passes through: the server reads DOCKER_HOST itself
    // (the docker-backed tests need the daemon it names).
    const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'], env: process.env })
    let out = ''
    let started = false
    const timer = setTimeout(() => reject(new Error(`${label} did not start in 30s:\n${out}`)), 30_000)
    const log = (d) => {
      if (logFile) appendFileSync(logFile, String(d).replace(/^(?=.)/gm, `[${label}] `))
    }
    child.stdout.on('data', (d) => {
      log(d)
      if (started) return
      out += d
      const m = re.exec(out)
      if (m) {
        started = true
        clearTimeout(timer)
        resolve({ child, match: m })
      }
    })
    child.stderr.on('data', (d) => {
      log(d)
      if (!started) out += d
      if (process.env.E2E_VERBOSE) process.stderr.write(`[${label}] ${d}`)
    })
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`${label} exited with ${code}:\n${out}`))
    })
  })
}

/** The binary AGENTS_BIN names, or one built into dir; the UI is built first when frontend/dist is empty. */
export function buildBinary(dir) {
  if (process.env.AGENTS_BIN) return resolve(process.env.AGENTS_BIN)
  if (!existsSync(join(frontendDir, 'dist/index.html'))) {
    console.log('e2e: frontend/dist is empty; building the UI first (npm run build)')
    execFileSync('npm', ['run', 'build'], { cwd: frontendDir, stdio: 'inherit' })
  }
  const bin = join(dir, 'agents-server')
  console.log('e2e: go build -o', bin)
  execFileSync('go', ['build', '-o', bin, './cmd/agents-server'], { cwd: repoDir, stdio: 'inherit' })
  return bin
}

/**
 * A REST client for one server: request answers the status and the parsed
 * body; api throws on a refusal. Both call as `token` unless `as` names
 * another one; headers adds request headers (e.g. Prefer: wait=60).
 */
export function apiClient(baseURL, token) {
  async function request(method, path, body, as = token, headers = {}) {
    const res = await fetch(baseURL + '/api/v1' + path, {
      method, headers: { Authorization: `Bearer ${as}`, 'Content-Type': 'application/json', ...headers }, body: body === undefined ? undefined : JSON.stringify(body),
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

  async function api(method, path, body, as = token, headers = {}) {
    const r = await request(method, path, body, as, headers)
    if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${r.text}`)
    return r.data
  }
  return { request, api }
}

/**
 * Starts the scripted model and the server on free ports with a temp data
 * dir. The result names their addresses and the bootstrap admin's token,
 * calls the API as that admin, and stops both (removing the data dir).
 */
export async function startStack({ logFile } = {}) {
  const tmp = mkdtempSync(join(tmpdir(), 'agents-e2e-'))
  const bin = buildBinary(tmp)
  const scriptedPort = await freePort()
  const scripted = await startProcess(bin, ['scripted-model', '--addr', `127.0.0.1:${scriptedPort}`, '--scripts', join(frontendDir, 'e2e/scripts.json')],
    /scripted model ready/, 'scripted-model', logFile)
  const port = await freePort()
  const server = await startProcess(bin, ['--addr', `127.0.0.1:${port}`, '--data-dir', join(tmp, 'data'), '--log-level', 'warn'],
    /agents-server ready: (http:\/\/\S+?)\/#token=(\S+)/, 'agents-server', logFile).catch(async (e) => {
    scripted.child.kill('SIGTERM')
    throw e
  })
  const [, baseURL, token] = server.match
  const scriptedURL = `http://127.0.0.1:${scriptedPort}/v1`
  const children = [server.child, scripted.child]

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
  return { baseURL, token, scriptedURL, ...apiClient(baseURL, token), stop, tmp }
}
