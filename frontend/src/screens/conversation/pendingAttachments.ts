// The images waiting in the composer: each uploads the moment it is added
// (paste, drop, the Attach button), shows while it does, and is sent by id
// with the message. The rules are pure functions over a small state (unit
// tested); usePendingAttachments runs the uploads around them.
import { useQueryClient } from '@tanstack/react-query'
import { useCallback, useEffect, useMemo, useRef, useState, type ClipboardEvent, type DragEvent } from 'react'
import { ApiError, errorText } from '../../lib/api'
import { MAX_ATTACHMENTS, seedAttachmentURL, uploadAttachment, type Attachment } from '../../lib/attachments'

export interface PendingImage {
  key: string
  name: string
  status: 'uploading' | 'ready' | 'error'
  attachment?: Attachment
  /** Why the server refused it (the error envelope's message). */
  error?: string
}

export interface PendingState {
  images: PendingImage[]
  /** Why some images were not added (the per-message limit). */
  notice: string
}

export const noPending: PendingState = { images: [], notice: '' }

/** An image about to be added. */
export type NewImage = Pick<PendingImage, 'key' | 'name'>

/** Images that will go with the message: a refused one does not, so it takes no place. */
const counted = (s: PendingState) => s.images.filter((i) => i.status !== 'error').length

/**
 * Adds images up to the per-message limit; the rest are refused with a
 * notice saying why. Answers which were accepted: their uploads start.
 */
export function addImages(s: PendingState, incoming: NewImage[]): { state: PendingState; accepted: NewImage[]; refused: NewImage[] } {
  const room = Math.max(0, MAX_ATTACHMENTS - counted(s))
  const accepted = incoming.slice(0, room)
  const refused = incoming.slice(room)
  const notice = refused.length
    ? `A message carries at most ${MAX_ATTACHMENTS} images: ${refused.length === 1 ? '1 image was' : `${refused.length} images were`} not added.`
    : ''
  const images = [...s.images, ...accepted.map((i): PendingImage => ({ ...i, status: 'uploading' }))]
  return { state: { images, notice }, accepted, refused }
}

/** The server took the image. An image removed meanwhile stays removed. */
export function uploaded(s: PendingState, key: string, attachment: Attachment): PendingState {
  return patch(s, key, { status: 'ready', attachment, error: undefined })
}

/** The server refused the image: it stays, marked, until removed, and is not sent. */
export function failed(s: PendingState, key: string, error: string): PendingState {
  return patch(s, key, { status: 'error', error })
}

export function removeImage(s: PendingState, key: string): PendingState {
  return { images: s.images.filter((i) => i.key !== key), notice: '' }
}

/** The ids a message sends: the images the server took, in the order they were added. */
export function readyIds(s: PendingState): string[] {
  return s.images.flatMap((i) => (i.status === 'ready' && i.attachment ? [i.attachment.id] : []))
}

export const isUploading = (s: PendingState) => s.images.some((i) => i.status === 'uploading')

function patch(s: PendingState, key: string, p: Partial<PendingImage>): PendingState {
  if (!s.images.some((i) => i.key === key)) return s
  return { ...s, images: s.images.map((i) => (i.key === key ? { ...i, ...p } : i)) }
}

/** The files of a paste or a drop; a paste of text has none and goes on as a paste. */
export function filesOf(data: DataTransfer | null): File[] {
  if (!data) return []
  if (data.files?.length) return Array.from(data.files)
  return Array.from(data.items ?? []).flatMap((it) => {
    const f = it.kind === 'file' ? it.getAsFile() : null
    return f ? [f] : []
  })
}

let counter = 0

/** Why the server refused a file: its words on the file part read after the file's name ("x.png: is not a PNG or JPEG image"). */
function refusal(e: unknown): string {
  if (e instanceof ApiError) return e.fields.file ?? e.message
  return errorText(e)
}

/** The composer's pending images, with the handlers that add them. */
export function usePendingAttachments() {
  const qc = useQueryClient()
  const [state, setState] = useState<PendingState>(noPending)
  // The freshest state, for handlers that must decide before React renders
  // (two pastes in a row both count against the limit).
  const current = useRef(state)
  const uploads = useRef(new Map<string, AbortController>())
  const [dragging, setDragging] = useState(false)

  const update = useCallback((f: (s: PendingState) => PendingState) => {
    current.current = f(current.current)
    setState(current.current)
  }, [])

  const add = useCallback((files: File[]) => {
    if (!files.length) return
    const byKey = new Map<string, File>()
    const incoming = files.map((file) => {
      const key = `img-${++counter}`
      byKey.set(key, file)
      return { key, name: file.name || 'image' }
    })
    const { state: next, accepted } = addImages(current.current, incoming)
    update(() => next)
    for (const { key } of accepted) {
      const file = byKey.get(key)!
      const ctl = new AbortController()
      uploads.current.set(key, ctl)
      uploadAttachment(file, ctl.signal)
        .then((a) => {
          // The thumbnail, and the message's image once sent, show these bytes.
          seedAttachmentURL(qc, a.id, file)
          update((s) => uploaded(s, key, a))
        })
        .catch((e: unknown) => {
          if (ctl.signal.aborted) return
          update((s) => failed(s, key, refusal(e)))
        })
        .finally(() => uploads.current.delete(key))
    }
  }, [qc, update])

  const remove = useCallback((key: string) => {
    uploads.current.get(key)?.abort()
    update((s) => removeImage(s, key))
  }, [update])

  /** After a send: the message took the images (the transcript shows them from the cache). */
  const clear = useCallback(() => {
    uploads.current.forEach((c) => c.abort())
    update(() => noPending)
  }, [update])

  useEffect(() => {
    const pending = uploads.current
    return () => pending.forEach((c) => c.abort())
  }, [])

  const hasFiles = (e: DragEvent) => Array.from(e.dataTransfer?.types ?? []).includes('Files')
  const dropProps = {
    onDragOver: (e: DragEvent) => {
      if (!hasFiles(e)) return
      e.preventDefault()
      e.dataTransfer.dropEffect = 'copy'
      if (!dragging) setDragging(true)
    },
    onDragLeave: (e: DragEvent) => {
      // Leaving for a child of the box is still over the box.
      if (!e.currentTarget.contains(e.relatedTarget as Node | null)) setDragging(false)
    },
    onDrop: (e: DragEvent) => {
      setDragging(false)
      const files = filesOf(e.dataTransfer)
      if (!files.length) return
      e.preventDefault()
      add(files)
    },
  }

  const onPaste = (e: ClipboardEvent) => {
    const files = filesOf(e.clipboardData)
    if (!files.length) return
    e.preventDefault()
    add(files)
  }

  const ids = useMemo(() => readyIds(state), [state])
  return { images: state.images, notice: state.notice, ids, uploading: isUploading(state), dragging, add, remove, clear, dropProps, onPaste }
}

export type PendingAttachments = ReturnType<typeof usePendingAttachments>
