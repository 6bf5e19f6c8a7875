// The usage routes as queries: reports (everyone's for admins, the caller's
// own), budgets and prices. Every write is a plain call; the screen that
// makes it refreshes what it changed.
import { useQuery } from '@tanstack/react-query'
import { api, ok } from './api'
import type { BudgetCreate, DateRange, GroupBy, PriceInput, UsageReport } from './usage'
import { usageQuery } from './usage'

export const usageKeys = {
  /** Every report (admins' and own) sits under this prefix. */
  all: ['usage'] as const,
  report: (mine: boolean, range: DateRange, groupBy: GroupBy, limit?: number) => ['usage', mine ? 'me' : 'all', range.from, range.to, groupBy, limit ?? 0] as const,
  budgets: ['budgets'] as const,
  prices: ['prices'] as const,
}

/** A report over the range grouped by groupBy: everyone's (admins) or, with mine, the caller's own with their budgets. */
export const useUsageReport = (mine: boolean, range: DateRange, groupBy: GroupBy, limit?: number, enabled = true) =>
  useQuery<UsageReport>({
    queryKey: usageKeys.report(mine, range, groupBy, limit),
    queryFn: () => {
      const params = { query: usageQuery(range, groupBy, limit) }
      return mine ? ok(api.GET('/api/v1/usage/me', { params })) : ok(api.GET('/api/v1/usage', { params }))
    },
    enabled,
    placeholderData: (prev) => prev,
  })

/** The CSV of the calls in the range: everyone's (admins) or the caller's own. */
export const usageExportURL = (mine: boolean, range: DateRange) =>
  `/api/v1/usage${mine ? '/me' : ''}/export?${new URLSearchParams({ from: range.from, to: range.to }).toString()}`

/** Every budget with this period's consumption (admins). */
export const useBudgets = () => useQuery({ queryKey: usageKeys.budgets, queryFn: () => ok(api.GET('/api/v1/budgets')) })
export const createBudget = (body: BudgetCreate) => ok(api.POST('/api/v1/budgets', { body }))
export const updateBudget = (id: string, limit: number) => ok(api.PATCH('/api/v1/budgets/{id}', { params: { path: { id } }, body: { limit } }))
export const deleteBudget = (id: string) => ok(api.DELETE('/api/v1/budgets/{id}', { params: { path: { id } } }))

/** The price table (admins). */
export const usePrices = () => useQuery({ queryKey: usageKeys.prices, queryFn: () => ok(api.GET('/api/v1/prices')) })
export const savePrice = (body: PriceInput) => ok(api.PUT('/api/v1/prices', { body }))
export const deletePrice = (id: string) => ok(api.DELETE('/api/v1/prices/{id}', { params: { path: { id } } }))
