import { memo, useEffect, useRef, useState, type ComponentProps } from 'react'
import ReactMarkdown, { type Components, type ExtraProps } from 'react-markdown'
import rehypeHighlight from 'rehype-highlight'
import remarkGfm from 'remark-gfm'
import { announce } from '../lib/announce'

/** The code a block shows, as written: the highlighter's spans add no text, the renderer one trailing newline. */
export function codeText(pre: HTMLElement): string {
  const code = pre.querySelector('code') ?? pre
  return (code.textContent ?? '').replace(/\n$/, '')
}

/**
 * A fenced block with a "Copy code" button in its corner (shown on hover
 * and on keyboard focus). The block scrolls sideways on its own, so a long
 * line never widens the page; it is focusable so the keyboard can scroll it.
 */
function CodeBlock({ node: _node, children, ...props }: ComponentProps<'pre'> & ExtraProps) {
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

  return (
    <div className="code-block">
      <pre ref={pre} tabIndex={0} {...props}>{children}</pre>
      <button type="button" className="copy-code" onClick={() => void copy()}>
        {copied ? 'Copied' : 'Copy code'}
      </button>
    </div>
  )
}

const components: Components = {
  a: ({ node: _node, ...props }) => <a {...props} target="_blank" rel="noopener noreferrer" />,
  pre: CodeBlock,
}

/** Assistant text as Markdown; code is highlighted with CSS classes (no inline styles, CSP-safe). */
export const Markdown = memo(function Markdown({ text }: { text: string }) {
  return (
    <div className="markdown">
      <ReactMarkdown remarkPlugins={[remarkGfm]} rehypePlugins={[[rehypeHighlight, { detect: false, ignoreMissing: true }]]} components={components}>
        {text}
      </ReactMarkdown>
    </div>
  )
})
