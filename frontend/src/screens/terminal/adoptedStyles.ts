// xterm's DOM renderer writes its theme and cell sizes into <style> elements
// it creates. The server's Content-Security-Policy (style-src 'self', no
// 'unsafe-inline') refuses inline style elements, which would leave the
// terminal unstyled and log a violation per element. While xterm opens, the
// style elements it asks for are inert stand-ins and their text goes to
// constructed stylesheets adopted by the document — CSSOM, which the policy
// allows. Only the elements made during `open` are affected; xterm only
// sets their text and removes them, so an inert <template> stands in (a
// <style> of any type is still checked against the policy, empty or not).

export interface AdoptedStyles {
  /** Removes the adopted sheets (after the terminal is disposed). */
  dispose: () => void
}

export function withAdoptedStyles(doc: Document, open: () => void): AdoptedStyles {
  const sheets: CSSStyleSheet[] = []
  const create = doc.createElement
  const patched = function (this: Document, tag: string, options?: ElementCreationOptions) {
    if (tag.toLowerCase() !== 'style') return create.call(this, tag, options)
    const el = create.call(this, 'template')
    el.dataset.adoptedStyle = ''
    const sheet = new CSSStyleSheet()
    sheets.push(sheet)
    doc.adoptedStyleSheets = [...doc.adoptedStyleSheets, sheet]
    let text = ''
    Object.defineProperty(el, 'textContent', {
      configurable: true,
      get: () => text,
      set: (v: string | null) => {
        text = v ?? ''
        sheet.replaceSync(text)
      },
    })
    return el
  }
  Object.defineProperty(doc, 'createElement', { configurable: true, writable: true, value: patched })
  try {
    open()
  } finally {
    delete (doc as { createElement?: unknown }).createElement
    if (doc.createElement !== create) Object.defineProperty(doc, 'createElement', { configurable: true, writable: true, value: create })
  }
  return {
    dispose: () => {
      doc.adoptedStyleSheets = doc.adoptedStyleSheets.filter((s) => !sheets.includes(s))
    },
  }
}
