import { Field } from '../../components/Field'
import { presetRange, validRange, type DateRange, type RangePreset } from '../../lib/usage'

/** The range a screen shows: a preset, or custom days from–to (kept while typing, asked once valid). */
export interface RangeChoice { preset: RangePreset; custom: DateRange }

const presets: [RangePreset, string][] = [['7', 'Last 7 days'], ['30', 'Last 30 days'], ['90', 'Last 90 days'], ['month', 'This month'], ['custom', 'Custom']]

/** The days a choice covers; a custom range that is not yet valid keeps the last 30 days. */
export const rangeOf = (c: RangeChoice, now = new Date()): DateRange =>
  c.preset === 'custom' ? (validRange(c.custom) ? c.custom : presetRange('30', now)) : presetRange(c.preset, now)

/** The range buttons (one pressed) and, for Custom, the two days. Days are UTC, as the server counts them. */
export function RangePicker({ value, onChange }: { value: RangeChoice; onChange: (c: RangeChoice) => void }) {
  const bad = value.preset === 'custom' && !validRange(value.custom)
  return (
    <div className="usage-range">
      <div className="segmented" role="group" aria-label="Date range">
        {presets.map(([p, label]) => (
          <button key={p} type="button" className={`btn btn-sm${value.preset === p ? ' active' : ''}`} aria-pressed={value.preset === p}
            onClick={() => onChange({ preset: p, custom: p === 'custom' && !validRange(value.custom) ? rangeOf(value) : value.custom })}>
            {label}
          </button>
        ))}
      </div>
      {value.preset === 'custom' && (
        <div className="usage-custom">
          <Field label="From" error={bad ? 'From must be on or before To.' : undefined}>{(id, aria) => (
            <input id={id} type="date" value={value.custom.from} {...aria} onChange={(e) => onChange({ ...value, custom: { ...value.custom, from: e.target.value } })} />
          )}</Field>
          <Field label="To">{(id) => (
            <input id={id} type="date" value={value.custom.to} onChange={(e) => onChange({ ...value, custom: { ...value.custom, to: e.target.value } })} />
          )}</Field>
        </div>
      )}
    </div>
  )
}
