// Sandboxes, projects, the composer's project picker, sandbox tool cards
// and the terminal. The first two tests need no Docker daemon; the docker
// one runs against the daemon DOCKER_HOST names, the e2b one against the
// E2B double the stack starts (each skipped without its peer, required
// under AGENTS_CI=1).
import { readFileSync } from 'node:fs'
import { expect, expectConsole, idle, test, type User } from './fixtures'
import { E2B_HEADER, E2B_KEY } from './stack.mjs'
import type { Page } from '@playwright/test'

const IMAGE = 'agents-sandbox:test'

/** Signs the browser in as someone else: a different path, so nothing of the previous user stays cached. */
async function signInAs(page: Page, token: string, path = '/settings/projects') {
  await page.goto(`${path}#token=${token}`)
  await expect(page.getByRole('navigation', { name: 'Conversations' })).toBeVisible()
}

/** The docker-backed test's sandbox, or a skip (a failure under AGENTS_CI=1) saying why there is none. */
async function dockerSandbox(admin: User, name: string) {
  const missing = (why: string): never => {
    if (process.env.AGENTS_CI === '1') throw new Error(`the docker browser test is required (AGENTS_CI=1): ${why}`)
    test.skip(true, why)
    throw new Error('unreachable')
  }
  if (!process.env.DOCKER_HOST) missing('DOCKER_HOST is not set (e.g. export DOCKER_HOST=unix:///tmp/agents-docker/docker.sock)')
  const sb = await admin.api('POST', '/sandboxes', { name, type: 'docker', config: { image: IMAGE, memory_mb: 512, cpus: 1 } })
  const t = await admin.request('POST', `/sandboxes/${sb.id}/test`)
  if (t.ok && t.data.ok) return sb
  await admin.request('DELETE', `/sandboxes/${sb.id}`)
  return missing(t.status === 502 ? `the daemon at ${process.env.DOCKER_HOST} does not answer: ${t.text}` : `the daemon cannot run ${IMAGE}: ${t.text}`)
}

/** The text on the xterm screen, one string per row. */
const screenRows = async (page: Page) => (await page.locator('.terminal-panel .xterm-rows').innerText()).split('\n').map((l) => l.replace(/\u00a0/g, ' ').trimEnd())

test('sandboxes and projects: admin adds a sandbox, a member makes a project and binds a conversation to it', {
  annotation: expectConsole(/status of 400/, /status of 409/, /status of 502/),
}, async ({ page, stack, user, newUser, tag }) => {
  const name = `local-docker-${tag}`
  // The admin's Sandboxes panel: a field error from the server, then a save.
  await page.goto('/settings/sandboxes')
  await page.getByRole('button', { name: 'Add sandbox' }).click()
  const form = page.getByRole('form', { name: 'New sandbox' })
  await form.getByLabel('Name', { exact: true }).fill(name)
  await form.getByLabel('SSH password').fill('hunter2')
  await form.getByRole('button', { name: 'Save' }).click()
  await expect(form.locator('.field.has-error[data-field="Image"]').getByText('is required')).toBeVisible()
  await form.getByLabel('Image').fill(IMAGE)
  await form.getByLabel('Memory (MiB)').fill('512')
  await form.getByRole('button', { name: 'Save' }).click()
  const row = page.locator(`[data-sandbox="${name}"]`)
  await expect(row.getByText(IMAGE)).toBeVisible()
  let sb = (await user.api('GET', '/sandboxes')).find((s: { name: string }) => s.name === name)
  expect(sb.config, `saved as ${JSON.stringify(sb.config)}`).toMatchObject({ image: IMAGE, memory_mb: 512, ssh_password: '********' })

  // Compare-and-set: a save based on an old revision is refused, and reloading shows what changed.
  await row.getByRole('button', { name: 'Edit' }).click()
  const edit = page.getByRole('form', { name: `Edit ${name}` })
  await expect(edit.getByLabel('SSH password')).toBeVisible()
  expect(await edit.getByLabel('SSH password').inputValue(), 'the stored password is shown masked').toBe('********')
  await user.api('PUT', `/sandboxes/${sb.id}`, { name: sb.name, type: sb.type, config: sb.config, prompt: 'Changed elsewhere.' })
  await edit.getByLabel('Memory (MiB)').fill('1024')
  await edit.getByRole('button', { name: 'Save' }).click()
  await expect(edit.getByText('changed elsewhere while you edited it')).toBeVisible()
  await edit.getByRole('button', { name: 'Reload' }).click()
  const reloaded = page.getByRole('form', { name: `Edit ${name}` })
  await expect(reloaded.getByLabel('Prompt'), 'the reloaded prompt').toHaveValue('Changed elsewhere.')
  expect(await reloaded.getByLabel('Memory (MiB)').inputValue(), 'the reload kept the stale edit').toBe('512')
  await reloaded.getByLabel('Memory (MiB)').fill('1024')
  await reloaded.getByRole('button', { name: 'Clear' }).click()
  await reloaded.getByRole('button', { name: 'Save' }).click()
  await reloaded.waitFor({ state: 'detached' })
  sb = await user.api('GET', `/sandboxes/${sb.id}`)
  expect(sb, `after the reload: ${JSON.stringify(sb)}`).toMatchObject({ prompt: 'Changed elsewhere.', config: { memory_mb: 1024, ssh_password: '' } })

  // A member: a project with a write-only environment variable.
  const member = await newUser('member', 'mia')
  await signInAs(page, member.token)
  await page.getByRole('button', { name: 'Projects' }).click()
  await page.getByRole('button', { name: 'New project' }).click()
  const pf = page.getByRole('form', { name: 'New project' })
  await pf.getByLabel('Name', { exact: true }).fill('demo')
  await pf.getByLabel('Sandbox').selectOption({ label: `${name} (docker)` })
  await pf.getByRole('button', { name: 'Add variable' }).click()
  await pf.getByLabel('Variable 1 name').fill('GREETING')
  await pf.getByLabel('Variable 1 value').fill('hello-env')
  await pf.getByRole('button', { name: 'Save' }).click()
  const prow = page.locator('[data-project="demo"]')
  await expect(prow).toBeVisible()
  const project = (await member.api('GET', '/projects')).find((p: { name: string }) => p.name === 'demo')
  const read = await member.api('GET', `/projects/${project.id}`)
  expect(read.env, 'env read back').toEqual([{ name: 'GREETING', value: '********' }])

  // Editing shows the value masked; saving with the mask keeps it, next to a new one.
  await prow.getByRole('button', { name: 'Edit' }).click()
  const ef = page.getByRole('form', { name: 'Edit demo' })
  await expect(ef.getByLabel('Variable 1 value')).toBeVisible()
  expect(await ef.getByLabel('Variable 1 name').inputValue(), 'the variable name is shown').toBe('GREETING')
  expect(await ef.getByLabel('Variable 1 value').inputValue(), 'the stored value is masked').toBe('********')
  await ef.getByRole('button', { name: 'Add variable' }).click()
  await ef.getByLabel('Variable 2 name').fill('SECOND')
  await ef.getByLabel('Variable 2 value').fill('two')
  await ef.getByRole('button', { name: 'Save' }).click()
  await ef.waitFor({ state: 'detached' })
  const env = (await member.api('GET', `/projects/${project.id}`)).env
  expect(env.map((v: { name: string; value: string }) => `${v.name}=${v.value}`).join(' '), 'env after the edit').toBe('GREETING=******** SECOND=********')

  // The composer's picker binds a conversation on its first message; then the chip is fixed.
  const prov = await member.api('POST', '/providers', { name: 'mia-scripted', base_url: stack.scriptedURL, api_key: 'k' })
  await member.api('POST', '/agents', { name: 'Worker', model: 'echo', provider_id: prov.id })
  await page.goto('/')
  await page.getByLabel('Agent').selectOption({ label: 'Worker' })
  await page.getByLabel('Project', { exact: true }).selectOption({ label: 'demo' })
  await page.getByLabel('Message').fill('hello project')
  await page.keyboard.press('Enter')
  await page.waitForURL(/\/s\//)
  const sid = page.url().split('/s/')[1]
  await expect(page.locator('.msg-assistant', { hasText: 'You said: hello project' })).toBeVisible()
  await expect(page.locator('.composer .project-chip', { hasText: 'demo' })).toBeVisible()
  await expect(page.getByLabel('Project', { exact: true }), 'the picker to give way to the chip').toHaveCount(0)
  const session = await member.api('GET', `/sessions/${sid}`)
  expect(session.project_id, 'the session is bound to the project').toBe(project.id)
  await expect(page.locator('.conv-head').getByRole('button', { name: 'Terminal' })).toBeVisible()
  await idle(page)
  await page.getByRole('button', { name: 'New session on another project' }).click()
  await page.waitForURL((u) => u.pathname === '/')
  await expect(page.getByLabel('Project', { exact: true })).toBeVisible()

  // A project a conversation binds cannot be deleted: the refusal is shown.
  await page.getByRole('button', { name: 'Projects' }).click()
  await expect(prow.getByText('1 conversation bound')).toBeVisible()
  await prow.getByRole('button', { name: 'Delete' }).click()
  await prow.getByRole('button', { name: 'Delete with its files?' }).click()
  await expect(prow.getByRole('alert').filter({ hasText: 'bind this project' })).toBeVisible()

  // The admin's sign-in link pasted into this same tab: nothing of the member's stays on screen.
  await page.evaluate((t) => { location.hash = `token=${t}` }, user.token)
  await expect(page.locator('.who', { hasText: user.username })).toBeVisible()
  await expect(page.getByText('No projects yet.')).toBeVisible()
  expect(await page.locator('[data-project="demo"]').count(), "the member's project is still listed").toBe(0)
})

test('sandboxes: an E2B row offers Test but no containers; an ssh:// host shows its pinned key, which an admin resets', async ({ page, user, newUser, tag }) => {
  const e2bName = `cloud-e2b-${tag}`
  const sshName = `remote-ssh-${tag}`
  const e2b = await user.api('POST', '/sandboxes', { name: e2bName, type: 'e2b', config: { template_id: 'base' } })
  const remote = await user.api('POST', '/sandboxes', { name: sshName, type: 'docker', config: { image: IMAGE, host: 'ssh://deploy@192.0.2.1', ssh_password: 'pw' } })
  // The server pins a key only when a host answers SSH (the Go API test
  // covers that); the browser is shown one by adding it to the listing.
  const pinned = { type: 'ssh-ed25519', fingerprint: 'SHA256:q2Hq0cVAdbBr0Y4JZ1O2Jx7m3dm2L8fQ6YtG0s9fXk4', public_key: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIPinned', pinned_at: '2026-05-01T12:00:00Z' }
  let showPin = true
  await page.route('**/api/v1/sandboxes', async (route) => {
    const res = await route.fetch()
    const list = await res.json()
    await route.fulfill({ response: res, json: list.map((s: { id: string }) => (s.id === remote.id && showPin ? { ...s, ssh_host_key: pinned } : s)) })
  })
  const member = await newUser('member', 'noor')
  try {
    // An e2b row runs: it offers Test, and no Containers (it has none: the sandbox is the storage).
    await page.goto('/settings/sandboxes')
    const e2bRow = page.locator(`[data-sandbox="${e2bName}"]`)
    await expect(e2bRow.getByRole('button', { name: 'Test' })).toBeVisible()
    expect(await e2bRow.locator('.pill', { hasText: 'not available yet' }).count(), 'an e2b row says it does not run').toBe(0)
    expect(await e2bRow.getByRole('button', { name: 'Containers' }).count(), 'an e2b row offers Containers').toBe(0)
    expect(await page.locator(`[data-sandbox="${sshName}"]`).getByRole('button', { name: 'Test' }).count(), 'a docker row lost Test').toBeGreaterThan(0)

    // A new sandbox may be an e2b one; editing the e2b row keeps its type.
    await page.getByRole('button', { name: 'Add sandbox' }).click()
    const form = page.getByRole('form', { name: 'New sandbox' })
    // Polled: the option is enabled once the sandbox types have loaded.
    await expect(form.getByLabel('Type').locator('option[value="e2b"]'), 'e2b is refused for a new sandbox').toBeEnabled()
    await form.getByRole('button', { name: 'Cancel' }).click()
    await e2bRow.getByRole('button', { name: 'Edit' }).click()
    const edit = page.getByRole('form', { name: `Edit ${e2bName}` })
    await expect(edit.getByLabel('Type'), 'the e2b row lost its type in the form').toHaveValue('e2b')
    await edit.getByRole('button', { name: 'Cancel' }).click()

    // A member sees the pinned key but cannot reset it.
    await signInAs(page, member.token, '/settings/sandboxes')
    const memberRow = page.locator(`[data-sandbox="${sshName}"]`)
    await expect(memberRow.getByText(pinned.fingerprint)).toBeVisible()
    expect(await memberRow.getByRole('button', { name: 'Reset host key' }).count(), 'a member is offered the reset').toBe(0)

    // The admin resets it: the row says the next connection pins the key it meets.
    await signInAs(page, user.token, '/settings/sandboxes')
    const row = page.locator(`[data-sandbox="${sshName}"]`)
    await expect(row.getByText(`${pinned.type} ${pinned.fingerprint}`)).toBeVisible()
    await row.getByRole('button', { name: 'Reset host key' }).click()
    showPin = false
    const [reset] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'DELETE' && r.url().endsWith(`/sandboxes/${remote.id}/ssh-host-key`)),
      row.getByRole('button', { name: 'Forget this key?' }).click(),
    ])
    expect(reset.status(), 'the reset answered').toBe(204)
    await expect(row.getByText('none pinned yet')).toBeVisible()
    await expect(row.getByRole('status').filter({ hasText: 'next connection pins' })).toBeVisible()
  } finally {
    await user.request('DELETE', `/sandboxes/${e2b.id}`)
    await user.request('DELETE', `/sandboxes/${remote.id}`)
  }
})

test('sandbox (docker): exec_command streams into its card, the terminal runs a shell, files download as a tar', async ({ page, user, agentFor, tag }) => {
  // Containers start, stop and rebuild: several of the waits below allow a minute.
  test.setTimeout(300_000)
  const sbName = `docker-e2e-${tag}`
  const sb = await dockerSandbox(user, sbName)
  const project = await user.api('POST', '/projects', { name: 'box', sandbox_id: sb.id, env: [{ name: 'GREETING', value: 'hello-env' }] })
  let sid: string | undefined
  try {
    const agent = await agentFor('Sandboxer', 'sandbox')
    await page.goto('/')
    await page.getByLabel('Agent').selectOption({ label: agent.name })
    await page.getByLabel('Project', { exact: true }).selectOption({ label: 'box' })
    await page.getByLabel('Message').fill('run it in the box')
    await page.keyboard.press('Enter')
    await page.waitForURL(/\/s\//)
    sid = page.url().split('/s/')[1]

    // Live: the output streams into the card while the command runs, then the result replaces it.
    const card = page.locator('.tool-card[data-tool="exec_command"]')
    const cmd = 'echo hi-from-sandbox; sleep 5; echo second-line'
    // The running card's text, read in the same frame it first shows the
    // first line: the command shows that state for only five seconds, which a
    // poll with back-off, or a read after the wait, can miss on a busy machine.
    const streamed = await page.waitForFunction(() => {
      const el = [...document.querySelectorAll<HTMLElement>('.tool-card[data-tool="exec_command"] .terminal-output.running')].find((e) => e.innerText.includes('hi-from-sandbox'))
      return el?.innerText
    }, undefined, { timeout: 60_000, polling: 'raf' })
    expect(await streamed.jsonValue(), 'the output arrived whole, not streamed').not.toContain('second-line')
    const done = card.locator('.terminal-output:not(.running)')
    await expect(done.getByText('second-line')).toBeVisible()
    await idle(page)
    const checkCard = async () => {
      expect(await card.locator('.tool-title').innerText(), 'card title').toBe(cmd)
      await expect(card.locator('.tool-summary', { hasText: 'exit 0' })).toBeVisible()
      await expect(card.locator('.pill', { hasText: 'Done' })).toBeVisible()
      const out = await done.innerText()
      expect(out, 'card output').toContain('exit_code: 0')
      expect(out, 'card output').toContain('hi-from-sandbox')
      expect(out, 'card output').toContain('second-line')
    }
    await checkCard()
    // A reload draws the same card from the stored output.
    await page.reload()
    await expect(done).toBeVisible()
    await checkCard()
    // apply_patch's card shows its patch as a diff.
    const patchCard = page.locator('.tool-card[data-tool="apply_patch"]')
    await expect(patchCard.locator('.pill', { hasText: 'Done' })).toBeVisible()
    await patchCard.locator('.tool-head').click()
    await expect(patchCard.locator('.patch-view .patch-add', { hasText: '+ship it' })).toBeVisible()

    // The terminal, from the bound conversation: a shell in the project's container.
    await page.locator('.conv-head').getByRole('button', { name: 'Terminal' }).click()
    const panel = page.getByRole('dialog', { name: 'Terminal: box' })
    await expect(panel.getByRole('status').filter({ hasText: 'Live' })).toBeVisible({ timeout: 60_000 })
    // xterm's own styles arrive (as adopted sheets, the CSP refusing inline <style>): its theme colours the rows.
    const color = await panel.locator('.xterm-rows').evaluate((el) => getComputedStyle(el).color)
    expect(color, 'the terminal is styled (rows colour)').toBe('rgb(230, 230, 236)')
    await panel.locator('.terminal-screen').click()
    await page.keyboard.type('echo $((6*7)); echo "$GREETING" > /workspace/note.txt; cat /workspace/note.txt')
    await page.keyboard.press('Enter')
    await expect.poll(async () => {
      const rows = await screenRows(page)
      return rows.includes('42') && rows.includes('hello-env')
    }, { message: '42 and the project variable on the terminal screen' }).toBe(true)
    // The shell exits: the code is shown and Reconnect opens a new one.
    await page.keyboard.type('exit 3')
    await page.keyboard.press('Enter')
    await expect(panel.getByRole('status').filter({ hasText: 'Exited with code 3' })).toBeVisible()
    await panel.getByRole('button', { name: 'Reconnect' }).click()
    await expect(panel.getByRole('status').filter({ hasText: 'Live' })).toBeVisible({ timeout: 60_000 })
    // A new environment replaces the container: the open terminal is severed, saying why; a reconnect sees the new value.
    await user.api('PUT', `/projects/${project.id}`, { name: 'box', sandbox_id: sb.id, env: [{ name: 'GREETING', value: 'changed-env' }] })
    await expect(panel.getByRole('alert').filter({ hasText: 'environment or its sandbox changed' })).toBeVisible()
    await panel.getByRole('button', { name: 'Reconnect' }).click()
    await expect(panel.getByRole('status').filter({ hasText: 'Live' })).toBeVisible({ timeout: 60_000 })
    await panel.locator('.terminal-screen').click()
    await page.keyboard.type('echo "now $GREETING"')
    await page.keyboard.press('Enter')
    await expect.poll(async () => (await screenRows(page)).includes('now changed-env'), { message: 'the new environment in the new shell' }).toBe(true)
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
    expect(response.status(), 'export answered').toBe(200)
    expect(response.headers()['content-type'], 'export content type').toBe('application/x-tar')
    expect(download.suggestedFilename(), 'saved as').toBe('box.tar')
    const tar = readFileSync(await download.path())
    expect(tar.subarray(257, 262).toString(), `not a tar (${tar.length} bytes)`).toBe('ustar')
    for (const part of ['note.txt', 'hello-env', 'ship it']) expect(tar.includes(part), `the project's tar holds ${part}`).toBe(true)

    // The instance by hand: stop (now, or once the closed terminal lets go), start, rebuild.
    const state = row.locator('.sandbox-state [data-state]')
    await expect(state, 'the running state').toHaveAttribute('data-state', 'running')
    await row.getByRole('button', { name: 'Stop' }).click()
    await expect.poll(async () => (await state.getAttribute('data-state')) === 'stopped' || (await row.getByText('will stop when the current work ends').count()) > 0, { message: 'the stop' }).toBe(true)
    await row.getByRole('button', { name: 'Start' }).or(row.getByRole('button', { name: 'Stop' })).first().waitFor()
    if (await row.getByRole('button', { name: 'Start' }).count()) await row.getByRole('button', { name: 'Start' }).click()
    await expect(state, 'the restart').toHaveAttribute('data-state', 'running', { timeout: 60_000 })
    await row.getByRole('button', { name: 'Rebuild' }).click()
    await row.locator('.pill', { hasText: 'Rebuilding' }).waitFor({ state: 'detached', timeout: 60_000 })
    if (await row.locator('.state-note[role="alert"]').count()) throw new Error(`rebuild: ${await row.locator('.state-note').innerText()}`)
    await expect(state, 'the rebuilt instance').toHaveAttribute('data-state', 'running', { timeout: 60_000 })

    // The admin's view of the daemon: the test command and the project's container.
    await page.getByRole('tab', { name: 'Sandboxes' }).click()
    const sbRow = page.locator(`[data-sandbox="${sbName}"]`)
    await sbRow.getByRole('button', { name: 'Test' }).click()
    await expect(sbRow.locator('[data-test-result="ok"]')).toBeVisible({ timeout: 60_000 })
    await sbRow.getByRole('button', { name: 'Containers' }).click()
    const tail = project.id.replaceAll('-', '').slice(-12)
    await expect(sbRow.locator(`[data-container="agents-${tail}"]`).getByText('running')).toBeVisible()
  } finally {
    // Leave nothing on the daemon: the project's delete removes its container and volume.
    if (sid) await user.request('DELETE', `/sessions/${sid}`)
    const del = await user.request('DELETE', `/projects/${project.id}`)
    if (!del.ok || del.data.storage_error) console.log(`      cleanup: project delete answered ${del.status} ${del.text}`)
    await user.request('DELETE', `/sandboxes/${sb.id}`)
  }
})

test('sandbox (e2b): an admin adds an E2B sandbox against the double and tests it; a project opens a terminal there', async ({ page, stack, user, tag }) => {
  if (stack.e2b.missing) {
    if (process.env.AGENTS_CI === '1') throw new Error(`the e2b browser test is required (AGENTS_CI=1): ${stack.e2b.missing}`)
    test.skip(true, stack.e2b.missing)
  }
  const name = `e2b-${tag}`
  await page.goto('/settings/sandboxes')
  await page.getByRole('button', { name: 'Add sandbox' }).click()
  const form = page.getByRole('form', { name: 'New sandbox' })
  await form.getByLabel('Type').selectOption('e2b')
  await form.getByLabel('Name', { exact: true }).fill(name)
  await form.getByLabel('Template ID').fill('base')
  await form.getByLabel('API URL').fill(stack.e2b.api)
  await form.getByLabel('Domain').fill(stack.e2b.domain)
  await form.getByLabel('API key').fill(E2B_KEY)
  // The double requires a header of its own, as some compatible services do.
  await form.getByRole('button', { name: 'Add header' }).click()
  await form.getByLabel('Header 1 name').fill(E2B_HEADER[0])
  await form.getByLabel('Header 1 value').fill(E2B_HEADER[1])
  await form.getByRole('button', { name: 'Save' }).click()
  const row = page.locator(`[data-sandbox="${name}"]`)
  await expect(row.getByText('base')).toBeVisible()
  const sb = (await user.api('GET', '/sandboxes')).find((s: { name: string }) => s.name === name)
  let project: { id: string } | undefined
  try {
    expect(sb.config, `saved as ${JSON.stringify(sb.config)}`).toMatchObject({ api_key: '********', headers: { [E2B_HEADER[0]]: '********' }, auto_pause: true })
    // Test: a throw-away sandbox on the service runs `echo ok`.
    await row.getByRole('button', { name: 'Test' }).click()
    await expect(row.locator('[data-test-result="ok"]')).toHaveText(/Reached; the test command ran: ok/, { timeout: 60_000 })

    // A project's terminal: a shell in its E2B sandbox, in /workspace.
    project = await user.api('POST', '/projects', { name: `cloudbox-${tag}`, sandbox_id: sb.id, env: [{ name: 'GREETING', value: 'hello-e2b' }] })
    await page.goto('/settings/projects')
    await page.locator(`[data-project="cloudbox-${tag}"]`).getByRole('button', { name: 'Terminal' }).click()
    const panel = page.getByRole('dialog', { name: `Terminal: cloudbox-${tag}` })
    await expect(panel.getByRole('status').filter({ hasText: 'Live' })).toBeVisible({ timeout: 60_000 })
    await panel.locator('.terminal-screen').click()
    await page.keyboard.type('echo $((6*7)); pwd; echo "$GREETING"')
    await page.keyboard.press('Enter')
    await expect.poll(async () => {
      const rows = await screenRows(page)
      return rows.includes('42') && rows.includes('/workspace') && rows.includes('hello-e2b')
    }, { message: '42, /workspace and the project variable on the terminal screen' }).toBe(true)
    await page.keyboard.type('exit 3')
    await page.keyboard.press('Enter')
    await expect(panel.getByRole('status').filter({ hasText: 'Exited with code 3' })).toBeVisible()
    await panel.getByRole('button', { name: 'Close the terminal' }).click()
  } finally {
    if (project) await user.request('DELETE', `/projects/${project.id}`)
    await user.request('DELETE', `/sandboxes/${sb.id}`)
  }
})
