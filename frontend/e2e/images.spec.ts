// Images in messages: an image pasted, dropped or picked in the composer is
// uploaded, sent with the message, reaches the model in each vendor's own
// format (the scripted model names the part it read and the image's size),
// and shows in the user's message live and after a reload. A file that is
// not an image is refused with the server's reason, a tab that did not send
// the image sees it live, and a model that refuses images says so.
import type { Locator, Page } from '@playwright/test'
import { expect, expectConsole, idle, test, type Stack } from './fixtures'

/** A real 2×3 PNG (red and blue columns): the scripted model decodes its header. */
const PNG_2X3 = 'iVBORw0KGgoAAAANSUhEUgAAAAIAAAADCAIAAAA2iEnWAAAAEklEQVR4nGP4z8DA0PCfAYUCAExWB3sFhcHoAAAAAElFTkSuQmCC'

type AddImage = (page: Page, name: string) => Promise<void>

/** A paste of an image file into the message box, as a screenshot tool's clipboard holds it. */
const paste: AddImage = async (page, name) => {
  await page.getByLabel('Message').evaluate((box, [b64, n]) => {
    const data = new DataTransfer()
    data.items.add(new File([Uint8Array.from(atob(b64), (c) => c.charCodeAt(0))], n, { type: 'image/png' }))
    box.dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }))
  }, [PNG_2X3, name])
}

/** A file dragged from the desktop and dropped on the composer. */
const drop: AddImage = async (page, name) => {
  await page.locator('.composer-box').evaluate((box, [b64, n]) => {
    const data = new DataTransfer()
    data.items.add(new File([Uint8Array.from(atob(b64), (c) => c.charCodeAt(0))], n, { type: 'image/png' }))
    for (const type of ['dragenter', 'dragover', 'drop']) box.dispatchEvent(new DragEvent(type, { dataTransfer: data, bubbles: true, cancelable: true }))
  }, [PNG_2X3, name])
}

/** The Attach image button, and the file chosen in the browser's picker. */
function pick(buffer: Buffer, mimeType = 'image/png'): AddImage {
  return async (page, name) => {
    const chooser = page.waitForEvent('filechooser')
    await page.getByRole('button', { name: 'Attach image' }).click()
    await (await chooser).setFiles({ name, mimeType, buffer })
  }
}

/** Each vendor protocol, as a provider on the scripted model, the part an image travels in, and one way to add it. */
const protocols: { name: string; provider: (stack: Stack) => Record<string, string>; via: string; add: AddImage }[] = [
  { name: 'responses', provider: (s) => ({ type: 'openai', api: 'responses', base_url: s.scriptedURL }), via: 'input_image', add: paste },
  { name: 'chat_completions', provider: (s) => ({ type: 'openai', api: 'chat_completions', base_url: s.scriptedURL }), via: 'image_url', add: drop },
  // The Anthropic SDK appends /v1 itself.
  { name: 'anthropic', provider: (s) => ({ type: 'anthropic', base_url: s.scriptedURL.replace(/\/v1$/, '') }), via: 'image block', add: pick(Buffer.from(PNG_2X3, 'base64')) },
]

/** The thumbnail of the pending image called name, once the server has it. */
async function uploaded(page: Page, name: string) {
  const thumb = page.getByRole('list', { name: 'Attached images' }).getByRole('listitem').filter({ has: page.getByAltText(name) })
  await expect(thumb).toHaveAttribute('data-status', 'ready')
}

/** The image in a user message, drawn from the bytes the server kept (2×3, not a broken image). */
async function shownInMessage(page: Page, name: string): Promise<Locator> {
  const img = page.locator('.msg-user .msg-images').getByAltText(name)
  await expect(img).toBeVisible()
  await expect.poll(() => img.evaluate((i: HTMLImageElement) => `${i.naturalWidth}x${i.naturalHeight}`), { message: 'the image decoded' }).toBe('2x3')
  return img
}

for (const p of protocols) {
  test(`images: an image reaches the ${p.name} model and stays in the message after a reload`, async ({ page, user, stack, tag }) => {
    const provider = await user.api('POST', '/providers', { name: `vision-${p.name}-${tag}`, api_key: 'any-key', ...p.provider(stack) })
    const agent = await user.api('POST', '/agents', { name: `Vision ${p.name} ${tag}`, model: 'vision', provider_id: provider.id })
    await page.goto('/')
    await page.getByLabel('Agent').selectOption({ label: agent.name })
    await p.add(page, 'tiny.png')
    await uploaded(page, 'tiny.png')
    await page.getByLabel('Message').fill('What is in this picture?')
    await page.keyboard.press('Enter')
    await page.waitForURL(/\/s\//)

    const answer = page.locator('.msg-assistant .markdown', { hasText: 'You said: What is in this picture?' })
    await expect(answer).toContainText(`image/png 2x3 via ${p.via}`)
    await shownInMessage(page, 'tiny.png')
    await expect(page.locator('.msg-user .bubble')).toHaveText('What is in this picture?')
    await expect(page.getByRole('list', { name: 'Attached images' }), 'the pending list to clear on send').toHaveCount(0)
    await idle(page)

    await page.reload()
    await expect(page.locator('.msg-assistant .markdown')).toContainText(`image/png 2x3 via ${p.via}`)
    const img = await shownInMessage(page, 'tiny.png')
    // Full size, in a dialog named for the image.
    await page.getByRole('button', { name: 'Open tiny.png full size' }).click()
    const dialog = page.getByRole('dialog', { name: 'tiny.png' })
    await expect(dialog.getByAltText('tiny.png')).toBeVisible()
    await page.keyboard.press('Escape')
    await expect(dialog).toHaveCount(0)
    await expect(img).toBeVisible()
  })
}

test('images: an image alone is a message, and another tab sees it while the run is live', async ({ page, context, user, agentFor }) => {
  // The run waits on an approval, so whatever the other tab shows of it came over the bus, not from a reload.
  const agent = await agentFor('Careful', 'todo', { approval: { approve_tools: ['todo_write'] } })
  const session = await user.api('POST', '/sessions', { agent_config_id: agent.id })
  const other = await context.newPage()
  await other.goto(`/s/${session.id}`)
  await expect(other.getByText('Say hello')).toBeVisible()
  await page.goto(`/s/${session.id}`)
  await paste(page, 'alone.png')
  await uploaded(page, 'alone.png')
  await expect(page.getByRole('button', { name: 'Send' })).toBeEnabled()
  await page.getByRole('button', { name: 'Send' }).click()

  await expect(other.locator('.tool-card[data-tool="todo_write"]').getByRole('button', { name: 'Approve once' })).toBeVisible()
  await expect(other.locator('.conversation')).toHaveAttribute('data-run-status', 'interrupted')
  await shownInMessage(other, 'alone.png')
  await expect(other.locator('.msg-user .bubble'), 'no empty text bubble').toHaveCount(0)
  await shownInMessage(page, 'alone.png')
})

test('images: a file that is not an image is refused with the reason, and can be removed', {
  annotation: expectConsole(/status of 400/),
}, async ({ page, agentFor }) => {
  const agent = await agentFor('Vision', 'vision')
  await page.goto('/')
  await page.getByLabel('Agent').selectOption({ label: agent.name })
  await pick(Buffer.from('just some notes, not a picture\n'))(page, 'notes.png')
  const thumbs = page.getByRole('list', { name: 'Attached images' })
  await expect(thumbs.getByRole('alert')).toHaveText('notes.png: is not a PNG or JPEG image')
  await expect(thumbs.getByRole('listitem')).toHaveAttribute('data-status', 'error')
  // Refused, it is not sent: with no text there is nothing to send.
  await expect(page.getByRole('button', { name: 'Send' })).toBeDisabled()
  await page.getByRole('button', { name: 'Remove notes.png' }).click()
  await expect(thumbs).toHaveCount(0)
})

test('images: a model that takes no images ends the run with an error saying so', async ({ page, agentFor }) => {
  const agent = await agentFor('Blind', 'blind')
  await page.goto('/')
  await page.getByLabel('Agent').selectOption({ label: agent.name })
  await drop(page, 'tiny.png')
  await uploaded(page, 'tiny.png')
  await page.getByLabel('Message').fill('Describe this')
  await page.keyboard.press('Enter')
  await page.waitForURL(/\/s\//)
  const error = page.locator('.note-error')
  await expect(error).toContainText('The run failed')
  await expect(error).toContainText('refused a request carrying images')
  await expect(error).toContainText('does not accept image input')
  await idle(page)
  await shownInMessage(page, 'tiny.png')
})
