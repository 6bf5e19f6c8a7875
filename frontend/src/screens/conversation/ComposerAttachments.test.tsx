// @vitest-environment jsdom
// Images in the composer as a user meets them: picked, pasted or dropped,
// uploading, refused by the server with its reason, removed, over the limit,
// and sent by id with the message (or alone). The server is a stubbed fetch.
import { act, fireEvent, screen, waitFor, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { Agent } from '../../lib/api'
import { attachmentKey } from '../../lib/attachments'
import { renderWithData } from '../../test/render'
import { Composer } from './Composer'

const agents = [{ id: 'a1', name: 'Vision' }] as Agent[]

interface Upload { name: string; resolve: (r: Response) => void }
let uploads: Upload[]
let urls: number

beforeEach(() => {
  uploads = []
  urls = 0
  // jsdom has no object URLs; each file gets its own.
  URL.createObjectURL = vi.fn(() => `blob:test-${++urls}`)
  URL.revokeObjectURL = vi.fn()
  // Each upload waits until the test answers it.
  vi.stubGlobal('fetch', vi.fn((url: string, init: RequestInit) => {
    expect(url).toBe('/api/v1/attachments')
    const file = (init.body as FormData).get('file') as File
    return new Promise<Response>((resolve) => uploads.push({ name: file.name, resolve }))
  }))
})

afterEach(() => {
  vi.unstubAllGlobals()
})

const png = (name: string) => new File([new Uint8Array([137, 80, 78, 71])], name, { type: 'image/png' })
const created = (id: string, name: string) =>
  new Response(JSON.stringify({ id, mime: 'image/png', size: 4, width: 2, height: 3, name, created_at: '' }), { status: 201 })
const refused = (reason: string) =>
  new Response(JSON.stringify({ error: { code: 'validation', message: `file: ${reason}`, fields: { file: reason } } }), { status: 400 })
const tooLarge = () =>
  new Response(JSON.stringify({ error: { code: 'validation', message: 'request body exceeds the 10.1 MiB limit' } }), { status: 413 })

function show(onSend = vi.fn(async () => true), liveRun?: { status: string; onStop: () => void; onSteer: (t: string) => void }) {
  const r = renderWithData(<Composer agents={agents} agentId="a1" onAgent={() => {}} plan={false} onPlan={() => {}} onSend={onSend} liveRun={liveRun} />)
  return { ...r, onSend }
}

const send = () => screen.getByRole('button', { name: 'Send' })
const thumbs = () => screen.queryByRole('list', { name: 'Attached images' })

async function answer(i: number, res: Response) {
  await act(async () => uploads[i].resolve(res))
}

describe('images in the composer', () => {
  it('picked with Attach image: uploading, then sent by id with the text, and the list clears', async () => {
    const user = userEvent.setup()
    const { onSend, qc } = show()
    expect(screen.getByRole('button', { name: 'Attach image' })).toBeEnabled()
    await user.upload(screen.getByLabelText('Image files'), [png('a.png'), png('b.png')])
    expect(uploads.map((u) => u.name)).toEqual(['a.png', 'b.png'])
    // No picture until the server has taken it: a refused file is never drawn broken.
    expect(screen.getByText('Uploading a.png…')).toBeInTheDocument()
    expect(screen.queryByAltText('a.png')).not.toBeInTheDocument()
    await user.type(screen.getByLabelText('Message'), 'what is this?')
    // Not sent while an image is still on its way.
    expect(send()).toBeDisabled()
    await answer(0, created('att-a', 'a.png'))
    await answer(1, created('att-b', 'b.png'))
    expect(screen.queryByText(/Uploading/)).not.toBeInTheDocument()
    expect(screen.getByAltText('a.png')).toHaveAttribute('src', expect.stringMatching(/^blob:/))
    // The transcript will show them from the bytes already here.
    expect(qc.getQueryData(attachmentKey('att-a'))).toMatch(/^blob:/)
    await user.click(send())
    expect(onSend).toHaveBeenCalledWith('what is this?', ['att-a', 'att-b'])
    await waitFor(() => expect(thumbs()).not.toBeInTheDocument())
    expect(screen.getByLabelText('Message')).toHaveValue('')
  })

  it('an image alone is a message', async () => {
    const user = userEvent.setup()
    const { onSend } = show()
    expect(send()).toBeDisabled()
    await user.upload(screen.getByLabelText('Image files'), png('only.png'))
    await answer(0, created('att-1', 'only.png'))
    expect(send()).toBeEnabled()
    await user.click(send())
    expect(onSend).toHaveBeenCalledWith('', ['att-1'])
  })

  it('pasted and dropped images upload too; a paste of text stays a paste', async () => {
    show()
    const box = screen.getByLabelText('Message')
    fireEvent.paste(box, { clipboardData: { files: [png('pasted.png')], items: [], types: ['Files'] } })
    fireEvent.drop(box.closest('.composer-box')!, { dataTransfer: { files: [png('dropped.png')], items: [], types: ['Files'] } })
    expect(uploads.map((u) => u.name)).toEqual(['pasted.png', 'dropped.png'])
    fireEvent.paste(box, { clipboardData: { files: [], items: [], types: ['text/plain'], getData: () => 'words' } })
    expect(uploads).toHaveLength(2)
  })

  it('a refused image says why, can be removed, and is not sent', async () => {
    const user = userEvent.setup()
    const { onSend } = show()
    await user.upload(screen.getByLabelText('Image files'), [png('notes.png'), png('ok.png'), png('huge.png')])
    await answer(0, refused('is not a PNG or JPEG image'))
    await answer(1, created('att-ok', 'ok.png'))
    await answer(2, tooLarge())
    expect(screen.getAllByRole('alert').map((a) => a.textContent)).toEqual([
      'notes.png: is not a PNG or JPEG image', 'huge.png: request body exceeds the 10.1 MiB limit',
    ])
    await user.click(screen.getByRole('button', { name: 'Remove notes.png' }))
    expect(screen.getByRole('alert')).toHaveTextContent('huge.png: request body exceeds the 10.1 MiB limit')
    await user.type(screen.getByLabelText('Message'), 'look')
    await user.click(send())
    expect(onSend).toHaveBeenCalledWith('look', ['att-ok'])
    await waitFor(() => expect(thumbs()).not.toBeInTheDocument())
  })

  it('Remove drops an image, even one still uploading', async () => {
    const user = userEvent.setup()
    const { onSend } = show()
    await user.upload(screen.getByLabelText('Image files'), [png('keep.png'), png('drop.png')])
    await user.click(screen.getByRole('button', { name: 'Remove drop.png' }))
    expect(within(thumbs()!).getAllByRole('listitem')).toHaveLength(1)
    expect(screen.queryByText('Uploading drop.png…')).not.toBeInTheDocument()
    await answer(1, created('att-drop', 'drop.png'))
    await answer(0, created('att-keep', 'keep.png'))
    // Its upload landing late does not bring it back.
    expect(within(thumbs()!).getAllByRole('listitem')).toHaveLength(1)
    expect(screen.getByAltText('keep.png')).toHaveAttribute('src', expect.stringMatching(/^blob:/))
    await user.click(send())
    expect(onSend).toHaveBeenCalledWith('', ['att-keep'])
  })

  it('past eight, the rest are left out and the composer says so', async () => {
    const user = userEvent.setup()
    show()
    await user.upload(screen.getByLabelText('Image files'), Array.from({ length: 10 }, (_, i) => png(`p${i}.png`)))
    expect(uploads).toHaveLength(8)
    expect(within(thumbs()!).getAllByRole('listitem')).toHaveLength(8)
    expect(screen.getByRole('alert')).toHaveTextContent('A message carries at most 8 images: 2 images were not added.')
  })

  it('a steer is text: the images wait for the next message', async () => {
    const user = userEvent.setup()
    const onSteer = vi.fn()
    const { onSend } = show(undefined, { status: 'running', onStop: () => {}, onSteer })
    await user.upload(screen.getByLabelText('Image files'), png('later.png'))
    await answer(0, created('att-later', 'later.png'))
    expect(screen.getByRole('button', { name: 'Steer' })).toBeDisabled()
    await user.type(screen.getByLabelText('Message'), 'faster{Enter}')
    expect(onSteer).toHaveBeenCalledWith('faster')
    expect(onSend).not.toHaveBeenCalled()
    expect(screen.getByAltText('later.png')).toBeInTheDocument()
  })
})
