import { Markdown } from '../../components/Markdown'

/** The plan a submit_plan call carries (display.extra.plan once answered, its arguments while it waits). */
export function planText(extra?: string, args?: string): string | null {
  if (extra) return extra
  if (!args) return null
  try {
    const v = JSON.parse(args)
    return typeof v?.plan === 'string' && v.plan.trim() ? v.plan : null
  } catch {
    return null
  }
}

/** The `plan` renderer: the submitted plan as Markdown, so it is read before it is approved. */
export function PlanView({ extra, args }: { extra?: string; args?: string }) {
  const text = planText(extra, args)
  if (!text) return null
  return (
    <div className="plan-view" aria-label="Plan">
      <Markdown text={text} />
    </div>
  )
}
