/** The audit tab's filters as people set them: a user id, a kind, an action, days (yyyy-mm-dd). */
export type Filters = { actor: string; kind: string; action: string; since: string; until: string }
export const noFilters: Filters = { actor: '', kind: '', action: '', since: '', until: '' }

/** The filters as the API's query: empty ones left out, days as the start of the day in the browser's zone. */
export function queryOf(f: Filters): Record<string, string> {
  const q: Record<string, string> = {}
  if (f.actor) q.actor = f.actor
  if (f.kind) q.kind = f.kind
  if (f.action.trim()) q.action = f.action.trim()
  if (f.since) q.since = new Date(`${f.since}T00:00:00`).toISOString()
  if (f.until) {
    // "To" a day includes that day: the query ends at the next day's start (a calendar day, whatever its length).
    const end = new Date(`${f.until}T00:00:00`)
    end.setDate(end.getDate() + 1)
    q.until = end.toISOString()
  }
  return q
}
