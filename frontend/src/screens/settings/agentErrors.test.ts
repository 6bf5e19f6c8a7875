// The server's field messages land on the field the agent form draws for
// them, saying which part they are about; only what no field shows is
// listed at the top.
import { describe, expect, it } from 'vitest'
import { agentFieldKeys, placeErrors } from './agentErrors'
import { newAgent, type AgentBody } from './agentShape'

const body = (over: Partial<AgentBody> = {}): AgentBody => ({ ...newAgent(), ...over })

describe('agentFieldKeys', () => {
  it('has every knob the form draws, nested ones too, and JSON fields whole', () => {
    const keys = agentFieldKeys(body())
    for (const k of ['name', 'provider_id', 'context_window', 'tools', 'approval.approve_tools', 'resilience.retry_policy.max_retries',
      'guardrails.output_schema', 'model_settings.temperature', 'behavior.subagents', 'error_handlers']) {
      expect(keys, k).toContain(k)
    }
    expect(keys).not.toContain('resilience.fallback_models[0]')
  })
})

describe('placeErrors', () => {
  it('puts a message on its own field', () => {
    const a = body()
    expect(placeErrors({ name: 'is required', 'model_settings.temperature': 'must be between 0 and 2' }, agentFieldKeys(a), a)).toEqual({
      byField: { name: 'is required', 'model_settings.temperature': 'must be between 0 and 2' }, byTool: {}, stray: [],
    })
  })

  it('puts an item of a list on the list, by the name sent there', () => {
    const a = body({ approval: { approve_tools: ['*', 'exec_command'] }, handoffs: ['a1', 'a2'] })
    const placed = placeErrors({
      'approval.approve_tools': '"*" already covers every tool; list it alone',
      'handoffs[1]': 'no such agent',
    }, agentFieldKeys(a), a, (field, v) => (field === 'handoffs' && v === 'a2' ? 'Reviewer' : v))
    expect(placed.byField).toEqual({
      'approval.approve_tools': '"*" already covers every tool; list it alone',
      handoffs: 'Reviewer: no such agent',
    })
  })

  it('puts a part of a JSON field on the field, saying which part', () => {
    const a = body({ resilience: { ...newAgent().resilience, fallback_models: [{ model: '', provider_id: 'p' }] } })
    const placed = placeErrors({
      'resilience.fallback_models[0].model': 'is required',
      'error_handlers.max_turns.final_output': 'is required',
      'error_handlers.model_refusal.final_output': 'must be a string',
    }, agentFieldKeys(a), a)
    expect(placed.byField).toEqual({
      'resilience.fallback_models': 'item 1, model: is required',
      error_handlers: 'max_turns.final_output: is required; model_refusal.final_output: must be a string',
    })
  })

  it('keys tools[i] by the tool sent at i', () => {
    const a = body({ tools: ['todo_write', 'bogus'] })
    expect(placeErrors({ 'tools[1]': '"bogus" is not a built-in tool' }, agentFieldKeys(a), a)).toEqual({
      byField: {}, byTool: { bogus: '"bogus" is not a built-in tool' }, stray: [],
    })
  })

  it('reads provider.* as the provider field, and lists what no field shows', () => {
    const a = body()
    const placed = placeErrors({ 'provider.context_window': 'is too small', 'scope': 'nope' }, agentFieldKeys(a), a)
    expect(placed.byField).toEqual({ provider_id: 'context_window: is too small' })
    expect(placed.stray).toEqual([['scope', 'nope']])
  })
})
