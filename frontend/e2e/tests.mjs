// The browser tests, run in order against one server (see run.mjs). Each is
// a plain async function; `shared` carries what earlier tests set up.

import { agentFor, assistantTexts, idle, newConversation, sleep, until } from './helpers.mjs'
import { sandboxTests } from './sandbox-tests.mjs'

export const tests = [
  {
    name: 'signs in from the token link',
    always: true,
    async fn({ page, stack }) {
      await page.goto(`${stack.baseURL}/#token=${stack.token}`)
      await page.getByRole('navigation', { name: 'Conversations' }).waitFor()
      if (page.url().includes('token=')) throw new Error('the token stayed in the URL')
      await page.getByText('admin', { exact: true }).waitFor()
    },
  },
  {
    name: 'settings: a provider and an agent made in the UI',
    always: true,
    expectConsole: [/status of 400/],
    async fn({ page, stack, shared }) {
      await page.getByRole('button', { name: 'Settings' }).click()
      await page.getByRole('button', { name: 'Add provider' }).click()
      const form = page.getByRole('form', { name: 'New provider' })
      await form.getByLabel('Name').fill('scripted')
      await form.getByLabel('Base URL').fill(stack.scriptedURL)
      await form.getByLabel('API key').fill('any-key')
      await form.getByRole('button', { name: 'Save' }).click()
      await page.locator('.row', { hasText: 'scripted' }).waitFor()
      const providers = await stack.api('GET', '/providers')
      shared.providerId = providers.find((p) => p.name === 'scripted').id
      if (providers[0].api_key !== '********') throw new Error('the key is not masked')

      await page.getByRole('tab', { name: 'Agents' }).click()
      await page.getByRole('button', { name: 'New agent' }).click()
      await page.getByLabel('Name', { exact: true }).fill('Planner')
      await page.getByLabel('Model', { exact: true }).fill('todo')
      await page.getByLabel('Provider').selectOption({ label: 'scripted' })
      await page.getByRole('radio', { name: 'owl' }).click()
      // A validation error comes back on its field.
      await page.locator('[data-group="behavior"]').getByLabel('Max turns').fill('-3')
      await page.getByRole('button', { name: 'Save' }).first().click()
      await page.locator('[data-group="behavior"] .has-error').first().waitFor()
      await page.locator('[data-group="behavior"]').getByLabel('Max turns').fill('0')
      await page.getByRole('button', { name: 'Save' }).first().click()
      await page.locator('.row', { hasText: 'Planner' }).waitFor()
      const agents = await stack.api('GET', '/agents')
      const planner = agents.find((a) => a.name === 'Planner')
      if (planner.avatar !== '/avatars/owl.svg' || planner.model !== 'todo') throw new Error(`agent saved as ${JSON.stringify(planner)}`)
    },
  },
  {
    name: 'chat: streamed answer, reasoning, checklist tool card, highlighted code',
    async fn({ page, stack, shared }) {
      shared.chatSession = await newConversation(page, stack, 'Planner', 'Plan the release')
      await page.locator('.msg-user .bubble', { hasText: 'Plan the release' }).waitFor()
      // Mid-stream: some text, still growing.
      await until(async () => (await assistantTexts(page)).join('').length > 0, 'streamed text')
      const card = page.locator('.tool-card[data-tool="todo_write"]')
      await card.waitFor()
      await card.locator('.todo', { hasText: 'Stream the answer' }).waitFor()
      await card.getByText('1/3 done').waitFor()
      await page.locator('.msg-assistant .markdown', { hasText: 'Here is the plan' }).waitFor()
      await page.locator('.markdown pre code .hljs-keyword').first().waitFor()
      await page.locator('.reasoning summary', { hasText: 'Thought' }).waitFor()
      // Expanding the card shows its arguments and result.
      await card.locator('.tool-head').click()
      await card.getByText('Checklist saved').waitFor()
      await idle(page)
      // The session got its title from the run.
      await until(async () => (await page.locator('.conv-title').innerText()) !== 'New conversation', 'a title')
    },
  },
  {
    name: 'approval: a gated call waits, both tabs see it, approving resumes the run',
    async fn({ ctx, page, stack, shared }) {
      await agentFor(stack, shared, 'Careful', 'todo', { approval: { approve_tools: ['todo_write'] } })
      const sid = await newConversation(page, stack, 'Careful', 'Plan carefully')
      const card = page.locator('.tool-card[data-tool="todo_write"]')
      await card.getByRole('button', { name: 'Approve once' }).waitFor()
      await page.locator('.conv-head').getByText('Waiting for approval').waitFor()
      const other = await ctx.newPage()
      await other.goto(`${stack.baseURL}/s/${sid}`)
      const otherCard = other.locator('.tool-card[data-tool="todo_write"]')
      await otherCard.getByRole('button', { name: 'Approve once' }).waitFor()
      await card.getByRole('button', { name: 'Approve once' }).click()
      await page.locator('.msg-assistant .markdown', { hasText: 'Here is the plan' }).waitFor()
      await card.getByText('1/3 done').waitFor()
      // The other tab followed the same run live.
      await other.locator('.msg-assistant .markdown', { hasText: 'Here is the plan' }).waitFor()
      await until(async () => !(await otherCard.getByRole('button', { name: 'Approve once' }).count()), 'the approval to leave the other tab')
      const pending = await stack.api('GET', `/sessions/${sid}/approvals`)
      if (pending.length) throw new Error(`still pending: ${JSON.stringify(pending)}`)
    },
  },
  {
    name: 'approval: rejecting with a reason tells the agent',
    async fn({ page, stack }) {
      await newConversation(page, stack, 'Careful', 'Plan it again')
      const card = page.locator('.tool-card[data-tool="todo_write"]')
      await card.getByRole('button', { name: 'Reject…' }).click()
      await card.getByLabel('Reason for rejecting').fill('not now')
      await card.getByRole('button', { name: 'Reject', exact: true }).click()
      await idle(page)
      await card.locator('.pill', { hasText: /Error|Done/ }).waitFor()
    },
  },
  {
    name: 'plan mode: the plan is shown for approval, approving it ends planning and the work starts',
    async fn({ page, stack, shared }) {
      await agentFor(stack, shared, 'Architect', 'architect')
      await page.goto(stack.baseURL + '/')
      await page.getByLabel('Agent').selectOption({ label: 'Architect' })
      await page.getByLabel('Plan', { exact: true }).check()
      await page.getByLabel('Message').fill('Plan the release')
      await page.keyboard.press('Enter')
      await page.waitForURL(/\/s\//)
      await page.locator('.conv-head').getByText('Planning').waitFor()
      const card = page.locator('.tool-card[data-tool="submit_plan"]')
      // The plan is read as Markdown before it is approved.
      await card.locator('.plan-view h2', { hasText: 'Release plan' }).waitFor()
      await card.locator('.plan-view strong', { hasText: 'Tag' }).waitFor()
      await card.getByRole('button', { name: 'Approve plan' }).click()
      await page.locator('.msg-assistant .markdown', { hasText: 'tagging the release now' }).waitFor()
      await idle(page)
      await until(async () => !(await page.locator('.conv-head').getByText('Planning').count()), 'the Planning badge to go')
      await card.locator('.pill', { hasText: 'Done' }).waitFor()
      // A reload shows the approved plan from the stored card.
      await page.reload()
      await page.locator('.tool-card[data-tool="submit_plan"] .plan-view h2', { hasText: 'Release plan' }).waitFor()
    },
  },
  {
    name: 'regenerate, switch branches, fork',
    async fn({ page, stack, shared }) {
      await agentFor(stack, shared, 'Echo', 'echo')
      await newConversation(page, stack, 'Echo', 'hello branches')
      const answer = page.locator('.msg-assistant', { hasText: 'You said: hello branches' })
      await answer.waitFor()
      await idle(page)
      await answer.hover()
      await answer.getByRole('button', { name: 'Regenerate the answer' }).click()
      await page.locator('.branch-count', { hasText: '2 / 2' }).waitFor()
      await idle(page)
      await page.getByRole('button', { name: 'Previous version' }).click()
      await page.locator('.branch-count', { hasText: '1 / 2' }).waitFor()
      await page.getByRole('button', { name: 'Next version' }).click()
      await page.locator('.branch-count', { hasText: '2 / 2' }).waitFor()
      const texts = await assistantTexts(page)
      if (texts.length !== 1) throw new Error(`expected one answer on the active branch, got ${JSON.stringify(texts)}`)
      // Fork from the question: a new conversation holding it.
      const before = page.url()
      const question = page.locator('.msg-user', { hasText: 'hello branches' })
      await question.hover()
      await question.getByRole('button', { name: 'Fork from this message' }).click()
      await until(() => page.url() !== before, 'the fork to open')
      await page.locator('.msg-user .bubble', { hasText: 'hello branches' }).waitFor()
      if ((await assistantTexts(page)).length) throw new Error('the fork copied past the question')
    },
  },
  {
    name: 'reload mid-run: the stream resumes without lost or doubled text',
    async fn({ page, stack, shared }) {
      const full = 'one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty END'
      await agentFor(stack, shared, 'Slow', 'slow')
      await newConversation(page, stack, 'Slow', 'count slowly')
      await until(async () => (await assistantTexts(page)).join('').includes('three'), 'some streamed text')
      await page.reload()
      const seen = []
      await until(async () => {
        const texts = await assistantTexts(page)
        if (texts.length > 1) throw new Error(`two answers after the reload: ${JSON.stringify(texts)}`)
        const t = (texts[0] ?? '').replace(/▍$/, '').trim()
        if (t) seen.push(t)
        if (t && !full.startsWith(t)) throw new Error(`streamed text is not a prefix of the answer: ${JSON.stringify(t)}`)
        return t === full && (await page.locator('.conversation').getAttribute('data-run-status')) === 'idle'
      }, 'the whole answer', 20_000)
      if (!seen.some((t) => t !== full)) throw new Error('the run finished before the reload; nothing was resumed')
      const users = await page.locator('.msg-user .bubble').allInnerTexts()
      if (users.length !== 1 || users[0] !== 'count slowly') throw new Error(`user bubbles: ${JSON.stringify(users)}`)
    },
  },
  {
    name: 'stop: cancelling a live run',
    async fn({ page, stack }) {
      await newConversation(page, stack, 'Slow', 'count again')
      await until(async () => (await assistantTexts(page)).join('').includes('two'), 'some streamed text')
      await page.getByRole('button', { name: 'Stop' }).click()
      await page.locator('.note', { hasText: 'Cancelled' }).waitFor()
      await idle(page)
      // The note outlives the hand-over to the stored transcript, once…
      await sleep(500)
      await page.locator('.note', { hasText: 'Cancelled' }).waitFor()
      if ((await page.locator('.note', { hasText: 'Cancelled' }).count()) !== 1) throw new Error('the cancellation is shown twice')
      // …and a reload: the session stores how the run ended.
      await page.reload()
      await page.locator('.note', { hasText: 'Stopped before it finished' }).waitFor()
      // The inspector says how the run ended.
      const inspector = page.getByRole('complementary', { name: 'Inspector' })
      if (!(await inspector.count())) await page.getByRole('button', { name: 'Toggle the inspector' }).click()
      await inspector.locator('.trace-run .pill', { hasText: 'cancelled' }).waitFor()
    },
  },
  {
    name: 'inspector: open a trace span and the context panel',
    async fn({ page, stack, shared }) {
      await page.goto(`${stack.baseURL}/s/${shared.chatSession}`)
      const inspector = page.getByRole('complementary', { name: 'Inspector' })
      if (!(await inspector.count())) await page.getByRole('button', { name: 'Toggle the inspector' }).click()
      await inspector.locator('.trace-q', { hasText: 'Plan the release' }).waitFor()
      await inspector.locator('.span-row', { hasText: 'generation' }).first().click()
      const detail = inspector.locator('.span-detail')
      await detail.locator('.json-label', { hasText: 'Output' }).waitFor()
      await detail.getByText('Plan the release').first().waitFor()
      await inspector.getByRole('tab', { name: 'Context' }).click()
      await inspector.locator('.ctx-big').waitFor()
      await inspector.getByText('Tools by origin').waitFor()
    },
  },
  {
    name: 'sidebar: rename, pin, search and delete',
    async fn({ page, stack, shared }) {
      await page.goto(`${stack.baseURL}/s/${shared.chatSession}`)
      const row = page.locator(`.session-row[data-session-id="${shared.chatSession}"]`)
      await row.hover()
      await row.getByRole('button', { name: /^Rename/ }).click()
      await row.getByLabel('Conversation name').fill('Release plan')
      await row.getByLabel('Conversation name').press('Enter')
      await row.getByText('Release plan').waitFor()
      await row.hover()
      await row.getByRole('button', { name: /^Pin/ }).click()
      await row.locator('.pin-mark').waitFor()
      await until(async () => (await page.locator('.session-row').first().getAttribute('data-session-id')) === shared.chatSession, 'the pinned row first')
      await page.getByLabel('Search conversations').fill('release')
      await until(async () => (await page.locator('.session-row').count()) === 1, 'one match')
      await page.getByLabel('Search conversations').fill('')
      const victim = page.locator('.session-row', { hasText: 'count slowly' }).or(page.locator('.session-row').last()).first()
      const id = await victim.getAttribute('data-session-id')
      await victim.hover()
      await victim.getByRole('button', { name: /^Delete/ }).click()
      await victim.getByRole('button', { name: 'Delete?' }).click()
      await until(async () => !(await page.locator(`.session-row[data-session-id="${id}"]`).count()), 'the row to go')
    },
  },
  {
    name: 'docs: the API reference renders the served document, offline',
    async fn({ page, stack }) {
      // Every request the page makes stays on this server (the CSP would
      // refuse the rest, and a refusal is a console error that fails the
      // test anyway; this names the address).
      const outside = []
      const track = (r) => { if (!r.url().startsWith(stack.baseURL) && !/^(data|blob):/.test(r.url())) outside.push(r.url()) }
      page.on('request', track)
      try {
        await page.goto(`${stack.baseURL}/docs`)
        // The first tag opens by itself; the others open from the sidebar.
        await page.getByText('createAgent', { exact: true }).first().waitFor()
        await page.getByText('sessions', { exact: true }).first().click()
        await page.getByRole('heading', { name: 'sessions' }).first().waitFor()
        await page.getByText('createSession', { exact: true }).first().waitFor()
        await page.getByText('Start a session').first().waitFor()
      } finally {
        page.off('request', track)
      }
      if (outside.length) throw new Error(`the page reached outside the server: ${outside.join(', ')}`)
    },
  },
  // Sandboxes, projects, the composer's project picker, the terminal.
  ...sandboxTests,
  {
    name: 'sign out and in with a password',
    expectConsole: [/status of 401/],
    async fn({ page, stack }) {
      const me = await stack.api('GET', '/auth/me')
      await stack.api('PATCH', `/auth/users/${me.id}`, { password: 'correct horse battery' })
      await page.goto(stack.baseURL + '/')
      await page.getByRole('button', { name: 'Sign out' }).click()
      await page.getByRole('heading', { name: 'Sign in' }).waitFor()
      await page.getByLabel('Username').fill('admin')
      await page.getByLabel('Password').fill('wrong')
      await page.getByRole('button', { name: 'Sign in' }).click()
      await page.getByRole('alert').waitFor()
      await page.getByLabel('Password').fill('correct horse battery')
      await page.getByRole('button', { name: 'Sign in' }).click()
      await page.getByRole('navigation', { name: 'Conversations' }).waitFor()
    },
  },
]
