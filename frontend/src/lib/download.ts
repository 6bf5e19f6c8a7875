// Files that come from an authenticated GET (a project's tar): fetched with
// the bearer token, then handed to the browser as a blob download.
import { authFetch } from './api'

/** The file name a Content-Disposition header gives (RFC 6266: filename* wins over filename). */
export function fileNameOf(header: string | null): string | undefined {
  if (!header) return undefined
  const star = /filename\*\s*=\s*(?:UTF-8|utf-8)''([^;]+)/.exec(header)
  if (star) {
    try {
      return decodeURIComponent(star[1].trim())
    } catch {
      // a malformed encoding falls back to the plain name
    }
  }
  const plain = /filename\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;]+))/.exec(header)
  const name = plain ? (plain[1]?.replace(/\\(.)/g, '$1') ?? plain[2].trim()) : undefined
  // Only the last path segment: a name is never a path.
  return name?.split(/[\\/]/).pop() || undefined
}

/** Downloads an authenticated URL as a file; the error envelope becomes an ApiError. */
export async function downloadFile(url: string, fallbackName: string): Promise<{ name: string; bytes: number }> {
  const res = await authFetch(url)
  const blob = await res.blob()
  const name = fileNameOf(res.headers.get('Content-Disposition')) ?? fallbackName
  saveBlob(blob, name)
  return { name, bytes: blob.size }
}

/** Hands a blob made in the page (an export) to the browser as a file named name. */
export function saveBlob(blob: Blob, name: string) {
  const href = URL.createObjectURL(blob)
  const a = document.createElement('a')
  a.href = href
  a.download = name
  document.body.appendChild(a)
  a.click()
  a.remove()
  setTimeout(() => URL.revokeObjectURL(href), 60_000)
}
