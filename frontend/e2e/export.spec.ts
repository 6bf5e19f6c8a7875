// Export: the conversation's header menu saves the ACTIVE branch as
// Markdown or JSON; an attempt branched away from is not in the file.
import { readFile } from 'node:fs/promises'
import type { Page } from '@playwright/test'
import { conversationFor, expect, test, type User } from './fixtures'

const textOf = (e: { item?: { content?: { text?: string }[] } }) => (e.item?.content ?? []).map((c) => c.text ?? '').join('')

/** A conversation whose second question was branched away from and asked differently. */
async function branchedConversation(user: User, agentId: string) {
  const sid = await conversationFor(user, agentId, 'first question ALPHA')
  const run = (input: string) => user.api('POST', `/sessions/${sid}/runs`, { input }, user.token, { Prefer: 'wait=60' })
  expect((await run('abandoned question BETA')).status).toBe('completed')
  const entries: { id: string; item?: { role?: string; content?: { text?: string }[] } }[] = await user.api('GET', `/sessions/${sid}/messages`)
  const firstAnswer = entries.find((e) => e.item?.role === 'assistant' && textOf(e).includes('ALPHA'))
  expect(firstAnswer, 'the first answer').toBeTruthy()
  await user.api('POST', `/sessions/${sid}/branch`, { entry_id: firstAnswer!.id })
  expect((await run('kept question GAMMA')).status).toBe('completed')
  await user.api('PATCH', `/sessions/${sid}`, { name: 'Export me: GAMMA' })
  return sid
}

async function exportAs(page: Page, label: string) {
  await page.getByRole('button', { name: 'Export the conversation' }).click()
  const download = page.waitForEvent('download')
  await page.getByRole('button', { name: label }).click()
  const d = await download
  return { name: d.suggestedFilename(), text: await readFile((await d.path())!, 'utf8') }
}

test('export: the active branch as Markdown and as JSON', async ({ page, user, agentFor }) => {
  const agent = await agentFor('Echo', 'echo')
  const sid = await branchedConversation(user, agent.id)
  await page.goto(`/s/${sid}`)
  await expect(page.locator('.msg-assistant', { hasText: 'You said: kept question GAMMA' })).toBeVisible()

  const md = await exportAs(page, 'Export as Markdown')
  expect(md.name).toBe('export-me-gamma.md')
  expect(md.text.startsWith('# Export me: GAMMA\n')).toBe(true)
  expect(md.text).toContain('**You**\n\nfirst question ALPHA')
  expect(md.text).toContain(`**${agent.name}**\n\nYou said: first question ALPHA`)
  expect(md.text).toContain('**You**\n\nkept question GAMMA')
  expect(md.text).toContain('You said: kept question GAMMA')
  expect(md.text, 'the abandoned branch').not.toContain('BETA')

  const json = await exportAs(page, 'Export as JSON')
  expect(json.name).toBe('export-me-gamma.json')
  const doc = JSON.parse(json.text)
  expect(doc.session).toMatchObject({ id: sid, title: 'Export me: GAMMA', agent: agent.name })
  expect(Date.parse(doc.exported_at)).not.toBeNaN()
  const texts: string[] = doc.messages.map(textOf)
  expect(texts).toEqual(expect.arrayContaining(['first question ALPHA', 'You said: first question ALPHA', 'kept question GAMMA', 'You said: kept question GAMMA']))
  expect(json.text, 'the abandoned branch').not.toContain('BETA')
  expect(doc.messages.every((m: { on_path: boolean }) => m.on_path)).toBe(true)
})
