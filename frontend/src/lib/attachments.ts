// Images sent with a message: uploaded on their own (POST /attachments)
// before the run that names them, and read back as bytes behind the bearer
// token — an <img src> cannot send it, so each image is fetched once as a
// blob and shown through an object URL the query cache owns.
import { useQuery, useQueryClient, type QueryClient } from '@tanstack/react-query'
import { useEffect } from 'react'
import { authFetch, type Schemas } from './api'

/** An uploaded image as the server describes it (POST /attachments, run.started). */
export type Attachment = Schemas['AttachmentView']

/** An image of a user message, the same from a live run.started and a stored entry's input_image part. */
export interface MessageImage {
  attachmentId: string
  mime: string
  width: number
  height: number
  name?: string
}

/** The most images one message may carry (the server refuses more). */
export const MAX_ATTACHMENTS = 8

/** What the file picker offers; the server is the judge of what a file really is. */
export const IMAGE_TYPES = 'image/png,image/jpeg'

const URL_BASE = '/api/v1/attachments' // authFetch puts it under the mount

/**
 * Uploads one image (multipart, the part named file). The answer's error
 * envelope — not a PNG/JPEG image, too large — becomes an ApiError whose
 * message the composer shows on the image.
 */
export async function uploadAttachment(file: File, signal?: AbortSignal): Promise<Attachment> {
  const form = new FormData()
  form.append('file', file, file.name)
  // fetch, not openapi-fetch: the body is the FormData as it is, with the
  // boundary the browser writes into its Content-Type.
  const res = await authFetch(URL_BASE, { method: 'POST', body: form, signal })
  return (await res.json()) as Attachment
}

export const attachmentKey = (id: string) => ['attachment', id] as const

async function fetchAttachmentURL(id: string, signal: AbortSignal): Promise<string> {
  const res = await authFetch(`${URL_BASE}/${encodeURIComponent(id)}`, { signal })
  return URL.createObjectURL(await res.blob())
}

/**
 * Hands the bytes of an image just uploaded to the cache, so the message
 * that carries it shows it without fetching it back.
 */
export function seedAttachmentURL(qc: QueryClient, id: string, file: Blob) {
  watchRemovals(qc)
  qc.setQueryData(attachmentKey(id), URL.createObjectURL(file))
}

const watched = new WeakSet<QueryClient>()

/** An object URL lives as long as its cache entry: dropped (unused past gcTime, a sign-out), it is revoked. */
function watchRemovals(qc: QueryClient) {
  if (watched.has(qc)) return
  watched.add(qc)
  qc.getQueryCache().subscribe((e) => {
    if (e.type !== 'removed' || e.query.queryKey[0] !== 'attachment') return
    const url = e.query.state.data
    if (typeof url === 'string') URL.revokeObjectURL(url)
  })
}

/** An image's object URL, fetched once per id: its bytes never change. */
export function useAttachmentURL(id: string) {
  const qc = useQueryClient()
  useEffect(() => watchRemovals(qc), [qc])
  return useQuery({
    queryKey: attachmentKey(id),
    queryFn: ({ signal }) => fetchAttachmentURL(id, signal),
    staleTime: Infinity,
    gcTime: 10 * 60_000,
  })
}

/** The images of a user message's content parts (input_image); other parts are not images. */
export function imagesOfContent(content: unknown): MessageImage[] {
  if (!Array.isArray(content)) return []
  const out: MessageImage[] = []
  for (const c of content) {
    if (!c || typeof c !== 'object') continue
    const p = c as { type?: unknown; attachment_id?: unknown; mime?: unknown; width?: unknown; height?: unknown; name?: unknown }
    if (p.type !== 'input_image' || typeof p.attachment_id !== 'string' || !p.attachment_id) continue
    out.push(image(p.attachment_id, p.mime, p.width, p.height, p.name))
  }
  return out
}

/** The images a run.started carries (its attachments), so a tab that did not send them draws them live. */
export function imagesOfAttachments(attachments: Attachment[] | undefined): MessageImage[] {
  return (attachments ?? []).map((a) => image(a.id, a.mime, a.width, a.height, a.name))
}

function image(id: string, mime: unknown, width: unknown, height: unknown, name: unknown): MessageImage {
  return {
    attachmentId: id, mime: typeof mime === 'string' ? mime : '',
    width: typeof width === 'number' ? width : 0, height: typeof height === 'number' ? height : 0,
    ...(typeof name === 'string' && name ? { name } : {}),
  }
}

/** What an image is called where it has no name of its own (a pasted screenshot): "PNG image, 2×3". */
export function imageLabel(img: Pick<MessageImage, 'name' | 'mime' | 'width' | 'height'>): string {
  if (img.name) return img.name
  const kind = img.mime.replace(/^image\//, '').toUpperCase() || 'An'
  return img.width && img.height ? `${kind} image, ${img.width}×${img.height}` : `${kind} image`
}
