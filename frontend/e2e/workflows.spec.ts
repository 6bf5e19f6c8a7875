// Workflows: a definition drawn in the hub's editor (two steps on scripted
// agents, the second a gate that loops back on FAIL), started from a
// conversation's composer with /workflow <name> <brief>, and watched in
// the hub's Runs until it completes — its launches, flowchart and
// transcript in the inspector. The checker's script answers FAIL to its
// first turn and PASS after ("times": 1), so the loop is taken once — once
// per scripted model's life, so the test asks a fresh stack (as every
// `go tool task e2e` run starts), not --repeat-each. A second test starts a
// pause_before workflow with Run… and approves the step from the
// conversation's card, while another tab on that conversation sees the
// start's chip and the held step arrive live.
import type { Page } from '@playwright/test'
import { conversationFor, expect, expectConsole, inspector, test } from './fixtures'

const composer = (page: Page) => page.getByRole('textbox', { name: 'Message' })
const step = (page: Page, n: number) => page.getByRole('group', { name: `Step ${n}`, exact: true })

test('workflows: drawn in the editor, started with /workflow, its steps go by in the hub\'s Runs',
  { annotation: expectConsole(/status of 400/) }, async ({ page, user, agentFor, tag }) => {
    const builder = await agentFor('Builder', 'wf-build')
    const checker = await agentFor('Checker', 'wf-check')
    const host = await agentFor('Host', 'wf-host')
    const sid = await conversationFor(user, host.id, 'Hello there')
    const name = `ship-${tag}`

    // The hub, from the sidebar's button beside New.
    await page.goto('/')
    await page.getByRole('button', { name: 'Workflows' }).click()
    await expect(page).toHaveURL(/\/workflows$/)
    const hub = page.getByRole('region', { name: 'Workflows' })
    await expect(hub.getByRole('heading', { name: 'Definitions' })).toBeVisible()
    await expect(hub.getByRole('heading', { name: 'Runs' })).toBeVisible()

    // The editor: two steps, the second a gate whose FAIL goes back to the first.
    await hub.getByRole('button', { name: 'New workflow' }).click()
    await page.getByLabel('Name', { exact: true }).first().fill(name)
    await page.getByLabel('Description').fill('Builds the change, then checks it until it passes')
    await step(page, 1).getByLabel('Name').fill('build')
    await step(page, 1).getByLabel('Agent').selectOption({ label: builder.name })
    await step(page, 1).getByLabel('Prompt').fill('BUILD-STEP: build the change')
    await page.getByRole('button', { name: 'Add step' }).click()
    await step(page, 2).getByLabel('Agent').selectOption({ label: checker.name })
    // Refused whole by the server: its messages land on the step's fields.
    await page.getByRole('button', { name: 'Save' }).first().click()
    await expect(page.getByRole('alert', { name: 'Why the workflow was not saved' })).toContainText('2 fields need attention')
    await expect(step(page, 2).locator('.field[data-field="Name"] .error-text')).toHaveText('is required')
    await expect(step(page, 2).locator('.field[data-field="Prompt"] .error-text')).toContainText("it starts the step's turn")
    await step(page, 2).getByLabel('Name').fill('check')
    await step(page, 2).getByLabel('Prompt').fill('CHECK-STEP: check the build')
    await step(page, 2).getByLabel('Gate').check()
    await step(page, 2).getByLabel('On fail').selectOption({ label: 'Step 1: build' })
    // The preview draws what is written: two steps, End, and the loop.
    const preview = page.locator('.wf-editor .wf-canvas')
    await expect(preview.locator('.react-flow__node')).toHaveCount(3)
    await expect(preview.locator('.react-flow__edge.wf-edge-back')).toHaveCount(1)
    await page.getByRole('button', { name: 'Save' }).first().click()

    // Saved, it opens: its description, its flowchart, its steps.
    await expect(page).toHaveURL(/\/workflows\/[^/]+$/)
    const detail = page.locator('.wf-detail')
    await expect(detail.getByRole('heading', { name })).toBeVisible()
    await expect(detail).toContainText('Builds the change, then checks it until it passes')
    const chart = detail.getByRole('figure', { name: `Flowchart of ${name}` })
    await expect(chart.locator('.react-flow__node')).toHaveCount(3)
    await expect(chart.locator('.wf-node[data-step="check"] .wf-badge-gate')).toHaveText('gate: PASS / FAIL')
    await expect(chart.locator('.react-flow__edge.wf-edge-failure.wf-edge-back')).toHaveCount(1)
    await expect(chart.locator('.react-flow__edge.wf-edge-failure .react-flow__edge-text')).toHaveText('↺ FAIL')
    await expect(detail.locator('.wf-step-line').nth(1)).toContainText('PASS → the end; FAIL → build')

    // The composer: / offers the commands, walked with the keys; a wrong start says why and sends nothing.
    await page.goto(`/s/${sid}`)
    const box = composer(page)
    await box.fill('/')
    const commands = page.getByRole('listbox', { name: 'Commands' })
    await expect(commands.getByRole('option')).toHaveText([/\/workflow/, /\/plan/])
    await expect(box).toHaveAttribute('aria-activedescendant', await commands.getByRole('option').first().getAttribute('id') ?? '')
    await box.press('ArrowDown')
    await expect(commands.getByRole('option', { selected: true })).toContainText('/plan')
    await box.press('ArrowUp')
    await box.press('Tab')
    await expect(box).toHaveValue('/workflow ')
    const names = page.getByRole('listbox', { name: 'Workflows' })
    await box.pressSequentially(name.slice(0, 6).toUpperCase())
    await expect(names.getByRole('option')).toHaveText([new RegExp(name)])
    await box.press('Escape')
    await expect(names).toHaveCount(0)
    await box.fill('/workflow no-such-flow fix it')
    await box.press('Enter')
    await expect(page.locator('.composer [role="alert"]')).toHaveText(/No workflow is named "no-such-flow"\. The workflows are: .*ship-/)
    await box.fill(`/workflow ${name}`)
    await box.press('Enter')
    await expect(page.locator('.composer [role="alert"]')).toHaveText(`Write a brief after the name: /workflow ${name} <what it should do>.`)
    await expect(page.locator('.wf-start')).toHaveCount(0)
    await box.fill('/workflow ')
    await box.pressSequentially(name.slice(0, 6))
    await box.press('Enter')
    await expect(box).toHaveValue(`/workflow ${name} `)
    await box.pressSequentially('fix the login bug')
    await box.press('Enter')
    await expect(box).toHaveValue('')

    // The start's chip in the conversation, and the execution in its task list.
    const chip = page.locator('.wf-start-chip')
    await expect(chip).toHaveText(`▶ ${name} (${user.username})`)
    await expect(page.locator('.task-strip .task-row', { hasText: name })).toBeVisible()

    // The hub's Runs: live, the build step first, then completed.
    await page.getByRole('button', { name: 'Workflows' }).click()
    const row = page.locator('.wf-run-row', { hasText: name })
    await expect(row.locator('.wf-run-session')).not.toBeEmpty()
    await expect(row.locator('.wf-run-progress')).toHaveText(/step 1\/2 \(build\)/)
    await expect(row.locator('.task-chip')).toHaveText('Working')
    await expect(row.locator('.task-chip')).toHaveText('Completed', { timeout: 45_000 })
    await expect(row.locator('.wf-run-progress')).toHaveText('step 2/2 (check)')

    // A row opens its conversation with the execution in the inspector.
    await row.getByRole('button', { name }).click()
    await expect(page).toHaveURL(new RegExp(`/s/${sid}$`))
    const panel = await inspector(page)
    await expect(panel.getByRole('tab', { name: 'Task' })).toHaveAttribute('aria-selected', 'true')
    const view = panel.locator('.task-panel')
    await expect(view.locator('.task-chip')).toHaveText('Completed')
    const launches = view.locator('.wf-launch')
    await expect(launches.locator('.wf-launch-name')).toHaveText(['build', 'check', 'build', 'check'])
    await expect(launches.locator('.pill')).toHaveText(['Completed', 'Reported a failure', 'Completed', 'Passed'])
    await expect(view.getByRole('figure', { name: new RegExp(`Flowchart of ${name}`) }).locator('.react-flow__node')).toHaveCount(3)
    await expect(view.getByRole('region', { name: 'Result' })).toContainText('Everything checks out.')
    const transcript = view.getByLabel('Task transcript')
    await expect(transcript.locator('.msg-user .bubble').first()).toContainText('fix the login bug')
    await expect(transcript.locator('.msg-assistant .markdown')).toHaveText([/Built it/, /missing a test/, /Built it/, /Everything checks out/])
    // The chip opens the same execution; the conversation was told once it ended.
    await panel.getByRole('button', { name: 'Close the task' }).click()
    await chip.click()
    await expect(panel.locator('.task-panel .task-panel-title')).toHaveText(name)
    await expect(page.locator('.msg-assistant .markdown', { hasText: "Noted the workflow's result." })).toBeVisible()
  })

test('workflows: Run… from the hub waits before a pause_before step until the conversation approves it', async ({ page, context, user, agentFor, tag }) => {
  const deployer = await agentFor('Deployer', 'wf-deploy')
  const host = await agentFor('Host', 'wf-host')
  const sid = await conversationFor(user, host.id, 'Hello there')
  const name = `release-${tag}`
  const wf = await user.api('POST', '/workflows', {
    name, description: 'Deploys once a person says so',
    steps: [{ name: 'deploy', agent: deployer.id, prompt: 'DEPLOY-STEP: ship the release', pause_before: true, compact_before: true }],
  })

  // Another tab on the conversation hears of the start, and of the step held, as it happens.
  const other = await context.newPage()
  await other.goto(`/s/${sid}`)
  await expect(other.locator('.msg-assistant .markdown')).toHaveText(['Hello, ready when you are.'])

  await page.goto(`/workflows/${wf.id}`)
  const chart = page.getByRole('figure', { name: `Flowchart of ${name}` })
  await expect(chart.locator('.wf-node[data-step="deploy"] .wf-badge')).toHaveText(['pause before', 'compact before'])
  await page.getByRole('button', { name: 'Run…' }).click()
  const form = page.getByRole('form', { name: `Run ${name}` })
  await form.getByLabel('Conversation').selectOption(sid)
  await form.getByLabel('Brief').fill('ship version 2')
  await form.getByRole('button', { name: 'Start' }).click()

  // Started, the execution opens in its conversation, held before its step.
  await expect(page).toHaveURL(new RegExp(`/s/${sid}$`))
  const panel = page.getByRole('complementary', { name: 'Inspector' })
  await expect(panel.locator('.task-panel .task-chip')).toHaveText('Waiting for approval')
  const card = page.locator('.timeline .step-approval')
  await expect(card.locator('.tool-title')).toHaveText(`Run step deploy of ${name}?`)
  await expect(card).toContainText('step 1/1 (deploy)')
  await expect(card.locator('.step-prompt')).toHaveText('DEPLOY-STEP: ship the release')
  await expect(page.locator('.wf-start-chip')).toHaveText(`▶ ${name} (${user.username})`)
  await expect(other.locator('.wf-start-chip')).toHaveText(`▶ ${name} (${user.username})`)
  await expect(other.locator('.timeline .step-approval .tool-title')).toHaveText(`Run step deploy of ${name}?`)
  await card.getByRole('button', { name: 'Run the step' }).click()
  await expect(other.locator('.timeline .step-approval')).toHaveCount(0)
  await expect(card).toHaveCount(0)
  await expect(panel.locator('.task-panel .task-chip')).toHaveText('Completed')
  await expect(panel.locator('.wf-launch .pill')).toHaveText(['Completed'])
  await expect(panel.getByRole('region', { name: 'Result' })).toContainText('Deployed the release.')
})

test('workflows: an execution that ended before its Start answer arrived shows its end, not Working', async ({ page, user, agentFor, tag }) => {
  const host = await agentFor('Host', 'wf-host')
  const sid = await conversationFor(user, host.id, 'Hello there')
  // A provider nothing listens on: the step's run fails, and the execution with it.
  const dead = await user.api('POST', '/providers', { name: `dead-${tag}`, base_url: 'http://127.0.0.1:9/v1', api_key: 'any-key' })
  const broken = await user.api('POST', '/agents', { name: `Broken ${tag}`, model: 'any', provider_id: dead.id })
  const name = `doomed-${tag}`
  const wf = await user.api('POST', '/workflows', { name, description: 'Fails at once', steps: [{ name: 'only', agent: broken.id, prompt: 'DO: nothing' }] })
  // The Start answer (the execution working) reaches the page only once the execution has failed.
  await page.route(`**/api/v1/workflows/${wf.id}/runs`, async (route) => {
    const response = await route.fetch()
    const started = await response.json()
    await expect.poll(async () => (await user.api('GET', `/tasks/${started.task_id}`)).status, { timeout: 60_000 }).toBe('failed')
    await route.fulfill({ response, json: started })
  })
  await page.goto(`/workflows/${wf.id}`)
  await page.getByRole('button', { name: 'Run…' }).click()
  const form = page.getByRole('form', { name: `Run ${name}` })
  await form.getByLabel('Conversation').selectOption(sid)
  await form.getByLabel('Brief').fill('try it')
  await form.getByRole('button', { name: 'Start' }).click()
  await expect(page).toHaveURL(new RegExp(`/s/${sid}$`), { timeout: 70_000 })
  const panel = page.getByRole('complementary', { name: 'Inspector' })
  await expect(panel.locator('.task-panel .task-chip')).toHaveText('Failed')
  await expect(panel.getByRole('button', { name: 'Stop' })).toHaveCount(0)
})

test('workflows: Run… starts in a new conversation named after the workflow, by default', async ({ page, user, agentFor, tag }) => {
  const deployer = await agentFor('Deployer', 'wf-deploy')
  const name = `fresh-${tag}`
  const wf = await user.api('POST', '/workflows', { name, description: 'Deploys', steps: [{ name: 'deploy', agent: deployer.id, prompt: 'DEPLOY-STEP: ship it' }] })
  await page.goto(`/workflows/${wf.id}`)
  await page.getByRole('button', { name: 'Run…' }).click()
  const form = page.getByRole('form', { name: `Run ${name}` })
  await expect(form.getByLabel('Conversation').locator('option:checked')).toHaveText(`A new conversation: “${name}”`)
  await form.getByLabel('Brief').fill('ship version 3')
  await form.getByRole('button', { name: 'Start' }).click()
  await expect(page).toHaveURL(/\/s\//)
  await expect(page.locator('.conv-title')).toHaveText(name)
  const panel = page.getByRole('complementary', { name: 'Inspector' })
  await expect(panel.locator('.task-panel .task-chip')).toHaveText('Completed')
})
