// @vitest-environment jsdom
// The Go tools of the program embedding the workbench, in the agent form:
// listed with their descriptions, checked when the agent has them, and a
// check adds the name to the agent's tools.
import { screen } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { api, type Agent } from '../../lib/api'
import { keys } from '../../lib/queries'
import { renderWithData } from '../../test/render'
import { answer, member } from '../../test/mcp'
import { AgentForm } from './AgentForm'
import { newAgent } from './agentShape'

const agent = (over: Partial<Agent> = {}): Agent => ({ ...newAgent(), id: 'a1', name: 'Clerk', model: 'desk', scope: 'private', owner_id: member.id, created_at: '', updated_at: '', ...over })

const catalog = [
  { name: 'save_note', description: 'Save a note in the notebook.', parameters: {}, origin: 'native' },
  { name: 'lookup_order', description: 'Find an order by its number.', parameters: {}, origin: 'native' },
]

function show(a: Agent, tools = catalog) {
  return renderWithData(<AgentForm agent={a} onDone={() => {}} />, [
    [keys.me, member], [keys.selectableTools, tools], [keys.mcpServers, []], [keys.skills, []], [keys.providers, []], [keys.agents, [a]], [['guardrails'], []],
    [keys.agentTools(a.id), []],
  ])
}

const sentTools = () => ((vi.mocked(api.PUT).mock.calls[0] as unknown as [string, { body: Agent }])[1]).body.tools

beforeEach(() => {
  vi.spyOn(api, 'GET').mockImplementation((() => answer(200, [])) as never)
  vi.spyOn(api, 'PUT').mockImplementation((() => answer(200, agent())) as never)
})

afterEach(() => {
  vi.restoreAllMocks()
})

describe("the program's tools in the agent form", () => {
  it('lists them, checked when the agent has them; a check gives one to the agent', async () => {
    show(agent({ tools: ['todo_write', 'lookup_order', 'calc__echo'] }))
    expect(screen.getByRole('group', { name: 'Program tools' })).toBeInTheDocument()
    const save = screen.getByRole('checkbox', { name: /save_note/ })
    expect(save).not.toBeChecked()
    expect(screen.getByRole('checkbox', { name: /lookup_order/ })).toBeChecked()
    expect(screen.getByText('Save a note in the notebook.')).toBeInTheDocument()

    await userEvent.click(save)
    expect(save).toBeChecked()
    await userEvent.click(screen.getByRole('checkbox', { name: /lookup_order/ }))
    await userEvent.click(screen.getAllByRole('button', { name: 'Save' })[0])
    expect(sentTools()).toEqual(['todo_write', 'save_note', 'calc__echo'])
  })

  it('shows no such group when the program offers none', () => {
    show(agent(), [])
    expect(screen.queryByRole('group', { name: 'Program tools' })).not.toBeInTheDocument()
  })
})
