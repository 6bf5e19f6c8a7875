// Regenerates docs/screenshots/*.png from the real stack: npm run screenshots
// (after npm run build; AGENTS_BIN may name a prebuilt binary;
// SCREENSHOTS_DIR writes them elsewhere, to look before replacing). A plain
// script, not a test: it shares the suite's stack and Chromium launch
// (stack.mjs).
import { chromium } from '@playwright/test'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { apiClient, chromiumLaunch, chromiumMissing, repoDir, startStack } from './stack.mjs'

const missing = chromiumMissing()
if (missing) {
  if (process.env.AGENTS_CI === '1') {
    console.error(`screenshots: FAIL — ${missing}; AGENTS_CI=1 requires Chromium`)
    process.exit(1)
  }
  console.log(`screenshots: SKIP — ${missing}`)
  process.exit(0)
}
const out = process.env.SCREENSHOTS_DIR || join(repoDir, 'docs/screenshots')
mkdirSync(out, { recursive: true })

const stack = await startStack()
const ctx = await chromium.launchPersistentContext(join(stack.tmp, 'profile'), { ...chromiumLaunch, viewport: { width: 1280, height: 800 }, deviceScaleFactor: 1 })
ctx.setDefaultTimeout(20_000)
const page = ctx.pages()[0] ?? (await ctx.newPage())
const shot = async (name, p = page) => {
  await p.waitForTimeout(300)
  await p.screenshot({ path: join(out, `${name}.png`) })
  console.log('wrote', join(out, `${name}.png`))
}
const idle = (p) => p.waitForFunction(() => document.querySelector('.conversation')?.getAttribute('data-run-status') === 'idle')

try {
  // Sign-in, before the token link is used.
  await page.emulateMedia({ colorScheme: 'light' })
  await page.goto(stack.baseURL + '/')
  await page.getByRole('heading', { name: 'Sign in' }).waitFor()
  await shot('sign-in')

  // The first-run screen, as a member with nothing to chat with sees it:
  // connected to the scripted model, a model picked, the first message
  // written (not sent: the provider it saved is removed again).
  const samUser = await stack.api('POST', '/auth/users', { username: 'sam', password: 'first-run password', role: 'member' })
  const sam = await stack.api('POST', '/auth/login', { username: 'sam', password: 'first-run password' })
  await page.goto(`${stack.baseURL}/#token=${sam.token}`)
  const connect = page.getByRole('form', { name: 'Connect a provider' })
  await connect.getByLabel('Base URL').fill(stack.scriptedURL)
  await connect.getByLabel('API key').fill('demo')
  await connect.getByRole('button', { name: 'Connect and list models' }).click()
  const first = page.getByRole('form', { name: 'First message' })
  await first.getByLabel('Model').selectOption('echo')
  await first.getByLabel('Message').fill('Hello! What can you do?')
  await shot('first-run')
  const samClient = apiClient(stack.baseURL, sam.token)
  for (const p of await samClient.api('GET', '/providers')) {
    if (p.owner_id === samUser.id) await samClient.api('DELETE', `/providers/${p.id}`)
  }

  const prov = await stack.api('POST', '/providers', { name: 'scripted', base_url: stack.scriptedURL, api_key: 'demo' })
  await stack.api('POST', '/agents', {
    name: 'Planner', model: 'todo', provider_id: prov.id, avatar: '/avatars/owl.svg', context_window: 128000,
    description: 'Breaks a job into steps and keeps a checklist.', instructions: 'Plan first, then answer briefly.',
  })
  await stack.api('POST', '/agents', { name: 'Careful', model: 'todo', provider_id: prov.id, avatar: '/avatars/lighthouse.svg', approval: { approve_tools: ['todo_write'] } })
  await stack.api('POST', '/agents', { name: 'Architect', model: 'architect', provider_id: prov.id, avatar: '/avatars/fox.svg' })
  await stack.api('POST', '/memories', { key: 'style', content: 'The team prefers short answers with code samples.' })

  await page.goto(`${stack.baseURL}/#token=${stack.token}`)
  await page.getByRole('navigation', { name: 'Conversations' }).waitFor()
  await page.getByLabel('Agent').selectOption({ label: 'Planner' })
  await page.getByLabel('Message').fill('Plan the release of the web UI')
  await page.keyboard.press('Enter')
  await page.waitForURL(/\/s\//)
  await idle(page)
  const sid = page.url().split('/s/')[1]
  await shot('conversation')

  // The inspector: a generation span opened, then the context panel.
  await page.locator('.span-row', { hasText: 'generation' }).first().click()
  await page.locator('.span-detail .json-label', { hasText: 'Output' }).waitFor()
  await shot('inspector-traces')
  await page.getByRole('tab', { name: 'Context' }).click()
  await page.locator('.ctx-big').waitFor()
  await shot('context')

  // An approval waiting inline.
  await page.goto(stack.baseURL + '/')
  await page.getByLabel('Agent').selectOption({ label: 'Careful' })
  await page.getByLabel('Message').fill('Write the release checklist')
  await page.keyboard.press('Enter')
  await page.getByRole('button', { name: 'Approve once' }).waitFor()
  await shot('approval')
  await page.getByRole('button', { name: 'Approve once' }).click()
  await idle(page)

  // Plan mode: the submitted plan waits for approval as a document.
  await page.goto(stack.baseURL + '/')
  await page.getByLabel('Agent').selectOption({ label: 'Architect' })
  await page.getByLabel('Plan', { exact: true }).check()
  await page.getByLabel('Message').fill('Plan the release')
  await page.keyboard.press('Enter')
  await page.getByRole('button', { name: 'Approve plan' }).waitFor()
  await shot('plan')
  await page.getByRole('button', { name: 'Approve plan' }).click()
  await idle(page)

  // An image in the message: the sign-in screenshot, shown to a model the
  // scripted server answers by naming what reached it.
  await stack.api('POST', '/agents', { name: 'Looker', model: 'vision', provider_id: prov.id, avatar: '/avatars/cat.svg' })
  await page.goto(stack.baseURL + '/')
  await page.getByLabel('Agent').selectOption({ label: 'Looker' })
  await page.getByLabel('Image files').setInputFiles(join(out, 'sign-in.png'))
  await page.locator('.composer-thumbs img').waitFor()
  await page.getByLabel('Message').fill('What is on this screen?')
  await page.keyboard.press('Enter')
  await page.waitForURL(/\/s\//)
  await idle(page)
  await shot('images')

  // Dark theme.
  await page.goto(`${stack.baseURL}/s/${sid}`)
  await page.getByRole('button', { name: 'Dark theme' }).click()
  await page.locator('.msg-assistant').first().waitFor()
  await shot('dark')
  await page.getByRole('button', { name: 'Light theme' }).click()

  // Settings: an agent's knobs.
  await page.goto(`${stack.baseURL}/settings/agents`)
  await page.locator('.row', { hasText: 'Planner' }).getByRole('button', { name: 'Edit' }).click()
  await page.getByRole('form', { name: 'Edit Planner' }).waitFor()
  await shot('settings-agents')

  // Workflows: a definition drawn as a flowchart in the hub, then started
  // from the composer and held before its deploy step, watched in the inspector.
  const coder = await stack.api('POST', '/agents', { name: 'Coder', model: 'wf-build', provider_id: prov.id, avatar: '/avatars/robot.svg' })
  const reviewer = await stack.api('POST', '/agents', { name: 'Reviewer', model: 'wf-check', provider_id: prov.id, avatar: '/avatars/owl.svg' })
  const release = await stack.api('POST', '/workflows', {
    name: 'ship', description: 'Builds the change, checks it until it passes, and deploys once a person says so.',
    steps: [
      { name: 'build', agent: coder.id, prompt: 'BUILD-STEP: make the change', compact_before: true },
      { name: 'check', agent: reviewer.id, prompt: 'CHECK-STEP: run the tests and review the diff', gate: true, on_failure: 'build' },
      { name: 'deploy', agent: coder.id, prompt: 'Deploy the release', pause_before: true },
    ],
    budget: { max_steps: 12, max_laps: 3 },
  })
  await page.goto(`${stack.baseURL}/workflows/${release.id}`)
  await page.locator('.wf-detail .react-flow__node').first().waitFor()
  await shot('workflows')

  // Triggers: a nightly schedule of the workflow and a webhook asking an
  // agent, in the hub's Triggers; the webhook opened on its signed example.
  await stack.api('POST', '/triggers', { name: 'nightly', kind: 'cron', schedule: '0 2 * * *', target: 'workflow', workflow_id: release.id, session_id: sid, brief: 'Ship what landed today.' })
  const hook = await stack.api('POST', '/triggers', {
    name: 'on push', kind: 'webhook', target: 'agent', agent_config_id: reviewer.id, session_id: sid, brief: 'Review what was pushed: the payload names the commits.',
  })
  await page.goto(`${stack.baseURL}/workflows`)
  await page.getByRole('table', { name: 'Triggers' }).getByRole('button', { name: 'on push' }).click()
  await page.locator(`tbody[data-trigger-id="${hook.id}"] .trigger-curl`).waitFor()
  await shot('triggers')
  await page.goto(`${stack.baseURL}/s/${sid}`)
  // The composer knows the workflows once they load: wait until it offers this one.
  await page.getByRole('textbox', { name: 'Message' }).fill('/workflow ')
  await page.getByRole('listbox', { name: 'Workflows' }).getByRole('option', { name: /ship/ }).waitFor()
  await page.getByRole('textbox', { name: 'Message' }).fill('/workflow ship fix the login bug')
  await page.keyboard.press('Enter')
  await page.locator('.wf-start-chip').click()
  await page.locator('.timeline .step-approval').waitFor({ timeout: 60_000 })
  await shot('workflow-run')
  await page.getByRole('button', { name: 'Run the step' }).click()
  await idle(page)

  // Projects and the terminal, when a Docker daemon is there (DOCKER_HOST) to run them.
  if (process.env.DOCKER_HOST) {
    const sb = await stack.api('POST', '/sandboxes', {
      name: 'local', type: 'docker', config: { image: process.env.SANDBOX_IMAGE || 'agents-sandbox:test', memory_mb: 1024 },
      prompt: 'A Debian container with a POSIX shell; no network.',
    })
    const web = await stack.api('POST', '/projects', { name: 'web-ui', sandbox_id: sb.id, env: [{ name: 'NODE_ENV', value: 'development' }] })
    const notes = await stack.api('POST', '/projects', { name: 'release-notes', sandbox_id: sb.id })
    await stack.api('POST', `/projects/${web.id}/sandbox/start`, {})
    await stack.api('POST', '/agents', { name: 'Builder', model: 'sandbox', provider_id: prov.id, avatar: '/avatars/robot.svg' })
    let box
    try {
      await page.goto(`${stack.baseURL}/settings/projects`)
      await page.locator('[data-project="web-ui"] [data-state="running"]').waitFor()
      await page.locator('[data-project="release-notes"] [data-state]').waitFor()
      await shot('projects')

      await page.goto(stack.baseURL + '/')
      await page.getByLabel('Agent').selectOption({ label: 'Builder' })
      await page.getByLabel('Project', { exact: true }).selectOption({ label: 'web-ui' })
      await page.getByLabel('Message').fill('Check the sandbox works')
      await page.keyboard.press('Enter')
      await page.waitForURL(/\/s\//)
      box = page.url().split('/s/')[1]
      await idle(page)
      await page.locator('.conv-head').getByRole('button', { name: 'Terminal' }).click()
      const panel = page.getByRole('dialog', { name: 'Terminal: web-ui' })
      await panel.getByRole('status').filter({ hasText: 'Live' }).waitFor({ timeout: 60_000 })
      await panel.locator('.terminal-screen').click()
      await page.keyboard.type('echo "NODE_ENV=$NODE_ENV"; uname -sm; ls -la /workspace')
      await page.keyboard.press('Enter')
      await panel.locator('.xterm-rows', { hasText: 'NODE_ENV=development' }).waitFor()
      await shot('terminal')
      await panel.getByRole('button', { name: 'Close the terminal' }).click()
    } finally {
      // The daemon keeps nothing of the demo: deleting a project removes its container and volume.
      if (box) await stack.api('DELETE', `/sessions/${box}`).catch(() => {})
      for (const p of [web, notes]) await stack.api('DELETE', `/projects/${p.id}`).catch((e) => console.log('cleanup:', e.message))
      await stack.api('DELETE', `/sandboxes/${sb.id}`).catch(() => {})
    }
  } else {
    console.log('skipped projects.png and terminal.png: DOCKER_HOST is not set (they need a Docker daemon holding agents-sandbox:test)')
  }

  // A phone.
  const phone = await ctx.newPage()
  await phone.setViewportSize({ width: 390, height: 844 })
  await phone.goto(`${stack.baseURL}/s/${sid}`)
  await phone.locator('.msg-assistant').first().waitFor()
  await shot('mobile', phone)
} finally {
  await ctx.close()
  await stack.stop()
}
