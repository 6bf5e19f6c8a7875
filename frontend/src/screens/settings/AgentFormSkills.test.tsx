// @vitest-environment jsdom
// The skills an agent reads, in its form: all it may use (null), none
// ([]), or a pick by the names the model knows them by — saved as that
// tri-state; a picked id no skill has any more stays listed and checked.
import { screen, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { api, type Agent } from '../../lib/api'
import { keys } from '../../lib/queries'
import { answer, member } from '../../test/mcp'
import { renderWithData } from '../../test/render'
import { imported, skill } from '../../test/skills'
import { AgentForm } from './AgentForm'
import { newAgent } from './agentShape'

const agent = (over: Partial<Agent> = {}): Agent => ({ ...newAgent(), id: 'a1', name: 'Planner', model: 'todo', scope: 'private', owner_id: member.id, created_at: '', updated_at: '', ...over })
// Someone else's private skill (an admin lists it) is no agent of ours' to read; a shared one is.
const skills = [skill(), imported(), skill({ id: 'k3', name: 'theirs', model_name: 'theirs', owner_id: 'someone' }), skill({ id: 'k4', name: 'shared', model_name: 'shared', scope: 'global', owner_id: 'someone' })]

function show(a: Agent) {
  return renderWithData(<AgentForm agent={a} onDone={() => {}} />, [
    [keys.me, member], [keys.selectableTools, []], [keys.mcpServers, []], [keys.skills, skills], [keys.providers, []], [keys.agents, [a]], [['guardrails'], []],
  ])
}
const sent = () => ((vi.mocked(api.PUT).mock.calls.at(-1) as unknown as [string, { body: Agent }])[1]).body.skills
const save = () => userEvent.click(screen.getAllByRole('button', { name: 'Save' })[0])
const modes = () => screen.getByRole('radiogroup', { name: 'Skills this agent reads' })

beforeEach(() => {
  vi.spyOn(api, 'GET').mockImplementation((() => answer(200, [])) as never)
  vi.spyOn(api, 'PUT').mockImplementation((() => answer(200, agent())) as never)
})
afterEach(() => {
  vi.restoreAllMocks()
})

describe('the skills of an agent', () => {
  it('null reads as All skills; None saves []', async () => {
    show(agent({ skills: null }))
    expect(within(modes()).getByRole('radio', { name: 'All skills' })).toBeChecked()
    expect(screen.queryByRole('group', { name: 'Skills to read' })).not.toBeInTheDocument()
    await save()
    expect(sent()).toBeNull()
    await userEvent.click(within(modes()).getByRole('radio', { name: 'None' }))
    await save()
    expect(sent()).toEqual([])
  })

  it('Specific skills lists them by model name and saves the ticked ids', async () => {
    show(agent({ skills: null }))
    await userEvent.click(within(modes()).getByRole('radio', { name: 'Specific skills' }))
    const pick = screen.getByRole('group', { name: 'Skills to read' })
    expect(within(pick).getAllByRole('checkbox').map((c) => c.closest('div')?.querySelector('code')?.textContent)).toEqual(['release', 'acme/tools:house-style', 'shared'])
    expect(pick).toHaveTextContent('Nothing ticked: the agent reads no skills.')
    await userEvent.click(within(pick).getByRole('checkbox', { name: 'acme/tools:house-style' }))
    expect(within(pick).getByRole('checkbox', { name: 'acme/tools:house-style' })).toHaveAccessibleDescription('Our prose rules')
    await save()
    expect(sent()).toEqual(['k2'])
    // Back to All: null again.
    await userEvent.click(within(modes()).getByRole('radio', { name: 'All skills' }))
    await save()
    expect(sent()).toBeNull()
  })

  it('a shared agent is offered shared skills only', async () => {
    show(agent({ skills: [], scope: 'global' }))
    await userEvent.click(within(modes()).getByRole('radio', { name: 'Specific skills' }))
    expect(within(screen.getByRole('group', { name: 'Skills to read' })).getAllByRole('checkbox').map((c) => c.closest('div')?.querySelector('code')?.textContent)).toEqual(['shared'])
  })

  it('a stored pick opens as Specific, and an id no skill has stays checked until unticked', async () => {
    show(agent({ skills: ['k1', 'gone'] }))
    expect(within(modes()).getByRole('radio', { name: 'Specific skills' })).toBeChecked()
    const pick = screen.getByRole('group', { name: 'Skills to read' })
    expect(within(pick).getByRole('checkbox', { name: 'release' })).toBeChecked()
    const gone = within(pick).getByRole('checkbox', { name: /gone/ })
    expect(gone).toBeChecked()
    await save()
    expect(sent()).toEqual(['k1', 'gone'])
    await userEvent.click(gone)
    await save()
    expect(sent()).toEqual(['k1'])
  })
})
