import { formatTokens, formatUSD, type UsageTotals } from '../../lib/usage'
import '../../styles/usage.css'

/**
 * What some calls used and cost, in one line: "$0.0042 · 1.2k in · 300 out ·
 * 3 calls", and how many had no price (their cost is not in the figure).
 */
export function UsageFacts({ usage, label }: { usage: UsageTotals; label: string }) {
  const parts = [
    `${formatTokens(usage.input_tokens)} in`,
    `${formatTokens(usage.output_tokens)} out`,
    `${usage.calls.toLocaleString()} ${usage.calls === 1 ? 'call' : 'calls'}`,
  ]
  return (
    <div className="usage-facts" aria-label={label} role="group">
      <b className="usage-cost">{formatUSD(usage.cost_usd)}</b>
      <span className="muted small"> · {parts.join(' · ')}</span>
      {usage.unpriced_calls > 0 && (
        <span className="muted small"> · no price for {usage.unpriced_calls} {usage.unpriced_calls === 1 ? 'call' : 'calls'}</span>
      )}
    </div>
  )
}
