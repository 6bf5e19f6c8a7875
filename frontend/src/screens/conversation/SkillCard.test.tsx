// @vitest-environment jsdom
// A read_skill call in the timeline: the skill's model name and its
// description in the card's head, and the document it read folded below,
// without its frontmatter — stored (display.kind skill) or live alike.
import { screen, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { describe, expect, it } from 'vitest'
import { renderWithData } from '../../test/render'
import { doc } from '../../test/skills'
import type { ToolItem } from '../../timeline/model'
import { skillBody } from './SkillResult'
import { ToolCard } from './ToolCard'

const read: ToolItem = {
  key: 'r1:c:call_1', kind: 'tool', callId: 'call_1', name: 'read_skill', arguments: '{"name":"acme/tools:release"}',
  output: doc('release', 'How we cut a release', '# Release\n\n1. Tag **it**\n'), isError: false,
  display: { title: 'acme/tools:release', summary: 'How we cut a release', extra: { skill_id: 'k1' } },
}

describe('the read_skill card', () => {
  it('names the skill and its description; the document opens and closes', async () => {
    const { container } = renderWithData(<ToolCard item={read} />)
    const card = container.querySelector('.tool-card')!
    expect(card).toHaveAttribute('data-skill', 'acme/tools:release')
    const head = screen.getByRole('button', { expanded: false, name: /acme\/tools:release/ })
    expect(head).toHaveTextContent('acme/tools:releaseread_skillHow we cut a releaseDone')
    expect(screen.queryByRole('document')).not.toBeInTheDocument()
    await userEvent.click(screen.getByRole('button', { name: 'Show the document' }))
    const shown = screen.getByRole('document', { name: 'SKILL.md of acme/tools:release' })
    expect(within(shown).getByRole('heading', { name: 'Release' })).toBeInTheDocument()
    expect(within(shown).getByText('it').tagName).toBe('STRONG')
    expect(shown).not.toHaveTextContent('description:')
    await userEvent.click(screen.getByRole('button', { name: 'Hide the document' }))
    expect(screen.queryByRole('document')).not.toBeInTheDocument()
    // Expanded, the card shows the call, not the document a second time as raw text.
    await userEvent.click(head)
    expect(screen.getByText('Arguments')).toBeInTheDocument()
    expect(screen.queryByText('Result')).not.toBeInTheDocument()
  })

  it('a refused read is an ordinary error card', () => {
    renderWithData(<ToolCard item={{ ...read, output: 'Error: there is no skill named "x".', isError: true, display: undefined }} />)
    expect(screen.queryByRole('button', { name: 'Show the document' })).not.toBeInTheDocument()
    expect(screen.getByText('Error')).toHaveClass('pill-error')
  })

  it('skillBody drops the frontmatter only', () => {
    expect(skillBody('---\nname: a\ndescription: b\n---\n# Body')).toBe('# Body')
    expect(skillBody('# No frontmatter')).toBe('# No frontmatter')
  })
})
