// The real stack the browser suite and the screenshot script drive: the
// agents-server binary (with the built UI embedded), its scripted model, the
// MCP reference server (when installed), a temp data dir and the bootstrap
// admin's token; and how system Chromium is launched. Plain JavaScript, so `node e2e/screenshots.mjs` runs it as it is
// and the Playwright config and fixtures import it.
import { execFileSync, spawn } from 'node:child_process'
import { appendFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

export const frontendDir = fileURLToPath(new URL('..', import.meta.url))
export const repoDir = join(frontendDir, '..')

/** The pinned MCP reference server (server-everything), installed by `go tool task mcp:install`. */
export const EVERYTHING_DIR = join(repoDir, 'adapters/mcp/testdata/everything')
/** Its entry file: `node <it> streamableHttp` serves HTTP, `node <it> stdio` speaks MCP on stdin and stdout. */
export const EVERYTHING_ENTRY = join(EVERYTHING_DIR, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js')

/** Why the MCP reference server cannot run here, or '' when it can. */
export function everythingMissing() {
  return existsSync(EVERYTHING_ENTRY) ? '' : `the MCP reference server is not installed at ${EVERYTHING_DIR} (go tool task mcp:install)`
}

/** The local OAuth authorization server of the MCP suites (oauth2-mock-server behind as.mjs), installed by `go tool task mcp:install`. */
const OAUTH_DIR = join(repoDir, 'adapters/mcp/testdata/oauth')

/** Why the authorization server cannot run here, or '' when it can. */
export function authServerMissing() {
  return existsSync(join(OAUTH_DIR, 'node_modules/oauth2-mock-server')) ? '' : `the OAuth test server is not installed at ${OAUTH_DIR} (go tool task mcp:install)`
}

/**
 * Starts the authorization server on a free port; resolves with its issuer
 * URL, what it saw (`state()`: registrations, codeGrants, …) and `stop`.
 * Its /authorize redirects back at once with a code: no login page.
 */
export async function startAuthServer() {
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  const child = spawn(process.execPath, ['as.mjs'], { cwd: OAUTH_DIR, env: { ...process.env, PORT: String(port) }, stdio: 'ignore' })
  const deadline = Date.now() + 30_000
  for (;;) {
    try {
      await fetch(`${url}/.well-known/oauth-authorization-server`, { signal: AbortSignal.timeout(1000) })
      break
    } catch (e) {
      if (child.exitCode !== null || Date.now() > deadline) {
        child.kill('SIGKILL')
        throw new Error(`the OAuth test server did not answer at ${url}`, { cause: e })
      }
      await new Promise((r) => setTimeout(r, 100))
    }
  }
  const state = async () => (await fetch(`${url}/_test/state`)).json()
  const stop = async () => {
    if (child.exitCode !== null) return
    const gone = new Promise((r) => { child.once('exit', r); setTimeout(r, 5000) })
    child.kill('SIGTERM')
    await gone
  }
  return { url, state, stop }
}

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

export function freePort() {
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
function startProcess(bin, args, re, label, logFile, env = process.env) {
  return new Promise((resolve, reject) => {
    // The environment passes through: the server reads DOCKER_HOST itself
    // (the docker-backed tests need the daemon it names).
    const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'], env })
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

/**
 * Starts server-everything over streamable HTTP on a free port and resolves
 * once its endpoint answers (any answer: a GET without a session is a 400).
 * It runs in its own process group, so stopping it kills whatever node
 * spawned too. A port taken between picking and binding is retried.
 */
async function startEverything(logFile) {
  let last
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort()
    const url = `http://127.0.0.1:${port}/mcp`
    const child = spawn(process.execPath, [EVERYTHING_ENTRY, 'streamableHttp'], {
      cwd: EVERYTHING_DIR, env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'], detached: true,
    })
    let out = ''
    const log = (d) => {
      if (!out || out.length < 4096) out += d
      if (logFile) appendFileSync(logFile, String(d).replace(/^(?=.)/gm, '[mcp-everything] '))
      if (process.env.E2E_VERBOSE) process.stderr.write(`[mcp-everything] ${d}`)
    }
    child.stdout.on('data', log)
    child.stderr.on('data', log)
    let exited = false
    child.once('exit', () => { exited = true })
    const deadline = Date.now() + 30_000
    while (!exited && Date.now() < deadline) {
      try {
        await fetch(url, { signal: AbortSignal.timeout(1000) })
        const stop = async () => {
          if (exited) return
          const gone = new Promise((r) => { child.once('exit', r); setTimeout(r, 5000) })
          try {
            process.kill(-child.pid, 'SIGTERM')
          } catch {
            // Already gone.
          }
          await gone
        }
        return { url, stop }
      } catch {
        await new Promise((r) => setTimeout(r, 100))
      }
    }
    if (!exited) process.kill(-child.pid, 'SIGKILL')
    last = new Error(`the MCP reference server did not answer at ${url}:\n${out}`)
  }
  throw last
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

/** A program of the repository: the binary its env variable names, or the package pkg (./cmd/<name> by default) built into dir. */
function buildProgram(dir, name, envVar, pkg = `./cmd/${name}`) {
  if (process.env[envVar]) return resolve(process.env[envVar])
  const bin = join(dir, name)
  console.log('e2e: go build -o', bin)
  execFileSync('go', ['build', '-o', bin, pkg], { cwd: repoDir, stdio: 'inherit' })
  return bin
}

/**
 * Starts the mount example (examples/mount: a Go service with its own
 * sign-in, the workbench under /agents) on port with its data in dataDir
 * and the accounts users names; resolves with its process and base URL.
 * MOUNT_BIN names a built binary; otherwise it is built into dataDir.
 */
export async function startMount({ dataDir, port, users, logFile = '' }) {
  const bin = buildProgram(dataDir, 'mount-example', 'MOUNT_BIN', './examples/mount')
  const { child, match } = await startProcess(bin, ['--addr', `127.0.0.1:${port}`, '--data-dir', dataDir, '--users', users],
    /mount example ready: (http:\/\/\S+?)\//, 'mount-example', logFile)
  child.removeAllListeners('exit')
  return { child, baseURL: match[1] }
}

/**
 * Starts the ChatGPT double (OpenAI's auth server and the Codex backend,
 * served locally); resolves with its issuer and backend URLs.
 */
async function startChatGPTDouble(dir, logFile) {
  const { child, match } = await startProcess(buildProgram(dir, 'chatgpt-double', 'CHATGPT_DOUBLE_BIN'), ['--addr', '127.0.0.1:0'],
    /chatgpt-double ready issuer=(\S+) backend=(\S+)/, 'chatgpt-double', logFile)
  return { child, issuer: match[1], backend: match[2] }
}

/**
 * Starts the test OpenID Provider (tools/oidcop: zitadel's OP with its own
 * login page) with one web client allowed redirectURIs and the accounts
 * users names ({username, password, email, email_verified, groups?});
 * resolves with its process and issuer. OIDCOP_BIN names a built binary;
 * otherwise it is built into dir.
 */
export async function startOIDCProvider({ dir, clientID, clientSecret, redirectURIs, users, logFile = '' }) {
  const bin = buildProgram(dir, 'oidcop', 'OIDCOP_BIN', './tools/oidcop')
  const args = ['--client-id', clientID, '--client-secret', clientSecret, '--users', JSON.stringify(users)]
  for (const u of redirectURIs) args.push('--redirect-uri', u)
  const { child, match } = await startProcess(bin, args, /oidcop ready: (http:\/\/\S+)/, 'oidcop', logFile)
  child.removeAllListeners('exit')
  return { child, issuer: match[1] }
}

/** The key and the header the E2B double requires of every call (the e2b test's sandbox sends both). */
export const E2B_KEY = 'e2b_0011223344556677'
export const E2B_HEADER = ['X-Tenant', 'acme']

/**
 * Starts the E2B double (a local E2B-compatible service); resolves with its
 * control plane's URL, its sandbox domain, its proxy and CA file (the
 * server reaches sandboxes through them: HTTPS_PROXY, SSL_CERT_FILE), or
 * with `missing` saying why it cannot run here.
 */
async function startDouble(dir, logFile) {
  try {
    const bin = buildProgram(dir, 'e2b-double', 'E2B_DOUBLE_BIN')
    const { child, match } = await startProcess(bin, ['--api-key', E2B_KEY, '--templates', 'base', '--require-header', E2B_HEADER.join('='),
      '--ca-file', join(dir, 'e2b-ca.pem')], /e2b-double ready api=(\S+) proxy=(\S+) domain=(\S+) ca=(\S+)/, 'e2b-double', logFile)
    const [, api, proxy, domain, ca] = match
    return { child, api, proxy, domain, ca, missing: '' }
  } catch (e) {
    return { missing: `the E2B double did not start: ${String(e).slice(0, 500)}` }
  }
}

/**
 * Starts one more agents-server of the stack's binary on its own data dir
 * and port, with a fixed bootstrap token (so a restart on the same dir and
 * port serves the same tab); resolves with its process and base URL. For a
 * test that kills and restarts a server: the shared one stays up.
 */
export async function startServer({ bin, dataDir, port, token, logFile = '', args = /** @type {string[]} */ ([]), env: extraEnv = /** @type {Record<string, string>} */ ({}) }) {
  const env = { ...process.env, AGENTS_TOKEN: token, ...extraEnv }
  const { child, match } = await startProcess(bin, ['--addr', `127.0.0.1:${port}`, '--data-dir', dataDir, '--log-level', 'warn', ...args],
    /agents-server ready: (http:\/\/\S+?)\/#token=/, `agents-server:${port}`, logFile, env)
  // Past the ready line its exit is the test's business, not a start failure.
  child.removeAllListeners('exit')
  return { child, baseURL: match[1] }
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
 * Starts the scripted model, the MCP reference server (when installed:
 * everythingURL is '' otherwise) and the server on free ports with a temp
 * data dir. The result names their addresses and the bootstrap admin's
 * token, calls the API as that admin, and stops them all (removing the data
 * dir).
 */
export async function startStack({ logFile } = {}) {
  const tmp = mkdtempSync(join(tmpdir(), 'agents-e2e-'))
  const bin = buildBinary(tmp)
  const scriptedPort = await freePort()
  const scripted = await startProcess(bin, ['scripted-model', '--addr', `127.0.0.1:${scriptedPort}`, '--scripts', join(frontendDir, 'e2e/scripts.json')],
    /scripted model ready/, 'scripted-model', logFile)
  const double = await startDouble(tmp, logFile)
  const chatgpt = await startChatGPTDouble(tmp, logFile)
  // The double's hosts are reached through its proxy, trusting its CA
  // (loopback addresses are never proxied).
  const serverEnv = double.missing ? process.env : { ...process.env, HTTPS_PROXY: double.proxy, SSL_CERT_FILE: double.ca }
  const port = await freePort()
  const server = await startProcess(bin, ['--addr', `127.0.0.1:${port}`, '--data-dir', join(tmp, 'data'), '--log-level', 'warn',
    '--chatgpt-auth-url', chatgpt.issuer, '--chatgpt-backend-url', chatgpt.backend],
    /agents-server ready: (http:\/\/\S+?)\/#token=(\S+)/, 'agents-server', logFile, serverEnv).catch(async (e) => {
    scripted.child.kill('SIGTERM')
    chatgpt.child.kill('SIGTERM')
    double.child?.kill('SIGTERM')
    throw e
  })
  const [, baseURL, token] = server.match
  const scriptedURL = `http://127.0.0.1:${scriptedPort}/v1`
  // The test peers listen on loopback, which what members configure may not
  // reach by default (the outbound policy): the suite's members may.
  await apiClient(baseURL, token).api('PUT', '/settings/outbound_allow_private', { value: 'true' })
  const children = [server.child, scripted.child, chatgpt.child, ...(double.child ? [double.child] : [])]
  const everything = everythingMissing() ? undefined : await startEverything(logFile).catch(async (e) => {
    for (const c of children) c.kill('SIGTERM')
    throw e
  })

  async function stop() {
    await everything?.stop()
    for (const c of children) {
      if (c.exitCode === null) {
        c.removeAllListeners('exit')
        c.kill('SIGTERM')
        await new Promise((r) => { c.once('exit', r); setTimeout(r, 5000) })
      }
    }
    rmSync(tmp, { recursive: true, force: true })
  }
  const e2b = { api: double.api ?? '', domain: double.domain ?? '', missing: double.missing }
  return { baseURL, token, scriptedURL, bin, everythingURL: everything?.url ?? '', e2b, chatgpt: { issuer: chatgpt.issuer, backend: chatgpt.backend },
    ...apiClient(baseURL, token), stop, tmp }
}
