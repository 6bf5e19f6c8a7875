// Sandboxes, projects, the composer's project picker, sandbox tool cards
// and the terminal. The first two tests need no Docker daemon; the last runs
// against the daemon DOCKER_HOST names (skipped without one, required
// under AGENTS_CI=1).
import { readFileSync } from 'node:fs'
import { Skip } from './harness.mjs'
import { agentFor, idle, until } from './helpers.mjs'

const IMAGE = 'agents-sandbox:test'

/** Signs the browser in as someone else: a different path, so nothing of the previous user stays cached. */
async function signInAs(page, stack, token, path = '/settings/projects') {
  await page.goto(`${stack.baseURL}${path}#token=${token}`)
  await page.getByRole('navigation', { name: 'Conversations' }).waitFor()
}

async function member(stack, username) {
  const password = 'member password 1'
  await stack.api('POST', '/auth/users', { username, password, role: 'member' })
  const { token } = await stack.api('POST', '/auth/login', { username, password })
  return token
}

/** The docker-backed test's sandbox, or a skip (a failure under AGENTS_CI=1) saying why there is none. */
async function dockerSandbox(stack) {
  const missing = (why) => {
    if (process.env.AGENTS_CI === '1') throw new Error(`the docker browser test is required (AGENTS_CI=1): ${why}`)
    throw new Skip(why)
  }
  if (!process.env.DOCKER_HOST) missing('DOCKER_HOST is not set (e.g. export DOCKER_HOST=unix:///tmp/agents-docker/docker.sock)')
  const sb = await stack.api('POST', '/sandboxes', { name: 'docker-e2e', type: 'docker', config: { image: IMAGE, memory_mb: 512, cpus: 1 } })
  const t = await stack.request('POST', `/sandboxes/${sb.id}/test`)
  if (t.ok && t.data.ok) return sb
  await stack.request('DELETE', `/sandboxes/${sb.id}`)
  missing(t.status === 502 ? `the daemon at ${process.env.DOCKER_HOST} does not answer: ${t.text}` : `the daemon cannot run ${IMAGE}: ${t.text}`)
}

/** The text on the xterm screen, one string per row. */
const screenRows = async (page) => (await page.locator('.terminal-panel .xterm-rows').innerText()).split('\n').map((l) => l.replace(/\u00a0/g, ' ').trimEnd())

export const sandboxTests = [
  {
    name: 'sandboxes and projects: admin adds a sandbox, a member makes a project and binds a conversation to it',
    expectConsole: [/status of 400/, /status of 409/, /status of 502/],
    async fn({ page, stack }) {
      // The admin's Sandboxes panel: a field error from the server, then a save.
      await page.goto(`${stack.baseURL}/settings/sandboxes`)
      await page.getByRole('button', { name: 'Add sandbox' }).click()
      const form = page.getByRole('form', { name: 'New sandbox' })
      await form.getByLabel('Name', { exact: true }).fill('local-docker')
      await form.getByLabel('SSH password').fill('hunter2')
      await form.getByRole('button', { name: 'Save' }).click()
      await form.locator('.field.has-error[data-field="Image"]').getByText('is required').waitFor()
      await form.getByLabel('Image').fill(IMAGE)
      await form.getByLabel('Memory (MiB)').fill('512')
      await form.getByRole('button', { name: 'Save' }).click()
      const row = page.locator('[data-sandbox="local-docker"]')
      await row.getByText(IMAGE).waitFor()
      let sb = (await stack.api('GET', '/sandboxes')).find((s) => s.name === 'local-docker')
      if (sb.config.image !== IMAGE || sb.config.memory_mb !== 512 || sb.config.ssh_password !== '********') throw new Error(`saved as ${JSON.stringify(sb.config)}`)

      // Compare-and-set: a save based on an old revision is refused, and reloading shows what changed.
      await row.getByRole('button', { name: 'Edit' }).click()
      const edit = page.getByRole('form', { name: 'Edit local-docker' })
      await edit.getByLabel('SSH password').waitFor()
      if ((await edit.getByLabel('SSH password').inputValue()) !== '********') throw new Error('the stored password is not shown masked')
      await stack.api('PUT', `/sandboxes/${sb.id}`, { name: sb.name, type: sb.type, config: sb.config, prompt: 'Changed elsewhere.' })
      await edit.getByLabel('Memory (MiB)').fill('1024')
      await edit.getByRole('button', { name: 'Save' }).click()
      await edit.getByText('changed elsewhere while you edited it').waitFor()
      await edit.getByRole('button', { name: 'Reload' }).click()
      const reloaded = page.getByRole('form', { name: 'Edit local-docker' })
      await until(async () => (await reloaded.getByLabel('Prompt').inputValue()) === 'Changed elsewhere.', 'the reloaded prompt')
      if ((await reloaded.getByLabel('Memory (MiB)').inputValue()) !== '512') throw new Error('the reload kept the stale edit')
      await reloaded.getByLabel('Memory (MiB)').fill('1024')
      await reloaded.getByRole('button', { name: 'Clear' }).click()
      await reloaded.getByRole('button', { name: 'Save' }).click()
      await reloaded.waitFor({ state: 'detached' })
      sb = await stack.api('GET', `/sandboxes/${sb.id}`)
      if (sb.config.memory_mb !== 1024 || sb.prompt !== 'Changed elsewhere.' || sb.config.ssh_password !== '') throw new Error(`after the reload: ${JSON.stringify(sb)}`)

      // A member: a project with a write-only environment variable.
      const token = await member(stack, 'mia')
      try {
        await signInAs(page, stack, token)
        await page.getByRole('button', { name: 'Projects' }).click()
        await page.getByRole('button', { name: 'New project' }).click()
        const pf = page.getByRole('form', { name: 'New project' })
        await pf.getByLabel('Name', { exact: true }).fill('demo')
        await pf.getByLabel('Sandbox').selectOption({ label: 'local-docker (docker)' })
        await pf.getByRole('button', { name: 'Add variable' }).click()
        await pf.getByLabel('Variable 1 name').fill('GREETING')
        await pf.getByLabel('Variable 1 value').fill('hello-env')
        await pf.getByRole('button', { name: 'Save' }).click()
        const prow = page.locator('[data-project="demo"]')
        await prow.waitFor()
        const project = (await stack.api('GET', '/projects', undefined, token)).find((p) => p.name === 'demo')
        const read = await stack.api('GET', `/projects/${project.id}`, undefined, token)
        if (JSON.stringify(read.env) !== JSON.stringify([{ name: 'GREETING', value: '********' }])) throw new Error(`env read back as ${JSON.stringify(read.env)}`)

        // Editing shows the value masked; saving with the mask keeps it, next to a new one.
        await prow.getByRole('button', { name: 'Edit' }).click()
        const ef = page.getByRole('form', { name: 'Edit demo' })
        await ef.getByLabel('Variable 1 value').waitFor()
        if ((await ef.getByLabel('Variable 1 name').inputValue()) !== 'GREETING') throw new Error('the variable name is not shown')
        if ((await ef.getByLabel('Variable 1 value').inputValue()) !== '********') throw new Error('the stored value is not masked')
        await ef.getByRole('button', { name: 'Add variable' }).click()
        await ef.getByLabel('Variable 2 name').fill('SECOND')
        await ef.getByLabel('Variable 2 value').fill('two')
        await ef.getByRole('button', { name: 'Save' }).click()
        await ef.waitFor({ state: 'detached' })
        const env = (await stack.api('GET', `/projects/${project.id}`, undefined, token)).env
        if (env.map((v) => `${v.name}=${v.value}`).join(' ') !== 'GREETING=******** SECOND=********') throw new Error(`env after the edit: ${JSON.stringify(env)}`)

        // The composer's picker binds a conversation on its first message; then the chip is fixed.
        const prov = await stack.api('POST', '/providers', { name: 'mia-scripted', base_url: stack.scriptedURL, api_key: 'k' }, token)
        await stack.api('POST', '/agents', { name: 'Worker', model: 'echo', provider_id: prov.id }, token)
        await page.goto(stack.baseURL + '/')
        await page.getByLabel('Agent').selectOption({ label: 'Worker' })
        await page.getByLabel('Project', { exact: true }).selectOption({ label: 'demo' })
        await page.getByLabel('Message').fill('hello project')
        await page.keyboard.press('Enter')
        await page.waitForURL(/\/s\//)
        const sid = page.url().split('/s/')[1]
        await page.locator('.msg-assistant', { hasText: 'You said: hello project' }).waitFor()
        await page.locator('.composer .project-chip', { hasText: 'demo' }).waitFor()
        await until(async () => (await page.getByLabel('Project', { exact: true }).count()) === 0, 'the picker to give way to the chip')
        const session = await stack.api('GET', `/sessions/${sid}`, undefined, token)
        if (session.project_id !== project.id) throw new Error(`the session is bound to ${session.project_id}`)
        await page.locator('.conv-head').getByRole('button', { name: 'Terminal' }).waitFor()
        await idle(page)
        await page.getByRole('button', { name: 'New session on another project' }).click()
        await page.waitForURL((u) => u.pathname === '/')
        await page.getByLabel('Project', { exact: true }).waitFor()

        // A project a conversation binds cannot be deleted: the refusal is shown.
        await page.getByRole('button', { name: 'Projects' }).click()
        await prow.getByText('1 conversation bound').waitFor()
        await prow.getByRole('button', { name: 'Delete' }).click()
        await prow.getByRole('button', { name: 'Delete with its files?' }).click()
        await prow.getByRole('alert').filter({ hasText: 'bind this project' }).waitFor()

        // The admin's sign-in link pasted into this same tab: nothing of the member's stays on screen.
        await page.evaluate((t) => { location.hash = `token=${t}` }, stack.token)
        await page.locator('.who', { hasText: 'admin' }).waitFor()
        await page.getByText('No projects yet.').waitFor()
        if (await page.locator('[data-project="demo"]').count()) throw new Error("the member's project is still listed")
      } finally {
        await signInAs(page, stack, stack.token, '/')
      }
    },
  },
  {
    name: 'sandboxes: E2B is not offered as if it ran; an ssh:// host shows its pinned key, which an admin resets',
    async fn({ page, stack }) {
      const e2b = await stack.api('POST', '/sandboxes', { name: 'cloud-e2b', type: 'e2b', config: { template_id: 'base' } })
      const remote = await stack.api('POST', '/sandboxes', { name: 'remote-ssh', type: 'docker', config: { image: IMAGE, host: 'ssh://deploy@192.0.2.1', ssh_password: 'pw' } })
      // The server pins a key only when a host answers SSH (the Go API test
      // covers that); the browser is shown one by adding it to the listing.
      const pinned = { type: 'ssh-ed25519', fingerprint: 'SHA256:q2Hq0cVAdbBr0Y4JZ1O2Jx7m3dm2L8fQ6YtG0s9fXk4', public_key: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIPinned', pinned_at: '2026-05-01T12:00:00Z' }
      let showPin = true
      await page.route('**/api/v1/sandboxes', async (route) => {
        const res = await route.fetch()
        const list = await res.json()
        await route.fulfill({ response: res, json: list.map((s) => (s.id === remote.id && showPin ? { ...s, ssh_host_key: pinned } : s)) })
      })
      const token = await member(stack, 'noor')
      try {
        // An e2b row says it does not run yet and offers neither Test nor Containers.
        await page.goto(`${stack.baseURL}/settings/sandboxes`)
        const e2bRow = page.locator('[data-sandbox="cloud-e2b"]')
        await e2bRow.locator('.pill', { hasText: 'not available yet' }).waitFor()
        if (await e2bRow.getByRole('button', { name: 'Test' }).count()) throw new Error('an e2b row offers Test')
        if (await e2bRow.getByRole('button', { name: 'Containers' }).count()) throw new Error('an e2b row offers Containers')
        if (!(await page.locator('[data-sandbox="remote-ssh"]').getByRole('button', { name: 'Test' }).count())) throw new Error('a docker row lost Test')

        // A new sandbox cannot be made an e2b one; editing the e2b row keeps its type.
        await page.getByRole('button', { name: 'Add sandbox' }).click()
        const form = page.getByRole('form', { name: 'New sandbox' })
        const e2bOption = form.getByLabel('Type').locator('option[value="e2b"]')
        await until(async () => (await e2bOption.textContent()) === 'e2b — not available yet', 'e2b marked not available')
        if (!(await e2bOption.isDisabled())) throw new Error('e2b is offered for a new sandbox')
        if (await form.getByLabel('Type').locator('option[value="docker"]').isDisabled()) throw new Error('docker is not offered')
        await form.getByRole('button', { name: 'Cancel' }).click()
        await e2bRow.getByRole('button', { name: 'Edit' }).click()
        const edit = page.getByRole('form', { name: 'Edit cloud-e2b' })
        if ((await edit.getByLabel('Type').inputValue()) !== 'e2b') throw new Error('the e2b row lost its type in the form')
        await edit.getByText('cannot run this type yet').waitFor()
        await edit.getByRole('button', { name: 'Cancel' }).click()

        // A member sees the pinned key but cannot reset it.
        await signInAs(page, stack, token, '/settings/sandboxes')
        const memberRow = page.locator('[data-sandbox="remote-ssh"]')
        await memberRow.getByText(pinned.fingerprint).waitFor()
        if (await memberRow.getByRole('button', { name: 'Reset host key' }).count()) throw new Error('a member is offered the reset')

        // The admin resets it: the row says the next connection pins the key it meets.
        await signInAs(page, stack, stack.token, '/settings/sandboxes')
        const row = page.locator('[data-sandbox="remote-ssh"]')
        await row.getByText(`${pinned.type} ${pinned.fingerprint}`).waitFor()
        await row.getByRole('button', { name: 'Reset host key' }).click()
        showPin = false
        const [reset] = await Promise.all([
          page.waitForResponse((r) => r.request().method() === 'DELETE' && r.url().endsWith(`/sandboxes/${remote.id}/ssh-host-key`)),
          row.getByRole('button', { name: 'Forget this key?' }).click(),
        ])
        if (reset.status() !== 204) throw new Error(`the reset answered ${reset.status()}`)
        await row.getByText('none pinned yet').waitFor()
        await row.getByRole('status').filter({ hasText: 'next connection pins' }).waitFor()
      } finally {
        await page.unroute('**/api/v1/sandboxes')
        await signInAs(page, stack, stack.token, '/')
        await stack.request('DELETE', `/sandboxes/${e2b.id}`)
        await stack.request('DELETE', `/sandboxes/${remote.id}`)
      }
    },
  },
  {
    name: 'sandbox (docker): exec_command streams into its card, the terminal runs a shell, files download as a tar',
    async fn({ page, stack, shared }) {
      const sb = await dockerSandbox(stack)
      const project = await stack.api('POST', '/projects', { name: 'box', sandbox_id: sb.id, env: [{ name: 'GREETING', value: 'hello-env' }] })
      let sid
      try {
        await agentFor(stack, shared, 'Sandboxer', 'sandbox')
        await page.goto(stack.baseURL + '/')
        await page.getByLabel('Agent').selectOption({ label: 'Sandboxer' })
        await page.getByLabel('Project', { exact: true }).selectOption({ label: 'box' })
        await page.getByLabel('Message').fill('run it in the box')
        await page.keyboard.press('Enter')
        await page.waitForURL(/\/s\//)
        sid = page.url().split('/s/')[1]

        // Live: the output streams into the card while the command runs, then the result replaces it.
        const card = page.locator('.tool-card[data-tool="exec_command"]')
        const cmd = 'echo hi-from-sandbox; sleep 2; echo second-line'
        const streamed = card.locator('.terminal-output.running', { hasText: 'hi-from-sandbox' })
        await streamed.waitFor({ timeout: 60_000 })
        if ((await streamed.innerText()).includes('second-line')) throw new Error('the output arrived whole, not streamed')
        const done = card.locator('.terminal-output:not(.running)')
        await done.getByText('second-line').waitFor()
        await idle(page)
        const checkCard = async () => {
          if ((await card.locator('.tool-title').innerText()) !== cmd) throw new Error(`card title: ${await card.locator('.tool-title').innerText()}`)
          await card.locator('.tool-summary', { hasText: 'exit 0' }).waitFor()
          await card.locator('.pill', { hasText: 'Done' }).waitFor()
          const out = await done.innerText()
          if (!out.includes('exit_code: 0') || !out.includes('hi-from-sandbox') || !out.includes('second-line')) throw new Error(`card output: ${out}`)
        }
        await checkCard()
        // A reload draws the same card from the stored output.
        await page.reload()
        await done.waitFor()
        await checkCard()
        // apply_patch's card shows its patch as a diff.
        const patchCard = page.locator('.tool-card[data-tool="apply_patch"]')
        await patchCard.locator('.pill', { hasText: 'Done' }).waitFor()
        await patchCard.locator('.tool-head').click()
        await patchCard.locator('.patch-view .patch-add', { hasText: '+ship it' }).waitFor()

        // The terminal, from the bound conversation: a shell in the project's container.
        await page.locator('.conv-head').getByRole('button', { name: 'Terminal' }).click()
        const panel = page.getByRole('dialog', { name: 'Terminal: box' })
        await panel.getByRole('status').filter({ hasText: 'Live' }).waitFor({ timeout: 60_000 })
        // xterm's own styles arrive (as adopted sheets, the CSP refusing inline <style>): its theme colours the rows.
        const color = await panel.locator('.xterm-rows').evaluate((el) => getComputedStyle(el).color)
        if (color !== 'rgb(230, 230, 236)') throw new Error(`the terminal is unstyled (rows colour ${color})`)
        await panel.locator('.terminal-screen').click()
        await page.keyboard.type('echo $((6*7)); echo "$GREETING" > /workspace/note.txt; cat /workspace/note.txt')
        await page.keyboard.press('Enter')
        await until(async () => {
          const rows = await screenRows(page)
          return rows.includes('42') && rows.includes('hello-env')
        }, '42 and the project variable on the terminal screen')
        // The shell exits: the code is shown and Reconnect opens a new one.
        await page.keyboard.type('exit 3')
        await page.keyboard.press('Enter')
        await panel.getByRole('status').filter({ hasText: 'Exited with code 3' }).waitFor()
        await panel.getByRole('button', { name: 'Reconnect' }).click()
        await panel.getByRole('status').filter({ hasText: 'Live' }).waitFor({ timeout: 60_000 })
        // A new environment replaces the container: the open terminal is severed, saying why; a reconnect sees the new value.
        await stack.api('PUT', `/projects/${project.id}`, { name: 'box', sandbox_id: sb.id, env: [{ name: 'GREETING', value: 'changed-env' }] })
        await panel.getByRole('alert').filter({ hasText: 'environment or its sandbox changed' }).waitFor()
        await panel.getByRole('button', { name: 'Reconnect' }).click()
        await panel.getByRole('status').filter({ hasText: 'Live' }).waitFor({ timeout: 60_000 })
        await panel.locator('.terminal-screen').click()
        await page.keyboard.type('echo "now $GREETING"')
        await page.keyboard.press('Enter')
        await until(async () => (await screenRows(page)).includes('now changed-env'), 'the new environment in the new shell')
        await panel.getByRole('button', { name: 'Close the terminal' }).click()
        await panel.waitFor({ state: 'detached' })

        // Download files: the project's /workspace as a tar.
        await page.getByRole('button', { name: 'Projects' }).click()
        const row = page.locator('[data-project="box"]')
        const [download, response] = await Promise.all([
          page.waitForEvent('download'),
          page.waitForResponse((r) => r.url().endsWith(`/projects/${project.id}/export`)),
          row.getByRole('button', { name: 'Download files' }).click(),
        ])
        if (response.status() !== 200 || response.headers()['content-type'] !== 'application/x-tar') throw new Error(`export answered ${response.status()} ${response.headers()['content-type']}`)
        if (download.suggestedFilename() !== 'box.tar') throw new Error(`saved as ${download.suggestedFilename()}`)
        const tar = readFileSync(await download.path())
        if (tar.subarray(257, 262).toString() !== 'ustar' || !tar.includes('note.txt') || !tar.includes('hello-env') || !tar.includes('ship it')) throw new Error(`not the project's tar (${tar.length} bytes)`)

        // The instance by hand: stop (now, or once the closed terminal lets go), start, rebuild.
        const state = row.locator('.sandbox-state [data-state]')
        await until(async () => (await state.getAttribute('data-state')) === 'running', 'the running state')
        await row.getByRole('button', { name: 'Stop' }).click()
        await until(async () => (await state.getAttribute('data-state')) === 'stopped' || (await row.getByText('will stop when the current work ends').count()) > 0, 'the stop')
        await row.getByRole('button', { name: 'Start' }).or(row.getByRole('button', { name: 'Stop' })).first().waitFor()
        if (await row.getByRole('button', { name: 'Start' }).count()) await row.getByRole('button', { name: 'Start' }).click()
        await until(async () => (await state.getAttribute('data-state')) === 'running', 'the restart', 60_000)
        await row.getByRole('button', { name: 'Rebuild' }).click()
        await row.locator('.pill', { hasText: 'Rebuilding' }).waitFor({ state: 'detached', timeout: 60_000 })
        if (await row.locator('.state-note[role="alert"]').count()) throw new Error(`rebuild: ${await row.locator('.state-note').innerText()}`)
        await until(async () => (await state.getAttribute('data-state')) === 'running', 'the rebuilt instance', 60_000)

        // The admin's view of the daemon: the test command and the project's container.
        await page.getByRole('tab', { name: 'Sandboxes' }).click()
        const sbRow = page.locator('[data-sandbox="docker-e2e"]')
        await sbRow.getByRole('button', { name: 'Test' }).click()
        await sbRow.locator('[data-test-result="ok"]').waitFor({ timeout: 60_000 })
        await sbRow.getByRole('button', { name: 'Containers' }).click()
        const tail = project.id.replaceAll('-', '').slice(-12)
        await sbRow.locator(`[data-container="agents-${tail}"]`).getByText('running').waitFor()
      } finally {
        // Leave nothing on the daemon: the project's delete removes its container and volume.
        if (sid) await stack.request('DELETE', `/sessions/${sid}`)
        const del = await stack.request('DELETE', `/projects/${project.id}`)
        if (!del.ok || del.data.storage_error) console.log(`      cleanup: project delete answered ${del.status} ${del.text}`)
        await stack.request('DELETE', `/sandboxes/${sb.id}`)
      }
    },
  },
]
