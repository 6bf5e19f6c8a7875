import { describe, expect, it } from 'vitest'
import { noFilters, queryOf } from './auditQuery'

describe('queryOf', () => {
  it('leaves empty filters out', () => {
    expect(queryOf(noFilters)).toEqual({})
    expect(queryOf({ ...noFilters, action: '   ' })).toEqual({})
  })

  it('passes the person, kind and action, and makes days whole in the browser zone', () => {
    const q = queryOf({ actor: 'u1', kind: 'provider', action: ' provider.update ', since: '2026-12-01', until: '2026-12-02' })
    expect(q).toMatchObject({ actor: 'u1', kind: 'provider', action: 'provider.update' })
    const since = new Date(q.since)
    const until = new Date(q.until)
    expect([since.getFullYear(), since.getMonth(), since.getDate(), since.getHours()]).toEqual([2026, 11, 1, 0])
    // "To" a day includes it: the query ends at the next day's start.
    expect([until.getFullYear(), until.getMonth(), until.getDate(), until.getHours()]).toEqual([2026, 11, 3, 0])
  })
})
