// The usage routes as queries: reports (everyone's for admins, the caller's
// own), budgets and prices. Every write refreshes what it changed.
import { useQuery } from '@tanstack/react-query'
import { authFetch } from './api'
import type { BudgetCreate, BudgetStatus, DateRange, GroupBy, Price, PriceInput, UsageReport } from './usage'
import { usageQuery } from './usage'

export const usageKeys = {
  /** Every report (admins' and own) sits under this prefix. */
  all: ['usage'] as const,
  report: (mine: boolean, range: DateRange, groupBy: GroupBy, limit?: number) => ['usage', mine ? 'me' : 'all', range.from, range.to, groupBy, limit ?? 0] as const,
  budgets: ['budgets'] as const,
  prices: ['prices'] as const,
}

async function json<T>(url: string, init?: { method: string; body?: unknown }): Promise<T> {
  const res = await authFetch(url, init ? {
    method: init.method,
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body), headers: { 'Content-Type': 'application/json' } }),
  } : {})
  return (res.status === 204 ? undefined : await res.json()) as T
}

/** A report over the range grouped by groupBy: everyone's (admins) or, with mine, the caller's own with their budgets. */
export const useUsageReport = (mine: boolean, range: DateRange, groupBy: GroupBy, limit?: number, enabled = true) =>
  useQuery({
    queryKey: usageKeys.report(mine, range, groupBy, limit),
    queryFn: () => json<UsageReport>(`/api/v1/usage${mine ? '/me' : ''}?${usageQuery(range, groupBy, limit)}`),
    enabled,
    placeholderData: (prev) => prev,
  })

/** The CSV of the calls in the range: everyone's (admins) or the caller's own. */
export const usageExportURL = (mine: boolean, range: DateRange) =>
  `/api/v1/usage${mine ? '/me' : ''}/export?${new URLSearchParams({ from: range.from, to: range.to }).toString()}`

/** Every budget with this period's consumption (admins). */
export const useBudgets = () => useQuery({ queryKey: usageKeys.budgets, queryFn: () => json<{ budgets: BudgetStatus[] }>('/api/v1/budgets') })
export const createBudget = (b: BudgetCreate) => json<BudgetStatus>('/api/v1/budgets', { method: 'POST', body: b })
export const updateBudget = (id: string, limit: number) => json<BudgetStatus>(`/api/v1/budgets/${encodeURIComponent(id)}`, { method: 'PATCH', body: { limit } })
export const deleteBudget = (id: string) => json<void>(`/api/v1/budgets/${encodeURIComponent(id)}`, { method: 'DELETE' })

/** The price table (admins). */
export const usePrices = () => useQuery({ queryKey: usageKeys.prices, queryFn: () => json<{ prices: Price[] }>('/api/v1/prices') })
export const savePrice = (p: PriceInput) => json<Price>('/api/v1/prices', { method: 'PUT', body: p })
export const deletePrice = (id: string) => json<void>(`/api/v1/prices/${encodeURIComponent(id)}`, { method: 'DELETE' })
