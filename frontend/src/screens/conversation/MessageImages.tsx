// The images of a user message: thumbnails in the bubble, each opening to
// its full size in a modal dialog. The bytes come through the attachment
// cache (an authenticated fetch), so a thumbnail shows a placeholder until
// they arrive and says so when they cannot.
import { useEffect, useRef, useState } from 'react'
import { Icon } from '../../components/Icon'
import { errorText } from '../../lib/api'
import { imageLabel, useAttachmentURL, type MessageImage } from '../../lib/attachments'

export function MessageImages({ images }: { images: MessageImage[] }) {
  const [open, setOpen] = useState<MessageImage | null>(null)
  return (
    <>
      <ul className="msg-images" aria-label="Images">
        {images.map((img, i) => (
          <li key={`${img.attachmentId}:${i}`}>
            <Thumbnail image={img} onOpen={() => setOpen(img)} />
          </li>
        ))}
      </ul>
      {open && <ImageDialog image={open} onClose={() => setOpen(null)} />}
    </>
  )
}

function Thumbnail({ image, onOpen }: { image: MessageImage; onOpen: () => void }) {
  const url = useAttachmentURL(image.attachmentId)
  const label = imageLabel(image)
  if (url.isError) {
    return <span className="msg-image msg-image-missing" role="img" aria-label={label} title={errorText(url.error)}>{label}: not available</span>
  }
  return (
    <button type="button" className="msg-image" aria-label={`Open ${label} full size`} title={label} onClick={onOpen} disabled={!url.data}>
      {url.data ? <img src={url.data} alt={label} /> : <span className="msg-image-loading" aria-hidden />}
    </button>
  )
}

/** Full size in the top layer: Escape, the close button or a click beside the image closes it. */
function ImageDialog({ image, onClose }: { image: MessageImage; onClose: () => void }) {
  const ref = useRef<HTMLDialogElement>(null)
  const url = useAttachmentURL(image.attachmentId)
  const label = imageLabel(image)
  useEffect(() => {
    const d = ref.current
    if (!d) return
    // showModal traps focus and makes the rest inert; a browser without it still shows the dialog.
    if (typeof d.showModal === 'function') d.showModal()
    else d.setAttribute('open', '')
  }, [])
  return (
    <dialog ref={ref} className="image-dialog" aria-label={label} onClose={onClose}
      onClick={(e) => { if (e.target === e.currentTarget) onClose() }}>
      <div className="image-dialog-head">
        <span className="image-dialog-title">{label}</span>
        {image.width > 0 && image.height > 0 && <span className="muted small">{image.width}×{image.height}</span>}
        <span className="grow" />
        <button type="button" className="icon-btn" aria-label="Close" autoFocus onClick={onClose}><Icon name="x" size={16} /></button>
      </div>
      {url.data && <img className="image-dialog-img" src={url.data} alt={label} />}
    </dialog>
  )
}
