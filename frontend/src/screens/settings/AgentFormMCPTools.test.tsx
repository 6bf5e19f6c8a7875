// @vitest-environment jsdom
// Picking MCP tools in the agent form: the tools of the servers the agent
// may use, grouped by server with the hints each server claims; selected
// names no server offers right now stay listed and checked, so a save does
// not drop them; the server's refusal of a name shows next to it.
import { screen, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { api, type Agent, type MCPServer } from '../../lib/api'
import { keys } from '../../lib/queries'
import { renderWithData } from '../../test/render'
import { answer, mcpServer, member, refusal, wipeTool } from '../../test/mcp'
import { AgentForm } from './AgentForm'
import { newAgent } from './agentShape'

const agent = (over: Partial<Agent> = {}): Agent => ({ ...newAgent(), id: 'a1', name: 'Planner', model: 'todo', scope: 'private', owner_id: member.id, created_at: '', updated_at: '', ...over })

const servers: MCPServer[] = [
  mcpServer(),
  mcpServer({ id: 's2', name: 'files', status: 'disconnected', last_error: 'connection refused', tools: [] }),
  mcpServer({ id: 's3', name: 'shared', scope: 'global', owner_id: 'someone', tools: [{ ...wipeTool, name: 'shared__wipe' }] }),
  // Another user's private server (an admin would see it): no agent of ours may use it.
  mcpServer({ id: 's4', name: 'theirs', owner_id: 'someone' }),
]

function show(a: Agent) {
  return renderWithData(<AgentForm agent={a} onDone={() => {}} />, [
    [keys.me, member], [keys.selectableTools, []], [keys.mcpServers, servers], [keys.skills, []], [keys.providers, []], [keys.agents, [a]], [['guardrails'], []],
    [keys.agentTools(a.id), [
      { name: 'todo_write', origin: 'checklist', description: 'Keep a checklist of the work. It shows as a card.', parameters: {} },
      { name: 'spawn_task', origin: 'tasks', description: 'Start a background task.', parameters: {} },
      { name: 'calc__echo', origin: 'mcp', server: 'calc', description: 'Echo it back.', parameters: {} },
    ]],
  ])
}

const picker = () => screen.getByRole('group', { name: 'MCP tools' })
const server = (name: string) => within(picker()).getByRole('group', { name: `Tools of ${name}` })
const sentTools = () => ((vi.mocked(api.PUT).mock.calls[0] as unknown as [string, { body: Agent }])[1]).body.tools

beforeEach(() => {
  vi.spyOn(api, 'GET').mockImplementation((() => answer(200, servers)) as never)
  vi.spyOn(api, 'PUT').mockImplementation((() => answer(200, agent())) as never)
})

afterEach(() => {
  vi.restoreAllMocks()
})

describe('the MCP tools of an agent', () => {
  it('lists the tools of every server the agent may use, by server, with the hints each claims', () => {
    show(agent({ tools: ['todo_write', 'calc__echo'] }))
    expect(within(picker()).getAllByRole('group', { name: /^Tools of / }).map((g) => g.getAttribute('aria-label'))).toEqual(['Tools of calc', 'Tools of files', 'Tools of shared'])
    const calc = server('calc')
    expect(within(calc).getByRole('checkbox', { name: 'calc__echo' })).toBeChecked()
    expect(within(calc).getByRole('checkbox', { name: 'calc__add' })).not.toBeChecked()
    expect(within(calc).getByRole('checkbox', { name: 'calc__add' })).toHaveAccessibleDescription('Add numbers: Adds two numbers')
    // Destructive and idempotent mean something only for a tool that writes: not repeated for a read-only one.
    expect(within(calc).getAllByRole('group', { name: 'Hints the server claims (not verified)' })[0]).toHaveTextContent(/^claims read-only$/)
    expect(within(server('shared')).getByRole('group', { name: 'Hints the server claims (not verified)' })).toHaveTextContent(/^claims writesclaims destructive$/)
    expect(within(server('shared')).getByText('claims destructive')).toHaveClass('pill-hint')
    // The hints are the server's word, and the picker says so.
    expect(picker()).toHaveTextContent('shown, never verified')
    expect(within(server('files')).getByText('disconnected')).toHaveClass('pill')
    expect(server('files')).toHaveTextContent('Not connected: its tools are listed once it is.Last error: connection refused')
    // What the agent gets, every origin, read-only — no field to type tool names into.
    const gets = screen.getByRole('region', { name: 'What the agent gets' })
    expect([...gets.querySelectorAll('dt')].map((d) => d.textContent)).toEqual(['With every agent', 'Background tasks', 'MCP'])
    expect(gets).toHaveTextContent('todo_write Keep a checklist of the work.')
    expect(gets).not.toHaveTextContent('It shows as a card.')
    expect(screen.queryByLabelText('Built-in tools')).not.toBeInTheDocument()
  })

  it('keeps selected names nothing offers now, marked unavailable, and saves them with the new choice', async () => {
    show(agent({ tools: ['todo_write', 'files__read', 'calc__gone', 'nowhere__x'] }))
    const read = within(server('files')).getByRole('checkbox', { name: 'files__read' })
    expect(read).toBeChecked()
    expect(read).toHaveAccessibleDescription('the server is disconnected: connection refused')
    expect(within(server('calc')).getByRole('checkbox', { name: 'calc__gone' })).toHaveAccessibleDescription('the server no longer offers this tool')
    expect(within(server('nowhere')).getByRole('checkbox', { name: 'nowhere__x' })).toHaveAccessibleDescription('no MCP server of that name is available to this agent')
    expect(within(picker()).getAllByText('unavailable')).toHaveLength(3)

    await userEvent.click(within(server('calc')).getByRole('checkbox', { name: 'calc__add' }))
    await userEvent.click(within(server('nowhere')).getByRole('checkbox', { name: 'nowhere__x' }))
    await userEvent.click(screen.getAllByRole('button', { name: 'Save' })[0])
    expect(sentTools()).toEqual(['todo_write', 'files__read', 'calc__gone', 'calc__add'])
  })

  it('a global agent is offered only global servers', () => {
    show(agent({ scope: 'global', owner_id: 'someone' }))
    expect(within(picker()).getAllByRole('group', { name: /^Tools of / }).map((g) => g.getAttribute('aria-label'))).toEqual(['Tools of shared'])
  })

  it('a name the server refuses shows its reason next to it', async () => {
    vi.mocked(api.PUT).mockImplementation((() => refusal(400, 'validation', 'invalid input', {
      'tools[1]': 'the MCP server calc offers no tool "calc__gone"', 'tools[2]': '"bogus" is not a built-in tool',
    })) as never)
    show(agent({ tools: ['calc__echo', 'calc__gone', 'bogus'] }))
    await userEvent.click(screen.getAllByRole('button', { name: 'Save' })[0])
    const gone = within(server('calc')).getByRole('checkbox', { name: 'calc__gone' }).closest('.mcp-tool-choice') as HTMLElement
    expect(await within(gone).findByRole('alert')).toHaveTextContent('the MCP server calc offers no tool "calc__gone"')
    expect(screen.getByRole('region', { name: 'What the agent gets' })).toHaveTextContent('bogus: "bogus" is not a built-in tool')
    // Not repeated as a stray message at the top.
    expect(screen.queryByText(/^tools\[1\]/)).not.toBeInTheDocument()
  })

  it('with no server to use, says where to add one', () => {
    renderWithData(<AgentForm onDone={() => {}} />, [[keys.me, member], [keys.selectableTools, []], [keys.mcpServers, []], [keys.skills, []], [keys.providers, []], [keys.agents, []], [['guardrails'], []]])
    expect(picker()).toHaveTextContent('No MCP servers this agent may use yet: add one in Settings → MCP servers.')
  })
})
