// @vitest-environment jsdom
// The agent form's refusals: the server's field messages next to their
// fields (a folded section holding one opens), what no field shows listed
// at the top, a JSON text that does not parse stopping the save before any
// request; the model field's suggestions from the provider; and a name on
// every control.
import { fireEvent, screen, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { api, type Agent, type Provider } from '../../lib/api'
import { keys } from '../../lib/queries'
import { answer, member, refusal } from '../../test/mcp'
import { renderWithData } from '../../test/render'
import { AgentForm } from './AgentForm'
import { newAgent } from './agentShape'

const agent = (over: Partial<Agent> = {}): Agent => ({ ...newAgent(), id: 'a1', name: 'Planner', model: 'todo', scope: 'private', owner_id: member.id, created_at: '', updated_at: '', ...over })
const provider: Provider = { id: 'p1', name: 'scripted', type: 'openai', api: '', auth_mode: '', base_url: 'http://x/v1', api_key: '', scope: 'private', owner_id: member.id, created_at: '', updated_at: '' } as Provider

function show(a: Agent) {
  return renderWithData(<AgentForm agent={a} onDone={() => {}} />, [
    [keys.me, member], [keys.selectableTools, []], [keys.mcpServers, []], [keys.skills, []], [keys.providers, [provider]], [keys.agents, [a]], [['guardrails'], []],
  ])
}

const section = (group: string) => document.querySelector(`details[data-group="${group}"]`) as HTMLDetailsElement
const save = () => userEvent.click(screen.getAllByRole('button', { name: 'Save' })[0])

let models: () => Promise<unknown>
beforeEach(() => {
  models = () => answer(200, { models: [{ id: 'echo' }, { id: 'todo', display_name: 'Todo writer' }] })
  vi.spyOn(api, 'GET').mockImplementation(((path: string) => (path === '/api/v1/providers/{id}/models' ? models() : answer(200, []))) as never)
  vi.spyOn(api, 'PUT').mockImplementation((() => answer(200, agent())) as never)
})

afterEach(() => {
  vi.restoreAllMocks()
})

describe('the agent form', () => {
  it('shows each refused field next to its control and opens the folded section holding it', async () => {
    vi.mocked(api.PUT).mockImplementation((() => refusal(400, 'validation', 'invalid input', {
      'guardrails.output_schema': 'must describe an object (type "object")',
      'approval.approve_tools': '"*" already covers every tool; list it alone',
      'resilience.fallback_models[0].model': 'is required',
      'somewhere.else': 'is wrong',
    })) as never)
    show(agent())
    expect(section('guardrails').open).toBe(false)
    await save()

    const schema = screen.getByLabelText('Output schema')
    expect(schema).toHaveAccessibleDescription('must describe an object (type "object")')
    expect(schema).toHaveAttribute('aria-invalid', 'true')
    expect(section('guardrails').open).toBe(true)
    expect(section('guardrails').querySelector('summary')).toHaveTextContent('1 problem')
    expect(section('resilience').open).toBe(true)
    expect(screen.getByLabelText('Fallback models').closest('.field')).toHaveTextContent('item 1, model: is required')
    // Sections with nothing refused stay folded.
    expect(section('behavior').open).toBe(false)
    expect(screen.getByLabelText('Ask before running')).toHaveAccessibleDescription('"*" already covers every tool; list it alone')

    const top = screen.getByRole('alert', { name: 'Why the agent was not saved' })
    expect(top).toHaveTextContent('Not saved: 4 fields need attention')
    expect(top).toHaveTextContent('somewhere.else: is wrong')
    expect(top).not.toHaveTextContent('output_schema')
  })

  it('shows a conflict at the top', async () => {
    vi.mocked(api.PUT).mockImplementation((() => refusal(409, 'conflict', 'a agent named "Planner" already exists in that scope')) as never)
    show(agent())
    await save()
    expect(screen.getByRole('alert', { name: 'Why the agent was not saved' })).toHaveTextContent('a agent named "Planner" already exists in that scope (conflict)')
  })

  it('says where a JSON text does not parse, and sends nothing while one does not', async () => {
    show(agent())
    const handlers = screen.getByLabelText('Error handlers')
    fireEvent.change(handlers, { target: { value: '{\n  "max_turns": {"final_output": "x"},\n}' } })
    expect(handlers).toHaveAccessibleDescription(/^Not valid JSON: Line 3, column 1: /)
    // Folded meanwhile: the save opens it again.
    section('error_handlers').open = false
    await save()
    expect(api.PUT).not.toHaveBeenCalled()
    expect(screen.getByRole('alert', { name: 'Why the agent was not saved' })).toHaveTextContent('Not saved: Error handlers is not valid JSON yet.')
    expect(section('error_handlers').open).toBe(true)
    expect(handlers).toHaveFocus()

    fireEvent.change(handlers, { target: { value: '{"max_turns": {"final_output": "x"}}' } })
    expect(handlers).not.toHaveAccessibleDescription(/Not valid JSON/)
    await save()
    expect(api.PUT).toHaveBeenCalledTimes(1)
  })

  it("offers the provider's models as suggestions", async () => {
    show(agent({ provider_id: 'p1' }))
    const model = screen.getByLabelText('Model')
    expect(await screen.findByText('2 models offered by the provider; pick one or type any name.')).toBeInTheDocument()
    const list = document.getElementById(model.getAttribute('list')!)!
    expect(Array.from(list.querySelectorAll('option')).map((o) => [o.value, o.textContent])).toEqual([['echo', ''], ['todo', 'Todo writer']])

  })

  it("keeps the listing's state under the model when the server refuses the model", async () => {
    vi.mocked(api.PUT).mockImplementation((() => refusal(400, 'validation', 'model: is required', { model: 'is required' })) as never)
    show(agent({ provider_id: 'p1', model: '' }))
    await screen.findByText('2 models offered by the provider; pick one or type any name.')
    await save()
    expect(screen.getByLabelText('Model')).toHaveAccessibleDescription('2 models offered by the provider; pick one or type any name. is required')
  })

  it('says why it cannot list the models, and still takes a typed name', async () => {
    models = () => refusal(503, 'unavailable', 'dial tcp 127.0.0.1:9: connect: connection refused')
    show(agent({ provider_id: 'p1' }))
    const model = screen.getByLabelText('Model')
    expect(await screen.findByText(/^Could not list the provider's models: dial tcp 127.0.0.1:9: connect: connection refused \(unavailable\)/)).toBeInTheDocument()
    expect(model).toHaveAccessibleDescription(/Could not list the provider's models/)
    await userEvent.clear(model)
    await userEvent.type(model, 'my-model')
    await save()
    expect(((vi.mocked(api.PUT).mock.calls[0] as unknown as [string, { body: Agent }])[1]).body.model).toBe('my-model')
  })

  it('asks for no models without a provider', () => {
    show(agent())
    expect(screen.getByLabelText('Model')).toHaveAccessibleDescription('Pick a provider to see the models it offers, or type a model name.')
    expect((vi.mocked(api.GET).mock.calls as unknown[][]).filter(([path]) => path === '/api/v1/providers/{id}/models')).toEqual([])
  })

  it('gives every control a name, the avatar without a picture included', () => {
    show(agent())
    const form = screen.getByRole('form', { name: 'Edit Planner' })
    expect(within(form).getByRole('radio', { name: "No picture (the name's initial)" })).toBeChecked()
    for (const el of Array.from(form.querySelectorAll('input, select, textarea, button, [role="radio"]'))) {
      expect(el, el.outerHTML.slice(0, 120)).toHaveAccessibleName()
    }
  })
})
