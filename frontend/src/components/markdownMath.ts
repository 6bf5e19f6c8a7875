// TeX in messages: `$…$` inline and `$$…$$` display, typeset by KaTeX.
// Markdown.tsx imports this module only when a message has a `$` (or a
// ```math fence), so KaTeX, its CSS and its fonts stay out of the main
// bundle. The fonts are files Vite emits next to the CSS (never data: URIs,
// see vite.config.ts): the app's CSP allows fonts from its own origin only.
import 'katex/dist/katex.min.css'
import type { Element, Root as HastRoot } from 'hast'
import type { Root as MdastRoot, RootContent } from 'mdast'
import type { Options } from 'react-markdown'
import rehypeKatex from 'rehype-katex'
import remarkMath from 'remark-math'

type Parent = { children: RootContent[] }

/**
 * Keeps prices as text. remark-math pairs any two single dollars, so
 * "it costs $5 and $10" would typeset "5 and ". Pandoc's rule tells money
 * from math: the opening `$` has a non-space right after it, the closing
 * `$` a non-space right before it and no digit right after it. A single-
 * dollar span that breaks the rule goes back to the text it was written as.
 */
export function remarkMathPrices() {
  return (tree: MdastRoot, file: { value?: unknown }) => {
    const source = String(file.value ?? '')
    const walk = (parent: Parent) => {
      parent.children = parent.children.map((node) => {
        if ('children' in node) walk(node as Parent)
        if (node.type !== 'inlineMath') return node
        const start = node.position?.start.offset
        const end = node.position?.end.offset
        if (start === undefined || end === undefined) return node
        const raw = source.slice(start, end)
        if (raw.startsWith('$$') || !isMoney(raw, source.charAt(end))) return node
        return { type: 'text', value: raw, position: node.position }
      })
    }
    walk(tree)
  }
}

function isMoney(raw: string, after: string): boolean {
  const inner = raw.slice(1, -1)
  return /^\s/.test(inner) || /\s$/.test(inner) || /[0-9]/.test(after)
}

/** Lets the keyboard scroll a display formula wider than the message, as it can a code block. */
function rehypeFocusableDisplay() {
  return (tree: HastRoot) => {
    const walk = (node: HastRoot | Element) => {
      for (const child of node.children) {
        if (child.type !== 'element') continue
        const classes = child.properties.className
        if (Array.isArray(classes) && classes.includes('katex-display')) child.properties.tabIndex = 0
        else walk(child)
      }
    }
    walk(tree)
  }
}

/** The plugins that add math to the renderer's own (remark first, rehype before highlighting). */
export interface MathPlugins {
  remark: NonNullable<Options['remarkPlugins']>
  rehype: NonNullable<Options['rehypePlugins']>
}

/**
 * strict: false keeps KaTeX quiet about a model's loose TeX (no console
 * warnings); throwOnError: false shows bad TeX as its source in the error
 * colour (the theme's, through its CSS variable; the CSP allows style attributes). Macros and \href stay off
 * (trust: false, the default): a message cannot make links or run code.
 */
export const mathPlugins: MathPlugins = {
  remark: [[remarkMath, { singleDollarTextMath: true }], remarkMathPrices],
  rehype: [[rehypeKatex, { throwOnError: false, strict: false, errorColor: 'var(--error)' }], rehypeFocusableDisplay],
}
