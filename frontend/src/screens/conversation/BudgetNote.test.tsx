// @vitest-environment jsdom
// A run refused for a budget: the note says so and leads to Your usage
// rather than offer a regenerate the server would refuse again.
import { fireEvent, render, screen } from '@testing-library/react'
import { describe, expect, it, vi } from 'vitest'
import type { NoteItem } from '../../timeline/model'
import { Note } from './Items'

const note = (code: string): NoteItem => ({
  key: 'r1:err', kind: 'note', tone: 'error', runId: 'r1', title: 'The run failed', code, ending: true,
  text: 'The monthly budget for each member ($5.00) is used up; it resets on 1 Jan 00:00 UTC.',
})

describe('a run ended by a budget', () => {
  it('names the budget, links to Your usage and offers no regenerate', () => {
    const onRegenerate = vi.fn()
    render(<Note item={note('budget_exceeded')} actions={{ onRegenerate }} />)
    const alert = screen.getByRole('alert')
    expect(alert).toHaveTextContent('A budget is used up')
    expect(alert).toHaveTextContent(/monthly budget for each member/)
    const link = screen.getByRole('link', { name: 'Your usage' })
    expect(link).toHaveAttribute('href', '/usage/me')
    expect(screen.queryByRole('button', { name: 'Regenerate the answer' })).toBeNull()
    fireEvent.click(link)
    expect(window.location.pathname).toBe('/usage/me')
  })

  it('leaves other failures as they were', () => {
    render(<Note item={note('upstream')} actions={{ onRegenerate: vi.fn() }} />)
    expect(screen.getByRole('alert')).toHaveTextContent('The run failed')
    expect(screen.queryByRole('link', { name: 'Your usage' })).toBeNull()
    expect(screen.getByRole('button', { name: 'Regenerate the answer' })).toBeInTheDocument()
  })
})
