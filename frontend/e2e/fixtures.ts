// The suite's fixtures. Every test gets its own admin user (so its
// conversations, projects and private providers and agents are its own) and
// a browser context signed in as that user; what a test needs beyond that it
// makes itself, through the API or — when the test is about making it —
// through the UI. Console errors on any page of the test fail it, unless the
// test expects them (expectConsole).
import { test as base, expect, type Page, type TestInfo } from '@playwright/test'
import { exclusive } from './lock'
import { apiClient, chromiumMissing, everythingMissing } from './stack.mjs'

export { expect }

type Client = ReturnType<typeof apiClient>

/** The stack global-setup.ts started: its addresses, and the API as the bootstrap admin. */
export interface Stack extends Client {
  baseURL: string
  /** The bootstrap admin's token (the one in the server's ready link). */
  token: string
  scriptedURL: string
  /** The MCP reference server's streamable HTTP endpoint; '' when it is not installed. */
  everythingURL: string
  /** The E2B double: its control plane and sandbox domain, or why it is missing. */
  e2b: { api: string; domain: string; missing: string }
  /** The ChatGPT double the server signs chatgpt_login providers in at: its auth server and Codex backend. */
  chatgpt: { issuer: string; backend: string }
}

/** The MCP reference server, for one test at a time: the name its tools are called by (scripts name them) is free while the test holds it. */
export interface Everything {
  url: string
  /** The server name the scripts' tool calls use: everything__echo. */
  name: 'everything'
}

/** A user made for one test, with the API as that user. */
export interface User extends Client {
  id: string
  username: string
  password: string
  role: 'admin' | 'member'
  token: string
}

// Loose shapes of what the tests read back; the API types live in src/.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Row = Record<string, any> & { id: string; name: string }

interface Fixtures {
  /** Whether the test's browser context starts signed in as `user` (default true). */
  signedIn: boolean
  /** A short tag unique to this test, for names other tests must not share. */
  tag: string
  /** Makes a user of this test's own (created by the bootstrap admin, signed in over the API). */
  newUser: (role: 'admin' | 'member', name: string) => Promise<User>
  /** This test's own admin: the browser is signed in as it. */
  user: User
  /** Agents on the scripted model, owned by `user`: an agent named `<name> <tag>` (its provider is made on first use). */
  agentFor: (name: string, model: string, extra?: Record<string, unknown>) => Promise<Row>
  /**
   * The MCP reference server, with its name free for this test to register
   * (held against other workers until the test ends, when the test user's
   * agents selecting its tools and the server itself are deleted). Without
   * it installed the test skips, and fails under AGENTS_CI=1.
   */
  everything: Everything
  _skipWithoutChromium: void
  _consoleErrors: void
}

export const test = base.extend<Fixtures, { stack: Stack }>({
  // Without Chromium (and so without a stack) every test skips. Playwright's
  // own fixtures take the context options — and so `storageState`, `user`
  // and `stack` — before any auto fixture of ours, so `user` skips too, and
  // `stack` stands in empty rather than fail first.
  _skipWithoutChromium: [async ({}, use, testInfo) => {
    skipWithoutChromium(testInfo)
    await use()
  }, { auto: true }],

  stack: [async ({}, use) => {
    const { E2E_BASE_URL: baseURL = '', E2E_TOKEN: token = '', E2E_SCRIPTED_URL: scriptedURL = '', E2E_EVERYTHING_URL: everythingURL = '' } = process.env
    if ((!baseURL || !token || !scriptedURL) && !chromiumMissing()) {
      throw new Error('no stack: run the suite with `npx playwright test` (its global setup starts one)')
    }
    const e2b = { api: process.env.E2E_E2B_API ?? '', domain: process.env.E2E_E2B_DOMAIN ?? '', missing: process.env.E2E_E2B_MISSING ?? '' }
    const chatgpt = { issuer: process.env.E2E_CHATGPT_ISSUER ?? '', backend: process.env.E2E_CHATGPT_BACKEND ?? '' }
    await use({ baseURL, token, scriptedURL, everythingURL, e2b, chatgpt, ...apiClient(baseURL, token) })
  }, { scope: 'worker' }],

  // Read here, not from `stack`, as Playwright's own fixtures take it first.
  baseURL: async ({}, use) => {
    await use(process.env.E2E_BASE_URL)
  },

  signedIn: [true, { option: true }],

  tag: async ({}, use) => {
    await use(Math.random().toString(36).slice(2, 7))
  },

  newUser: async ({ stack, tag }, use) => {
    let n = 0
    await use(async (role, name) => {
      const username = `${name}-${tag}${n++ ? `-${n}` : ''}`
      const password = `password of ${username}`
      const created = await stack.api('POST', '/auth/users', { username, password, role })
      const { token } = await stack.api('POST', '/auth/login', { username, password })
      return { id: created.id, username, password, role, token, ...apiClient(stack.baseURL, token) }
    })
  },

  user: async ({ newUser }, use, testInfo) => {
    skipWithoutChromium(testInfo)
    await use(await newUser('admin', 'admin'))
  },

  storageState: async ({ signedIn, user, stack }, use) => {
    // What the sign-in link leaves behind (src/lib/auth.ts): the token in localStorage.
    await use(signedIn ? { cookies: [], origins: [{ origin: stack.baseURL, localStorage: [{ name: 'agents.token', value: user.token }] }] } : undefined)
  },

  agentFor: async ({ user, stack, tag }, use) => {
    let provider: Promise<Row> | undefined
    await use(async (name, model, extra = {}) => {
      provider ??= user.api('POST', '/providers', { name: `scripted-${tag}`, base_url: stack.scriptedURL, api_key: 'any-key' })
      return user.api('POST', '/agents', { name: `${name} ${tag}`, model, provider_id: (await provider).id, ...extra })
    })
  },

  everything: async ({ stack, user }, use, testInfo) => {
    const missing = stack.everythingURL ? '' : everythingMissing() || 'the MCP reference server did not start'
    if (missing && process.env.AGENTS_CI === '1') throw new Error(`e2e: ${missing}; AGENTS_CI=1 requires it`)
    testInfo.skip(!!missing, missing)
    const name = 'everything'
    const release = await exclusive(`mcp-${name}`, 80_000)
    try {
      await use({ url: stack.everythingURL, name })
    } finally {
      try {
        // A server is not deleted while an agent selects its tools.
        const agents: Row[] = await user.api('GET', '/agents')
        for (const a of agents.filter((x) => x.owner_id === user.id && x.tools?.some((t: string) => t.startsWith(`${name}__`)))) {
          await user.api('DELETE', `/agents/${a.id}`)
        }
        const servers: Row[] = await stack.api('GET', '/mcp-servers')
        for (const s of servers.filter((x) => x.name.toLowerCase() === name)) await user.api('DELETE', `/mcp-servers/${s.id}`)
      } finally {
        release()
      }
    }
  },

  // Console errors fail the test that caused them: every page of the test's
  // context is watched. A test that provokes a refusal on purpose (a 400, a
  // wrong password) names the browser's own log line for it (expectConsole).
  _consoleErrors: [async ({ context }, use, testInfo) => {
    const errors: string[] = []
    const watch = (page: Page) => {
      page.on('console', (m) => { if (m.type() === 'error') errors.push(`${page.url()}: ${m.text()}`) })
      page.on('pageerror', (e) => errors.push(`${page.url()}: ${e.message}`))
    }
    context.pages().forEach(watch)
    context.on('page', watch)
    await use()
    const allowed = expectedConsole(testInfo)
    const left = errors.filter((e) => !allowed.some((re) => re.test(e)))
    if (!left.length) return
    // A test that failed already (its cleanup may delete what a page still
    // shows) keeps them as an attachment; one that passed fails on them —
    // thrown here, it still gets its screenshots and trace.
    if (testInfo.status !== testInfo.expectedStatus) {
      await testInfo.attach('console-errors', { body: left.join('\n'), contentType: 'text/plain' })
      return
    }
    throw new Error(`console errors:\n  ${left.join('\n  ')}`)
  }, { auto: true }],
})

function skipWithoutChromium(testInfo: TestInfo) {
  const missing = chromiumMissing()
  testInfo.skip(!!missing, missing)
}

const EXPECT_CONSOLE = 'expect-console'

/**
 * The console errors a test provokes on purpose, as its annotations:
 * `test('…', { annotation: expectConsole(/status of 400/) }, …)`.
 */
export function expectConsole(...patterns: RegExp[]) {
  return patterns.map((re) => ({ type: EXPECT_CONSOLE, description: String(re) }))
}

function expectedConsole(testInfo: TestInfo): RegExp[] {
  return testInfo.annotations.filter((a) => a.type === EXPECT_CONSOLE && a.description).map((a) => {
    const m = /^\/(.*)\/([a-z]*)$/s.exec(a.description!)
    return m ? new RegExp(m[1], m[2]) : new RegExp(a.description!)
  })
}

// Helpers the tests share.

/** Starts a conversation from the home page's composer with the agent named agentName; answers its session id. */
export async function newConversation(page: Page, agentName: string, text: string) {
  await page.goto('/')
  await page.getByLabel('Agent').selectOption({ label: agentName })
  await page.getByLabel('Message').fill(text)
  await page.keyboard.press('Enter')
  await page.waitForURL(/\/s\//)
  return page.url().split('/s/')[1]
}

/** A session of user's with agent, after one finished run of input (made over the API, not the UI). */
export async function conversationFor(user: User, agentId: string, input: string): Promise<string> {
  const session = await user.api('POST', '/sessions', { agent_config_id: agentId })
  const run = await user.api('POST', `/sessions/${session.id}/runs`, { input }, user.token, { Prefer: 'wait=60' })
  if (run.status !== 'completed') throw new Error(`the run of ${JSON.stringify(input)} ended ${JSON.stringify(run)}`)
  return session.id
}

/** The open conversation has no live run. */
export async function idle(page: Page, timeout?: number) {
  await expect(page.locator('.conversation'), 'the run to end').toHaveAttribute('data-run-status', 'idle', { timeout })
}

export const assistantTexts = (page: Page) => page.locator('.msg-assistant .markdown').allInnerTexts()

/** The inspector, opened if it is not. */
export async function inspector(page: Page) {
  const panel = page.getByRole('complementary', { name: 'Inspector' })
  if (!(await panel.count())) await page.getByRole('button', { name: 'Toggle the inspector' }).click()
  return panel
}
