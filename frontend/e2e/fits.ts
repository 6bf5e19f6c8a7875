// Whether a screen fits a phone: measured in the page as it stands, inside
// every scrolling pane and not only the document. Used by phone.spec.ts;
// any spec can call expectFits after it draws a state.
import type { Page } from '@playwright/test'
import { expect } from './fixtures'

/** What a person can press, type into or tab to. */
const INTERACTIVE = 'button, a[href], input, select, textarea, summary, [role=tab], [role=button], [tabindex]:not([tabindex="-1"])'

/**
 * Panes meant to scroll sideways, so their width is not a fault (what they
 * hold must still be reachable by scrolling them):
 * - `pre`: code blocks, a trigger's curl example, a tool's JSON — lines are
 *   kept as written, and breaking them would change what is copied;
 * - a table in a message's Markdown: an answer's columns keep their width;
 * - the terminal: xterm draws a fixed grid of columns.
 */
const MAY_SCROLL_SIDEWAYS = ['pre', '.markdown .table-wrap', '.terminal-screen', '.xterm', '.xterm *']

/**
 * Names that must be readable: at least about four letters of them, or
 * the whole name when shorter — never cut to one letter and an ellipsis.
 */
const NAMES = [
  '[data-mcp-server] .row-main code', // an MCP server's endpoint
  '[data-mcp-server] .row-main b', // an MCP server's name
  '.task-row .task-open', // a background task's name in the strip
  '.tool-card .tool-title', // a tool card's title (a task's name on spawn_task)
  '.row .row-main b', // a settings row's name
  '.conv-title', // the conversation's title
  '.trigger-name', '.row-open', // a trigger's and a workflow's name
]

/** Popups drawn over the page while open: the Export menu, the composer's commands. */
const POPUPS = '.menu, .slash-popup, [role=menu], [role=listbox]'

interface Probe { interactive: string; mayScroll: string[]; names: string[]; popups: string }

/**
 * Fails the test (softly: it goes on to its other screens), listing every
 * offender, unless the page as drawn fits its viewport: the document does
 * not scroll sideways; no pane scrolls sideways unless it is meant to;
 * every visible control lies wholly inside the viewport and inside every
 * pane that clips it, horizontally (vertical scrolling is fine, but a
 * sticky bar's controls show whole); no two controls overlap; no word is
 * broken into a column narrower than ~4 letters; no control covers text;
 * and names (NAMES) show at least ~4 letters or whole. Only the top layer
 * is measured: an open modal dialog, the open drawer, or the inspector
 * laid over the page.
 */
export async function expectFits(page: Page, what: string) {
  const offenders = await fitOffenders(page)
  // Soft: a test goes on to its other screens, and reports every screen that does not fit at once.
  // FITS_SHOTS=<dir> keeps a picture of every state measured, to look at what the numbers say.
  if (process.env.FITS_SHOTS) await page.screenshot({ path: `${process.env.FITS_SHOTS}/${what.replace(/[^a-z0-9]+/gi, '-')}.png`, fullPage: true })
  expect.soft(offenders, `${what}: does not fit ${page.viewportSize()?.width} px:\n  ${offenders.join('\n  ')}\n`).toEqual([])
}

/** What expectFits finds wrong with the page as drawn, one line each. */
export function fitOffenders(page: Page): Promise<string[]> {
  return page.evaluate(probeFit, { interactive: INTERACTIVE, mayScroll: MAY_SCROLL_SIDEWAYS, names: NAMES, popups: POPUPS })
}

// Runs in the page: everything it uses is inside it.
function probeFit({ interactive, mayScroll, names, popups }: Probe): string[] {
  const out: string[] = []
  const root = document.documentElement
  const vw = root.clientWidth
  interface Box { left: number; right: number; top: number; bottom: number }
  const box = (r: DOMRect | Box): Box => ({ left: r.left, right: r.right, top: r.top, bottom: r.bottom })
  const meet = (a: Box, b: Box): Box => ({ left: Math.max(a.left, b.left), right: Math.min(a.right, b.right), top: Math.max(a.top, b.top), bottom: Math.min(a.bottom, b.bottom) })
  const w = (b: Box) => Math.max(0, b.right - b.left)
  const h = (b: Box) => Math.max(0, b.bottom - b.top)
  const px = (n: number) => Math.round(n)

  function describe(el: Element) {
    const cls = [...el.classList].slice(0, 2).map((c) => `.${c}`).join('')
    const label = el.getAttribute('aria-label') || el.getAttribute('title') || (el as HTMLElement).innerText || el.getAttribute('placeholder') || ''
    const text = label.replace(/\s+/g, ' ').trim().slice(0, 40)
    return `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''}${cls}${text ? ` "${text}"` : ''}`
  }
  const meant = (el: Element) => mayScroll.some((s) => el.matches(s))
  const scrollsSideways = (s: CSSStyleDeclaration) => s.overflowX === 'auto' || s.overflowX === 'scroll'
  const clips = (s: CSSStyleDeclaration) => s.overflowX !== 'visible'
  const seen = (el: Element) => {
    const r = el.getBoundingClientRect()
    return r.width > 1 && r.height > 1 && !el.closest('[inert]') && el.checkVisibility({ opacityProperty: true, visibilityProperty: true })
  }
  /** The panes that clip el (overflow other than visible), nearest first; a fixed box escapes them all, an absolute one those inside its containing block. */
  function clippers(el: Element): Element[] {
    const found: Element[] = []
    let pos = getComputedStyle(el).position
    let holder: Element | null = pos === 'absolute' ? (el as HTMLElement).offsetParent : null
    for (let a = el.parentElement; a && a !== document.body && a !== root && pos !== 'fixed'; a = a.parentElement) {
      const s = getComputedStyle(a)
      if (holder && a !== holder) continue
      if (holder === a) holder = null
      if (clips(s)) found.push(a)
      pos = s.position
      if (pos === 'absolute') holder = (a as HTMLElement).offsetParent
    }
    return found
  }
  /** The part of a pane its content shows: inside its borders and scrollbar. */
  function paneBox(pane: Element): Box {
    const r = pane.getBoundingClientRect()
    const left = r.left + pane.clientLeft
    const top = r.top + pane.clientTop
    return { left, right: left + pane.clientWidth, top, bottom: top + pane.clientHeight }
  }
  const screen: Box = { left: 0, right: vw, top: -1e6, bottom: 1e6 }
  /** What of a rect shows through every pane that clips el, and the screen's width. */
  const shown = (el: Element, r: Box) => clippers(el).reduce((b, p) => meet(b, paneBox(p)), meet(r, screen))

  // 1. The document does not scroll sideways.
  if (root.scrollWidth > vw) out.push(`the page scrolls sideways: ${root.scrollWidth} px wide in ${vw}`)

  // 2. No pane scrolls sideways unless it is meant to.
  for (const el of document.body.querySelectorAll('*')) {
    const s = getComputedStyle(el)
    if (!scrollsSideways(s) || meant(el) || !seen(el)) continue
    if (el.scrollWidth > el.clientWidth + 1) out.push(`${describe(el)} scrolls sideways: ${el.scrollWidth} px of content in ${el.clientWidth}`)
  }

  // What lies on top: an open modal dialog, the open drawer, or the inspector laid over the page; else the page.
  const modal = [...document.querySelectorAll('dialog[open]')].filter((d) => d.matches(':modal')).pop()
  const drawer = document.querySelector('.nav-open .sidebar')
  const overlay = [...document.querySelectorAll('.inspector')].find((i) => getComputedStyle(i).position === 'fixed')
  const layer = modal ?? drawer ?? overlay ?? document.body
  const controls = [...layer.querySelectorAll(interactive)].filter(seen)
  // A bar that stays put while the page scrolls under it (sticky or fixed), and a popup (a menu, the slash
  // commands) over the page, cover what lies beneath them by design: they are compared with what is inside them only.
  const over = (el: Element) => {
    for (let a: Element | null = el; a && a !== layer; a = a.parentElement) {
      if (a.matches(popups) || /^(sticky|fixed)$/.test(getComputedStyle(a).position)) return a
    }
    return layer
  }
  const apart = (a: Element, b: Element) => over(a) !== over(b)
  const sticky = (el: Element) => {
    for (let a: Element | null = el; a && a !== layer; a = a.parentElement) if (getComputedStyle(a).position === 'sticky') return true
    return false
  }

  // 3. Every control wholly inside the screen and every pane that clips it, sideways.
  const rects = new Map<Element, Box>()
  for (const el of controls) {
    const r = box(el.getBoundingClientRect())
    if (r.left < -1 || r.right > vw + 1) out.push(`${describe(el)} is off the screen: ${px(r.left)}…${px(r.right)} of 0…${vw}`)
    else {
      const pane = clippers(el).find((p) => !meant(p) && (r.left < paneBox(p).left - 1 || r.right > paneBox(p).right + 1))
      if (pane) out.push(`${describe(el)} is cut off by ${describe(pane)}: ${px(r.left)}…${px(r.right)} shown in ${px(paneBox(pane).left)}…${px(paneBox(pane).right)}`)
    }
    // A bar that sticks while the page scrolls is meant to be seen whole, up and down too.
    if (sticky(el)) {
      const pane = clippers(el).find((p) => !meant(p) && (r.top < paneBox(p).top - 1 || r.bottom > paneBox(p).bottom + 1))
      if (r.top < -1 || pane) out.push(`${describe(el)} sticks part hidden: ${px(r.top)}…${px(r.bottom)} shown in ${pane ? `${px(paneBox(pane).top)}…${px(paneBox(pane).bottom)}` : `0…${root.clientHeight}`}`)
    }
    rects.set(el, shown(el, r))
  }

  // 4. No two controls overlap (one inside the other is not an overlap).
  const overlap = (a: Box, b: Box) => { const m = meet(a, b); return w(m) > 2 && h(m) > 2 }
  for (let i = 0; i < controls.length; i++) {
    for (let j = i + 1; j < controls.length; j++) {
      const [a, b] = [controls[i], controls[j]]
      if (a.contains(b) || b.contains(a) || apart(a, b)) continue
      if (overlap(rects.get(a)!, rects.get(b)!)) out.push(`${describe(a)} overlaps ${describe(b)}`)
    }
  }

  // 5. No text squeezed into a column narrower than a few letters (a word broken letter by letter), and
  // 6. no control covers text outside it (a label, a heading, a row's endpoint).
  const walker = document.createTreeWalker(layer, NodeFilter.SHOW_TEXT)
  const range = document.createRange()
  const covered = new Set<string>()
  const pen = document.createElement('canvas').getContext('2d')!
  const natural = (el: Element, text: string) => {
    const s = getComputedStyle(el)
    pen.font = `${s.fontStyle} ${s.fontWeight} ${s.fontSize} ${s.fontFamily}`
    return pen.measureText(text).width
  }
  /** Whether a line of the text starts inside a word (no space, hyphen or slash before it). */
  const brokenWord = (t: Text) => {
    const chars = t.data
    const at = document.createRange()
    let top: number | undefined
    for (let i = 0; i < chars.length; i++) {
      if (/\s/.test(chars[i])) continue
      at.setStart(t, i)
      at.setEnd(t, i + 1)
      const r = at.getClientRects()[0]
      if (!r) continue
      if (top !== undefined && r.top > top + 1 && i > 0 && !/[\s\-/]/.test(chars[i - 1])) return true
      top = r.top
    }
    return false
  }
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const parent = n.parentElement
    const text = n.textContent?.trim()
    if (!parent || !text || parent.closest('option, script, style') || !seen(parent)) continue
    range.selectNodeContents(n)
    const drawn = [...range.getClientRects()].filter((r) => r.width > 0)
    const widest = Math.max(0, ...drawn.map((r) => r.width))
    // Wrapping between words is fine; a word broken across lines of less than ~4 letters is not.
    if (drawn.length > 1 && widest < 4 * parseFloat(getComputedStyle(parent).fontSize) - 1 && brokenWord(n as Text)) {
      out.push(`the text of ${describe(parent)} is squeezed to ${px(widest)} px a line, a word broken`)
    }
    if (parent.closest(interactive)) continue
    // Text is clipped by its own element too (an ellipsis), not only by the panes around it.
    const own = clips(getComputedStyle(parent)) ? paneBox(parent) : screen
    const lines = [...range.getClientRects()].map((r) => meet(shown(parent, box(r)), own)).filter((r) => w(r) > 2 && h(r) > 2)
    for (const c of controls) {
      if (c.contains(parent) || apart(c, parent) || covered.has(`${describe(c)}|${describe(parent)}`)) continue
      if (lines.some((l) => overlap(l, rects.get(c)!))) {
        covered.add(`${describe(c)}|${describe(parent)}`)
        out.push(`${describe(c)} covers the text of ${describe(parent)}`)
      }
    }
  }

  // 7. Names show ~4 letters or whole.
  for (const el of layer.querySelectorAll(names.join(', '))) {
    if (!seen(el)) continue
    const r = el.getBoundingClientRect()
    const s = getComputedStyle(el)
    const inline = s.display === 'inline'
    // A block box holds its text in scrollWidth, cut to clientWidth when it clips; an inline one is measured.
    const whole = inline ? natural(el, (el as HTMLElement).innerText) : Math.max(el.scrollWidth, r.width)
    const needed = Math.min(4 * parseFloat(s.fontSize), whole)
    const visible = Math.min(w(shown(el, box(r))), !inline && clips(s) ? el.clientWidth : Infinity)
    if (visible < needed - 1) out.push(`${describe(el)} shows ${px(visible)} px of its name (${px(whole)} px whole)`)
  }
  return out
}
