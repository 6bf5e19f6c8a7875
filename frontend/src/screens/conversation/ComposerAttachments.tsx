// The composer's images: the strip of pending thumbnails (uploading, refused,
// removable) and the Attach image button. Their state and the paste/drop
// handlers are usePendingAttachments'.
import { useRef } from 'react'
import { Icon } from '../../components/Icon'
import { IMAGE_TYPES, useAttachmentURL } from '../../lib/attachments'
import type { PendingAttachments, PendingImage } from './pendingAttachments'

/** The pending images over the message box; nothing when there are none. */
export function ComposerAttachments({ pending }: { pending: PendingAttachments }) {
  const { images, notice, remove } = pending
  if (!images.length && !notice) return null
  return (
    <div className="composer-images">
      {notice && <p className="error-text" role="alert">{notice}</p>}
      {images.length > 0 && (
        <ul className="composer-thumbs" aria-label="Attached images">
          {images.map((img) => (
            <li key={img.key} className={`composer-thumb composer-thumb-${img.status}`} data-status={img.status}>
              <Thumbnail image={img} />
              {img.status === 'uploading' && <span className="composer-thumb-state" role="status">Uploading {img.name}…</span>}
              {img.status === 'error' && <span className="composer-thumb-reason" role="alert">{img.name}: {img.error}</span>}
              <button type="button" className="composer-thumb-remove" aria-label={`Remove ${img.name}`} title="Remove" onClick={() => remove(img.key)}>
                <Icon name="x" size={12} />
              </button>
            </li>
          ))}
        </ul>
      )}
    </div>
  )
}

/**
 * The picture once the server has taken it (its bytes are in the attachment
 * cache by then); before, or refused, a tile: a file that is not an image is
 * never drawn as a broken one.
 */
function Thumbnail({ image }: { image: PendingImage }) {
  if (image.status !== 'ready' || !image.attachment) return <span className="composer-thumb-tile" aria-hidden><Icon name="image" size={22} /></span>
  return <ReadyThumbnail id={image.attachment.id} name={image.name} />
}

function ReadyThumbnail({ id, name }: { id: string; name: string }) {
  const url = useAttachmentURL(id)
  return url.data ? <img src={url.data} alt={name} /> : <span className="composer-thumb-tile" aria-hidden><Icon name="image" size={22} /></span>
}

/** The file picker behind a named button: PNG and JPEG, several at once. */
export function AttachImageButton({ onFiles, disabled }: { onFiles: (files: File[]) => void; disabled?: boolean }) {
  const input = useRef<HTMLInputElement>(null)
  return (
    <>
      <button type="button" className="icon-btn" aria-label="Attach image" title="Attach image (or paste, or drop one here)" disabled={disabled}
        onClick={() => input.current?.click()}>
        <Icon name="image" size={16} />
      </button>
      <input ref={input} type="file" accept={IMAGE_TYPES} multiple hidden aria-label="Image files"
        onChange={(e) => {
          onFiles(Array.from(e.target.files ?? []))
          // The same file picked again is a new attachment.
          e.target.value = ''
        }} />
    </>
  )
}
