import { memo, useEffect, useRef, useState, type ComponentProps } from 'react'
import type { Element, ElementContent, Root } from 'hast'
import ReactMarkdown, { type Components, type ExtraProps, type Options } from 'react-markdown'
import rehypeHighlight from 'rehype-highlight'
import remarkGfm from 'remark-gfm'
import { announce } from '../lib/announce'
import '../styles/markdown.css'
import type { MathPlugins } from './markdownMath'

/** The code a block shows, as written: the highlighter's spans add no text, the renderer one trailing newline. */
export function codeText(pre: HTMLElement): string {
  const code = pre.querySelector('code') ?? pre
  return (code.textContent ?? '').replace(/\n$/, '')
}

/** The fence's language (```go → "go"), from the class the renderer gives its code; "" when unlabelled. */
export function fenceLanguage(pre: Element | undefined): string {
  const code = pre?.children.find((c): c is Element => c.type === 'element' && c.tagName === 'code')
  const classes = code?.properties.className
  const lang = Array.isArray(classes) ? classes.map(String).find((c) => c.startsWith('language-')) : undefined
  return lang ? lang.slice('language-'.length) : ''
}

/**
 * A fenced block with a "Copy code" button (shown on hover and on keyboard
 * focus) and, when the fence names one, a header with its language. The
 * block scrolls sideways on its own, so a long line never widens the page;
 * it is focusable so the keyboard can scroll it.
 */
function CodeBlock({ node, children, ...props }: ComponentProps<'pre'> & ExtraProps) {
  const pre = useRef<HTMLPreElement>(null)
  const [copied, setCopied] = useState(false)
  useEffect(() => {
    if (!copied) return
    const t = setTimeout(() => setCopied(false), 2000)
    return () => clearTimeout(t)
  }, [copied])

  async function copy() {
    if (!pre.current || !navigator.clipboard) return
    await navigator.clipboard.writeText(codeText(pre.current))
    setCopied(true)
    announce('Code copied')
  }

  const lang = fenceLanguage(node)
  const button = (
    <button type="button" className="copy-code" onClick={() => void copy()}>
      {copied ? 'Copied' : 'Copy code'}
    </button>
  )
  return (
    <div className={lang ? 'code-block has-head' : 'code-block'}>
      {lang && (
        <div className="code-head">
          <span className="code-lang">{lang}</span>
          {button}
        </div>
      )}
      <pre ref={pre} tabIndex={0} {...props}>{children}</pre>
      {!lang && button}
    </div>
  )
}

/** The text an element shows, leaving out nested lists (a task item's own words, not its sub-items'). */
function ownText(node: ElementContent): string {
  if (node.type === 'text') return node.value
  if (node.type !== 'element' || node.tagName === 'ul' || node.tagName === 'ol') return ''
  return node.children.map(ownText).join('')
}

/**
 * Names each task-list checkbox after its item ("Ship it"), so a screen
 * reader says what is done rather than "checkbox"; remark-gfm already
 * makes them disabled (a message is not a form).
 */
function rehypeTaskLabels() {
  return (tree: Root) => {
    const walk = (node: Root | Element) => {
      for (const child of node.children) {
        if (child.type !== 'element') continue
        const classes = child.properties.className
        if (child.tagName === 'li' && Array.isArray(classes) && classes.includes('task-list-item')) {
          // A tight item holds the box itself; a loose one, in its first paragraph.
          const holder = child.children.find((c): c is Element => c.type === 'element' && c.tagName === 'p') ?? child
          const box = holder.children.find((c): c is Element => c.type === 'element' && c.tagName === 'input')
          if (box) box.properties.ariaLabel = ownText(child).trim()
        }
        walk(child)
      }
    }
    walk(tree)
  }
}

const components: Components = {
  a: ({ node: _node, ...props }) => <a {...props} target="_blank" rel="noopener noreferrer" />,
  pre: CodeBlock,
  // A wide table scrolls inside its own box, never the page; focusable so
  // the keyboard can scroll it too.
  table: ({ node: _node, ...props }) => (
    <div className="table-wrap" tabIndex={0}>
      <table {...props} />
    </div>
  ),
}

const remarkPlugins: NonNullable<Options['remarkPlugins']> = [remarkGfm]
const rehypePlugins: NonNullable<Options['rehypePlugins']> = [rehypeTaskLabels, [rehypeHighlight, { detect: false, ignoreMissing: true }]]

function Body({ text, math }: { text: string; math?: MathPlugins }) {
  return (
    <div className="markdown">
      <ReactMarkdown
        remarkPlugins={math ? [...remarkPlugins, ...math.remark] : remarkPlugins}
        // KaTeX first: a ```math fence becomes a formula before the highlighter sees a code block.
        rehypePlugins={math ? [...math.rehype, ...rehypePlugins] : rehypePlugins}
        components={components}
      >
        {text}
      </ReactMarkdown>
    </div>
  )
}

let mathLoad: Promise<MathPlugins> | undefined
let mathLoaded: MathPlugins | undefined
/** KaTeX and its plugins, fetched once, the first time a message may hold math. */
function loadMath(): Promise<MathPlugins> {
  mathLoad ??= import('./markdownMath').then((m) => (mathLoaded = m.mathPlugins))
  return mathLoad
}

/**
 * The math plugins once a message wants them: at once when KaTeX is already
 * here, else after its chunk arrives (the text shows as written meanwhile).
 */
function useMath(wanted: boolean): MathPlugins | undefined {
  const [math, setMath] = useState(mathLoaded)
  useEffect(() => {
    if (!wanted || math) return
    let live = true
    void loadMath().then((m) => {
      if (live) setMath(m)
    })
    return () => {
      live = false
    }
  }, [wanted, math])
  return wanted ? math : undefined
}

/** Whether a message may hold TeX: a dollar sign or a ```math fence. */
export const mayHaveMath = (text: string) => text.includes('$') || text.includes('```math')

/**
 * Assistant text as Markdown (GitHub's flavour: tables, task lists); code is
 * highlighted with CSS classes (no inline styles, CSP-safe) and labelled
 * with its language; `$…$` and `$$…$$` are typeset by KaTeX, loaded only
 * when a message has a dollar sign.
 */
export const Markdown = memo(function Markdown({ text }: { text: string }) {
  return <Body text={text} math={useMath(mayHaveMath(text))} />
})
