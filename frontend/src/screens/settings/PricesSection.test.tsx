// @vitest-environment jsdom
// The price table: each figure with its source and date, a price edited
// (an upsert by provider type and model) and one deleted once confirmed.
import { screen, waitFor, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { api } from '../../lib/api'
import type { Price } from '../../lib/usage'
import { usageKeys } from '../../lib/usageApi'
import { answer } from '../../test/mcp'
import { renderWithData } from '../../test/render'
import { PricesSection } from './PricesSection'

const price: Price = { id: 'p1', provider_type: 'openai', model: 'gpt-x', input_per_mtok: 2.5, cached_input_per_mtok: 0, output_per_mtok: 10,
  source: 'https://openai.com/api/pricing', as_of: '2026-10-24', updated_at: '' }
let calls: [string, unknown][] = []

beforeEach(() => {
  calls = []
  vi.spyOn(api, 'GET').mockImplementation((() => answer(200, { prices: [price] })) as never)
  vi.spyOn(api, 'PUT').mockImplementation(((path: string, init: { body: unknown }) => (calls.push([`PUT ${path}`, init.body]), answer(200, price))) as never)
  vi.spyOn(api, 'DELETE').mockImplementation(((path: string, init: { params: { path: { id: string } } }) => (calls.push([`DELETE ${path}`, init.params.path.id]), answer(204))) as never)
})
afterEach(() => {
  vi.restoreAllMocks()
})

const show = () => renderWithData(<PricesSection />, [[usageKeys.prices, { prices: [price] }], [['provider-types'], [{ type: 'openai' }, { type: 'anthropic' }]]])

describe('the price table', () => {
  it('shows each price per million tokens, with its source and date', () => {
    show()
    const row = screen.getByRole('row', { name: /gpt-x/ })
    expect(row).toHaveTextContent('openaigpt-x$2.50—$10.00openai.comas of 2026-10-24')
    expect(within(row).getByRole('link', { name: 'openai.com' })).toHaveAttribute('href', 'https://openai.com/api/pricing')
  })

  it('edits a price: the stored figures are the form, and a save sends them all', async () => {
    show()
    await userEvent.click(screen.getByRole('button', { name: 'Edit the price of gpt-x' }))
    const form = screen.getByRole('form', { name: 'Price of gpt-x' })
    const output = within(form).getByLabelText('Output ($ per million tokens)')
    expect(output).toHaveValue(10)
    await userEvent.clear(output)
    await userEvent.type(output, '12')
    await userEvent.type(within(form).getByLabelText('Cached input ($ per million tokens)'), '{selectall}0.25')
    await userEvent.click(within(form).getByRole('button', { name: 'Save price' }))
    await waitFor(() => expect(calls).toEqual([['PUT /api/v1/prices', {
      provider_type: 'openai', model: 'gpt-x', input_per_mtok: 2.5, cached_input_per_mtok: 0.25, output_per_mtok: 12, source: 'https://openai.com/api/pricing', as_of: '2026-10-24',
    }]]))
    await waitFor(() => expect(screen.queryByRole('form', { name: 'Price of gpt-x' })).toBeNull())
  })

  it('deletes a price only once confirmed', async () => {
    show()
    await userEvent.click(screen.getByRole('button', { name: 'Delete the price of gpt-x' }))
    expect(calls).toEqual([])
    await userEvent.click(screen.getByRole('button', { name: 'Delete?' }))
    await waitFor(() => expect(calls).toEqual([['DELETE /api/v1/prices/{id}', 'p1']]))
  })
})
