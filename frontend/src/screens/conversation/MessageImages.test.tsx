// @vitest-environment jsdom
// The images of a user message: read from a stored entry's input_image parts
// and from a live run.started's attachments (the same either way), drawn as
// thumbnails from the attachment cache, opening full size in a dialog.
import { screen, waitFor, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { Entry } from '../../lib/api'
import { attachmentKey } from '../../lib/attachments'
import { parseFrame, type ServerEvent } from '../../lib/events'
import { renderWithData } from '../../test/render'
import { fromEntries } from '../../timeline/fromEntries'
import { contentOf, type UserItem } from '../../timeline/model'
import { applyEvent, emptyLive } from '../../timeline/reduce'
import { UserMessage } from './Items'

const stored = {
  id: 'e1', kind: 'item', run_id: 'r1', session_id: 's1', created_at: '',
  item: {
    type: 'message', role: 'user', content: [
      { type: 'input_text', text: 'what is in these?' },
      { type: 'input_image', attachment_id: 'att-1', mime: 'image/png', width: 2, height: 3, name: 'tiny.png' },
      { type: 'input_image', attachment_id: 'att-2', mime: 'image/jpeg', width: 640, height: 480 },
    ],
  },
} as unknown as Entry

const started = {
  type: 'run.started', seq: 1, payload: {
    run_id: 'r1', session_id: 's1', input: 'what is in these?', attachments: [
      { id: 'att-1', mime: 'image/png', size: 70, width: 2, height: 3, name: 'tiny.png', created_at: '' },
      { id: 'att-2', mime: 'image/jpeg', size: 9000, width: 640, height: 480, name: '', created_at: '' },
    ],
  },
}

const liveUser = (frame: unknown) => applyEvent(emptyLive(), parseFrame(frame) as ServerEvent).state.runs.r1.items

afterEach(() => {
  vi.unstubAllGlobals()
})

describe('a user message with images', () => {
  it('reads its images from the input_image parts, keeping the text', () => {
    const [item] = fromEntries([stored]) as UserItem[]
    expect(item).toMatchObject({ kind: 'user', text: 'what is in these?' })
    expect(item.images).toEqual([
      { attachmentId: 'att-1', mime: 'image/png', width: 2, height: 3, name: 'tiny.png' },
      { attachmentId: 'att-2', mime: 'image/jpeg', width: 640, height: 480 },
    ])
  })

  it('live, from run.started, is the message its reload draws', () => {
    expect(liveUser(started).map(contentOf)).toEqual(fromEntries([stored]).map(contentOf))
  })

  it('live, images with no text are still a message', () => {
    const items = liveUser({ ...started, payload: { ...started.payload, input: '' } })
    expect(items).toHaveLength(1)
    expect(items[0]).toMatchObject({ kind: 'user', text: '', images: [{ attachmentId: 'att-1' }, { attachmentId: 'att-2' }] })
  })

  it('shows thumbnails named for the image, one opening full size in a dialog', async () => {
    const user = userEvent.setup()
    const [item] = fromEntries([stored]) as UserItem[]
    renderWithData(<UserMessage item={item} actions={{}} />, [[attachmentKey('att-1'), 'blob:one'], [attachmentKey('att-2'), 'blob:two']])
    const list = screen.getByRole('list', { name: 'Images' })
    expect(within(list).getByAltText('tiny.png')).toHaveAttribute('src', 'blob:one')
    // A pasted image has no name: it is called by its kind and size.
    expect(within(list).getByAltText('JPEG image, 640×480')).toHaveAttribute('src', 'blob:two')
    expect(screen.getByText('what is in these?')).toHaveClass('bubble')

    await user.click(screen.getByRole('button', { name: 'Open tiny.png full size' }))
    const dialog = screen.getByRole('dialog', { name: 'tiny.png' })
    expect(within(dialog).getByAltText('tiny.png')).toHaveAttribute('src', 'blob:one')
    expect(dialog).toHaveTextContent('2×3')
    await user.click(within(dialog).getByRole('button', { name: 'Close' }))
    expect(screen.queryByRole('dialog')).not.toBeInTheDocument()
  })

  it('fetches the bytes with the bearer token, and says so when they cannot be had', async () => {
    localStorage.setItem('agents.token', 'tok')
    URL.createObjectURL = vi.fn(() => 'blob:fetched')
    const fetch = vi.fn(async (url: string) => url.endsWith('/att-1')
      ? new Response(new Uint8Array([1]), { status: 200, headers: { 'Content-Type': 'image/png' } })
      : new Response(JSON.stringify({ error: { code: 'not_found', message: 'attachment not found' } }), { status: 404 }))
    vi.stubGlobal('fetch', fetch)
    const [item] = fromEntries([stored]) as UserItem[]
    renderWithData(<UserMessage item={item} actions={{}} />)
    await waitFor(() => expect(screen.getByAltText('tiny.png')).toHaveAttribute('src', 'blob:fetched'))
    expect(fetch).toHaveBeenCalledWith('/api/v1/attachments/att-1', expect.objectContaining({ headers: { Authorization: 'Bearer tok' } }))
    expect(await screen.findByRole('img', { name: 'JPEG image, 640×480' })).toHaveTextContent('not available')
    localStorage.removeItem('agents.token')
  })

  it('a message without images draws its bubble alone', () => {
    renderWithData(<UserMessage item={{ key: 'k', kind: 'user', text: 'just words' }} actions={{}} />)
    expect(screen.queryByRole('list', { name: 'Images' })).not.toBeInTheDocument()
    expect(screen.getByText('just words')).toHaveClass('bubble')
  })
})
