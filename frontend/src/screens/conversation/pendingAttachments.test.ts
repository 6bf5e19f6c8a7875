// The composer's pending images as rules: the per-message limit, an upload
// that lands or is refused, a removal, and what a send carries.
import { describe, expect, it } from 'vitest'
import type { Attachment } from '../../lib/attachments'
import { addImages, failed, isUploading, noPending, readyIds, removeImage, uploaded, type NewImage, type PendingState } from './pendingAttachments'

const img = (n: number): NewImage => ({ key: `k${n}`, name: `shot-${n}.png` })
const att = (id: string): Attachment => ({ id, mime: 'image/png', size: 70, width: 2, height: 3, name: `${id}.png`, created_at: '' })

function added(n: number, s: PendingState = noPending) {
  return addImages(s, Array.from({ length: n }, (_, i) => img(s.images.length + i + 1))).state
}

describe('pending images', () => {
  it('start uploading when added, and a message carries only the ones the server took, in order', () => {
    let s = added(3)
    expect(s.images.map((i) => i.status)).toEqual(['uploading', 'uploading', 'uploading'])
    expect(isUploading(s)).toBe(true)
    expect(readyIds(s)).toEqual([])
    s = uploaded(s, 'k2', att('a2'))
    s = uploaded(s, 'k1', att('a1'))
    s = failed(s, 'k3', 'the file is not a PNG or JPEG image')
    expect(isUploading(s)).toBe(false)
    expect(readyIds(s)).toEqual(['a1', 'a2'])
    expect(s.images[2]).toMatchObject({ status: 'error', error: 'the file is not a PNG or JPEG image' })
  })

  it('stop at eight per message, saying how many were left out', () => {
    const r = addImages(added(6), [img(7), img(8), img(9), img(10)])
    expect(r.accepted.map((i) => i.key)).toEqual(['k7', 'k8'])
    expect(r.refused.map((i) => i.key)).toEqual(['k9', 'k10'])
    expect(r.state.images).toHaveLength(8)
    expect(r.state.notice).toBe('A message carries at most 8 images: 2 images were not added.')
    // Full: one more is refused too, alone.
    const again = addImages(r.state, [img(11)])
    expect(again.accepted).toEqual([])
    expect(again.state.notice).toBe('A message carries at most 8 images: 1 image was not added.')
  })

  it('a refused image takes no place: it is not sent', () => {
    let s = added(8)
    s = failed(s, 'k1', 'too large')
    const r = addImages(s, [img(9)])
    expect(r.accepted.map((i) => i.key)).toEqual(['k9'])
    expect(r.state.notice).toBe('')
  })

  it('a removed image is gone for good: its upload landing later does not bring it back', () => {
    let s = added(2)
    s = addImages(s, [img(3), img(4), img(5), img(6), img(7), img(8), img(9)]).state
    expect(s.notice).not.toBe('')
    s = removeImage(s, 'k1')
    expect(s.images.map((i) => i.key)).not.toContain('k1')
    expect(s.notice).toBe('')
    expect(uploaded(s, 'k1', att('a1'))).toBe(s)
    expect(failed(s, 'k1', 'x')).toBe(s)
    expect(readyIds(uploaded(s, 'k2', att('a2')))).toEqual(['a2'])
  })
})
