// @vitest-environment jsdom
// A message's Markdown as a reader sees it: code fences labelled with their
// language, TeX typeset by KaTeX (loaded on demand) while prices stay text,
// bad TeX shown as written, GitHub's tables and task lists.
import { act, render, waitFor, within } from '@testing-library/react'
import { describe, expect, it } from 'vitest'
import { Markdown, mayHaveMath } from './Markdown'

const view = (text: string) => render(<Markdown text={text} />).container.querySelector('.markdown') as HTMLElement

/** Renders a message that may hold math (KaTeX is a chunk loaded on first use). */
async function viewMath(text: string) {
  let container!: HTMLElement
  await act(async () => {
    container = render(<Markdown text={text} />).container
  })
  return container.querySelector('.markdown') as HTMLElement
}

/** Waits for KaTeX to typeset something in md. */
const typeset = (md: HTMLElement) => waitFor(() => expect(md.querySelector('.katex')).not.toBeNull(), { timeout: 4_000 })

describe('code fences', () => {
  it('a labelled fence shows its language beside Copy code, and is still highlighted', () => {
    const md = view('```go\nfunc main() {}\n```')
    const head = md.querySelector('.code-head') as HTMLElement
    expect(within(head).getByText('go')).toHaveClass('code-lang')
    expect(within(head).getByRole('button', { name: 'Copy code' })).toBeInTheDocument()
    expect(md.querySelector('pre code .hljs-keyword')).toHaveTextContent('func')
  })

  it('an unlabelled fence has no label, only Copy code', () => {
    const md = view('```\nplain words\n```')
    expect(md.querySelector('.code-head, .code-lang')).toBeNull()
    expect(within(md).getByRole('button', { name: 'Copy code' })).toBeInTheDocument()
    expect(md.querySelector('pre')).toHaveTextContent('plain words')
  })
})

describe('math', () => {
  it('inline $…$ and display $$…$$ become KaTeX', async () => {
    const md = await viewMath('Euler: $e^{i\\pi} + 1 = 0$.\n\n$$\n\\int_0^1 x^2\\,dx = \\frac{1}{3}\n$$')
    await typeset(md)
    const display = md.querySelector('.katex-display') as HTMLElement
    expect(display.querySelector('.katex math annotation')).toHaveTextContent('\\int_0^1 x^2\\,dx = \\frac{1}{3}')
    // The keyboard can scroll a wide formula.
    expect(display).toHaveAttribute('tabindex', '0')
    const inline = md.querySelector('p .katex') as HTMLElement
    expect(inline.querySelector('annotation')).toHaveTextContent('e^{i\\pi} + 1 = 0')
    expect(md.querySelectorAll('.katex')).toHaveLength(2)
    expect(md.textContent).not.toContain('$')
  })

  it('a ```math fence is a formula, not a code block', async () => {
    const md = await viewMath('```math\na^2 + b^2 = c^2\n```')
    await typeset(md)
    expect(md.querySelector('.katex-display')).not.toBeNull()
    expect(md.querySelector('pre, .code-lang')).toBeNull()
  })

  it('prices stay text beside real math', async () => {
    const md = await viewMath('It costs $5 and $10, or $5-$10 a month; $x^2$ is math.')
    await typeset(md)
    expect(md.querySelectorAll('.katex')).toHaveLength(1)
    expect(md.querySelector('p')?.textContent).toMatch(/^It costs \$5 and \$10, or \$5-\$10 a month; (?!\$)/)
  })

  it('only prices: no formula at all', async () => {
    const md = await viewMath('The plan is $20/month, the add-on $4.')
    // Once KaTeX has loaded (another message's formula shows it has), the prices are still words.
    await typeset(await viewMath('$y$'))
    expect(md.querySelector('.katex')).toBeNull()
    expect(md).toHaveTextContent('The plan is $20/month, the add-on $4.')
  })

  it('bad TeX shows as written in the error colour, and the rest still renders', async () => {
    const md = await viewMath('Broken: $\\frac{1}{$ and fine: $\\alpha$ and $\\nosuchcommand{x}$')
    await typeset(md)
    // Unparseable: the whole source, titled with KaTeX's reason.
    const error = md.querySelector('.katex-error') as HTMLElement
    expect(error).toHaveTextContent('\\frac{1}{')
    expect(error.getAttribute('style')).toMatch(/^color: ?var\(--error\);?$/)
    // An unknown command: typeset, with the command as written in the error colour.
    const unknown = [...md.querySelectorAll<HTMLElement>('.katex-html [style]')].find((e) => e.textContent === '\\nosuchcommand')
    expect(unknown?.getAttribute('style')).toMatch(/^color: ?var\(--error\);?$/)
    expect(md.querySelectorAll('.katex annotation')[0]).toHaveTextContent('\\alpha')
  })

  it('KaTeX is loaded only for a message that may hold math', () => {
    expect(mayHaveMath('no dollars here')).toBe(false)
    expect(mayHaveMath('costs $5')).toBe(true)
    expect(mayHaveMath('```math\nx\n```')).toBe(true)
  })
})

describe('GitHub tables and task lists', () => {
  it('a table sits in its own scrolling box, with a header row', () => {
    const md = view('| Name | Qty |\n| --- | ---: |\n| apples | 3 |\n| pears | 5 |')
    const wrap = md.querySelector('.table-wrap') as HTMLElement
    expect(wrap).toHaveAttribute('tabindex', '0')
    const table = within(wrap).getByRole('table')
    expect(within(table).getAllByRole('columnheader').map((h) => h.textContent)).toEqual(['Name', 'Qty'])
    expect(within(table).getAllByRole('row')).toHaveLength(3)
  })

  it('a task list has disabled checkboxes named after their items', () => {
    const md = view('- [x] Sketch the layout\n- [ ] Ship it\n  - [ ] Write the notes')
    const boxes = within(md).getAllByRole('checkbox')
    expect(boxes.map((b) => [b.getAttribute('aria-label'), (b as HTMLInputElement).checked, (b as HTMLInputElement).disabled])).toEqual([
      ['Sketch the layout', true, true],
      ['Ship it', false, true],
      ['Write the notes', false, true],
    ])
    expect(md.querySelector('ul')).toHaveClass('contains-task-list')
  })
})
