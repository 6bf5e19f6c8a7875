// Triggers: an agent-target webhook made in the hub's Triggers section (the
// server's field errors first), its secret shown once, its signing example
// copied and run with bash — curl and openssl, as a sender would — and the
// delivery answered in the conversation, watched live in another tab: the
// trigger's chip, the brief with the payload, the agent's scripted answer.
// Fire now then asks again once the first answer is in (the conversation is
// free, so it starts: a deterministic second answer). Rotation shows a new
// secret once; Disable and Delete do what they say.
import { execFileSync } from 'node:child_process'
import { conversationFor, expect, expectConsole, idle, test } from './fixtures'

test.use({ permissions: ['clipboard-read', 'clipboard-write'] })

test('triggers: a webhook made in the hub, its signed example run with bash, answered in the conversation; Fire now asks again',
  { annotation: expectConsole(/status of 400/) }, async ({ page, context, user, agentFor, tag }) => {
    const agent = await agentFor('Watcher', 'trig-watch')
    const sid = await conversationFor(user, agent.id, 'Hello there')
    const name = `hook-${tag}`

    // The hub: Triggers sits between Definitions and Runs.
    await page.goto('/workflows')
    const hub = page.getByRole('region', { name: 'Workflows' })
    await expect(hub.getByRole('heading', { level: 2 })).toHaveText(['Definitions', 'Triggers', 'Runs'])
    const section = hub.getByRole('region', { name: 'Triggers', exact: true })
    await expect(section).toContainText('No triggers yet.')

    // The form: refused whole by the server first, its messages at the fields.
    await section.getByRole('button', { name: 'Add trigger' }).click()
    const form = page.getByRole('form', { name: 'Add trigger' })
    await form.getByLabel('Name').fill(name)
    await expect(form.getByLabel('Kind')).toHaveValue('webhook')
    await expect(form.getByLabel('Schedule')).toHaveCount(0)
    await expect(form.getByLabel('Target')).toHaveValue('agent')
    await form.getByRole('button', { name: 'Add', exact: true }).click()
    // A new conversation is the default: only the agent and the brief are missing,
    // and the conversation made for the refused trigger is gone again.
    await expect(form.getByRole('alert').first()).toContainText('2 fields need attention')
    await expect(form.locator('.field[data-field="Agent"] .error-text')).toContainText('is required')
    await expect(form.locator('.field[data-field="Conversation"] .error-text')).toHaveCount(0)
    await expect(form.locator('.field[data-field="Brief"] .error-text')).toContainText('is required')
    expect((await user.api('GET', '/sessions')).map((x: { id: string }) => x.id), 'no conversation left behind').toEqual([sid])
    // A cron kind asks for a schedule, in the server's time zone.
    await form.getByLabel('Kind').selectOption('cron')
    await expect(form.locator('.field[data-field="Schedule"] .hint')).toContainText('@every 30m')
    await form.getByLabel('Kind').selectOption('webhook')
    await form.getByLabel('Agent').selectOption({ label: agent.name })
    await form.getByLabel('Conversation').selectOption(sid)
    await form.getByLabel('Brief').fill('TRIGGER-BRIEF: say what the delivery was about')
    await form.getByRole('button', { name: 'Add', exact: true }).click()
    await expect(form).toHaveCount(0)

    // Made, its row opens on its secret, shown this once, and a signed example embedding it.
    const table = section.getByRole('table', { name: 'Triggers' })
    const trigger = table.locator(`tbody[data-trigger="${name}"]`)
    await expect(trigger.locator('.trigger-fires')).toHaveText('webhook')
    await expect(trigger.locator('.trigger-target')).toHaveText(`agent ${agent.name}`)
    await expect(trigger.locator('.trigger-last')).toHaveText('Never fired')
    const detail = trigger.getByRole('group', { name: `Trigger ${name}` })
    await expect(detail).toContainText('TRIGGER-BRIEF: say what the delivery was about')
    const secret = (await detail.locator('.trigger-secret').innerText()).trim()
    expect(secret.length).toBeGreaterThan(20)
    await expect(detail.getByRole('status', { name: 'The signing secret' })).toContainText('it is not shown again')
    const hookURL = (await detail.locator('.trigger-hook-url').innerText()).trim()
    expect(hookURL).toMatch(/\/hooks\/[^/]+$/)
    const example = detail.locator('.trigger-curl')
    await expect(example).toContainText(`SECRET='${secret}'`)
    await expect(example).toContainText(`curl -sS -X POST '${hookURL}'`)

    // Copied, it is on the clipboard as shown.
    await detail.getByRole('button', { name: 'Copy the example' }).click()
    await expect(detail.getByText('Copied', { exact: true })).toBeVisible()
    const copied = await page.evaluate(() => navigator.clipboard.readText())
    expect(copied).toBe(await example.innerText())

    // The conversation, open in another tab, hears the delivery live.
    const convo = await context.newPage()
    await convo.goto(`/s/${sid}`)
    await expect(convo.locator('.msg-assistant .markdown')).toHaveText(['Hello, ready when you are.'])
    const out = execFileSync('bash', ['-c', copied], { encoding: 'utf8', timeout: 30_000 })
    expect(JSON.parse(out)).toHaveProperty('run_id')
    await expect(convo.locator('.trigger-chip')).toHaveText([`⚡ ${name} asked ${agent.name}`])
    const brief = convo.locator('.msg-user .bubble').last()
    await expect(brief).toContainText('TRIGGER-BRIEF: say what the delivery was about')
    await expect(brief).toContainText('{"event":"test"}')
    await expect(convo.locator('.msg-assistant .markdown')).toHaveText(['Hello, ready when you are.', 'Handled the test delivery.'])
    await idle(convo)

    // The hub says it started, and its last result opens the conversation.
    await expect(trigger.locator('.trigger-last')).toHaveText(/^Started/)

    // Fire now: the conversation is free, so the brief is asked again.
    await detail.getByRole('button', { name: 'Fire now' }).click()
    await expect(detail.getByRole('status').filter({ hasText: 'Fired' })).toBeVisible()
    await expect(convo.locator('.trigger-chip')).toHaveCount(2)
    await expect(convo.locator('.msg-assistant .markdown')).toHaveText(['Hello, ready when you are.', 'Handled the test delivery.', 'Checked in as the trigger asked.'])
    await idle(convo)
    await expect(trigger.locator('.trigger-last')).toHaveText(/^Started/)

    // Rotation: confirmed, a new secret shown once, the example embedding it.
    await detail.getByRole('button', { name: 'Rotate secret' }).click()
    await detail.getByRole('button', { name: 'Rotate it' }).click()
    await expect(detail.locator('.trigger-secret')).not.toHaveText(secret)
    const rotated = (await detail.locator('.trigger-secret').innerText()).trim()
    await expect(example).toContainText(`SECRET='${rotated}'`)

    // Disabled, it fires nothing; Delete asks first.
    await detail.getByRole('button', { name: 'Disable' }).click()
    await expect(trigger.locator('.trigger-row .pill')).toHaveText('Disabled')
    await expect(detail.getByRole('button', { name: 'Fire now' })).toBeDisabled()
    await detail.getByRole('button', { name: 'Delete' }).click()
    await detail.getByRole('button', { name: 'Delete it' }).click()
    await expect(trigger).toHaveCount(0)
    await expect(section).toContainText('No triggers yet.')

    await convo.close()
  })

test("triggers: a workflow's detail lists its triggers and adds one prefilled with it", async ({ page, user, agentFor, tag }) => {
  const deployer = await agentFor('Deployer', 'wf-deploy')
  const host = await agentFor('Host', 'wf-host')
  const sid = await conversationFor(user, host.id, 'Hello there')
  const name = `nightly-${tag}`
  const wf = await user.api('POST', '/workflows', {
    name: `release-${tag}`, description: 'Deploys', steps: [{ name: 'deploy', agent: deployer.id, prompt: 'DEPLOY-STEP: ship it' }],
  })
  const { time_zone: tz } = await user.api('GET', '/server')

  await page.goto(`/workflows/${wf.id}`)
  const own = page.getByRole('region', { name: 'Triggers', exact: true })
  await expect(own).toContainText(`Nothing starts release-${tag} on its own yet`)
  await own.getByRole('button', { name: 'Add trigger' }).click()
  const form = page.getByRole('form', { name: 'Add trigger' })
  await expect(form.getByLabel('Target')).toHaveValue('workflow')
  await expect(form.getByLabel('Workflow')).toHaveValue(wf.id)
  await form.getByLabel('Name').fill(name)
  await form.getByLabel('Kind').selectOption('cron')
  await expect(form.locator('.field[data-field="Schedule"] .hint')).toContainText(tz)
  await form.getByLabel('Schedule').fill('@daily')
  await form.getByLabel('Conversation').selectOption(sid)
  await form.getByLabel('Brief').fill('ship the nightly build')
  await form.getByRole('button', { name: 'Add', exact: true }).click()

  const row = own.getByRole('table', { name: `Triggers of release-${tag}` }).locator(`tbody[data-trigger="${name}"]`)
  await expect(row.locator('.trigger-fires')).toHaveText('cron @daily')
  await expect(row.locator('.trigger-target')).toHaveText(`workflow release-${tag}`)
  await expect(row.locator('.trigger-last')).toHaveText('Never fired')
  const detail = row.getByRole('group', { name: `Trigger ${name}` })
  await expect(detail).toContainText(`On the schedule @daily (${tz}); next at`)
  await expect(detail.locator('.trigger-curl')).toHaveCount(0)

  // Fire now starts the execution; its last result opens it in its conversation.
  await detail.getByRole('button', { name: 'Fire now' }).click()
  await expect(row.locator('.trigger-last')).toHaveText(/^Started/)
  await row.locator('.trigger-last').getByRole('button').click()
  await expect(page).toHaveURL(new RegExp(`/s/${sid}$`))
  await expect(page.locator('.wf-start-chip')).toHaveText(`▶ release-${tag} (${name} (cron))`)
  const panel = page.getByRole('complementary', { name: 'Inspector' })
  await expect(panel.locator('.task-panel .task-chip')).toHaveText('Completed')
})

test('triggers: a new trigger reports into a new conversation named after it, by default', async ({ page, user, agentFor, tag }) => {
  const deployer = await agentFor('Deployer', 'wf-deploy')
  const name = `weekly-${tag}`
  const wf = await user.api('POST', '/workflows', {
    name: `ship-${tag}`, description: 'Deploys', steps: [{ name: 'deploy', agent: deployer.id, prompt: 'DEPLOY-STEP: ship it' }],
  })
  await page.goto(`/workflows/${wf.id}`)
  await page.getByRole('region', { name: 'Triggers', exact: true }).getByRole('button', { name: 'Add trigger' }).click()
  const form = page.getByRole('form', { name: 'Add trigger' })
  await form.getByLabel('Name').fill(name)
  await expect(form.getByLabel('Conversation').locator('option:checked')).toHaveText('A new conversation, named after the trigger')
  await form.getByLabel('Brief').fill('ship the weekly build')
  await form.getByRole('button', { name: 'Add', exact: true }).click()
  await expect(form).toHaveCount(0)
  const trigger = (await user.api('GET', '/triggers')).find((t: { name: string }) => t.name === name)
  const session = await user.api('GET', `/sessions/${trigger.session_id}`)
  expect([session.name, session.agent_config_id]).toEqual([name, deployer.id])
})
