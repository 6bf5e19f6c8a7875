import { Field, JsonField, ListField } from '../../components/Field'
import { BOUNDS, ENUMS, HINTS, JSON_FIELDS, LABELS, TRISTATE } from './agentShape'

type Obj = Record<string, unknown>
/** A knob's label: its plain-language one, else its key read as words. */
const labelOf = (path: string, k: string) => LABELS[path] ?? k.replace(/_/g, ' ').replace(/^./, (c) => c.toUpperCase())

/**
 * One group of agent knobs, drawn from the value's own shape: booleans as
 * checkboxes, numbers as number fields, enums as selects, name lists as
 * comma text, free-form values as JSON. Errors are keyed by dotted path.
 * only / omit pick the knobs drawn here when a group is split across
 * sections of the form.
 */
export function GroupEditor({ path, value, template, errors, onChange, only, omit }: {
  path: string; value: Obj; template?: Obj; errors: Record<string, string>; onChange: (v: Obj) => void; only?: string[]; omit?: string[]
}) {
  const keys = Array.from(new Set([...Object.keys(template ?? {}), ...Object.keys(value)]))
    .filter((k) => (!only || only.includes(k)) && !omit?.includes(k))
  return (
    <div className="group-grid">
      {keys.map((k) => {
        const p = `${path}.${k}`
        const v = k in value ? value[k] : template?.[k]
        const set = (nv: unknown) => onChange({ ...value, [k]: nv })
        return <Knob key={p} path={p} name={k} value={v} nullable={!!template && k in template} error={errors[p]} errors={errors} onChange={set} />
      })}
    </div>
  )
}

function Knob({ path, name, value, nullable, error, errors, onChange }: { path: string; name: string; value: unknown; nullable: boolean; error?: string; errors: Record<string, string>; onChange: (v: unknown) => void }) {
  const hint = HINTS[path]
  const label = labelOf(path, name)
  if (JSON_FIELDS.has(path)) return <Field label={label} hint={hint} error={error}>{(id, aria) => <JsonField id={id} aria={aria} value={value} onChange={onChange} />}</Field>
  if (ENUMS[name]) {
    return (
      <Field label={label} hint={hint} error={error}>{(id, aria) => (
        <select id={id} {...aria} value={String(value ?? '')} onChange={(e) => onChange(e.target.value)}>
          {ENUMS[name].map((o) => <option key={o} value={o}>{o || 'default'}</option>)}
        </select>
      )}</Field>
    )
  }
  if (TRISTATE.has(name)) {
    return (
      <Field label={label} hint={hint} error={error}>{(id, aria) => (
        <select id={id} {...aria} value={value === true ? 'on' : value === false ? 'off' : ''} onChange={(e) => onChange(e.target.value === '' ? null : e.target.value === 'on')}>
          <option value="">default</option>
          <option value="on">on</option>
          <option value="off">off</option>
        </select>
      )}</Field>
    )
  }
  if (typeof value === 'boolean') {
    return (
      <Field label={label} hint={hint} error={error} inline>{(id, aria) => (
        <input id={id} {...aria} type="checkbox" checked={!!value} onChange={(e) => onChange(e.target.checked)} />
      )}</Field>
    )
  }
  if (typeof value === 'number' || (nullable && value === null)) {
    return (
      <Field label={label} hint={hint} error={error}>{(id, aria) => (
        <input id={id} {...aria} type="number" step="any" min={BOUNDS[path]?.min} max={BOUNDS[path]?.max} value={value === null || value === undefined ? '' : String(value)}
          onChange={(e) => onChange(e.target.value === '' ? (nullable ? null : 0) : Number(e.target.value))} />
      )}</Field>
    )
  }
  if (Array.isArray(value) && value.every((x) => typeof x === 'string')) {
    return <Field label={label} hint={hint} error={error}>{(id, aria) => <ListField id={id} aria={aria} value={value as string[]} onChange={onChange} />}</Field>
  }
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    return (
      <fieldset className="subgroup">
        <legend>{label}</legend>
        <GroupEditor path={path} value={value as Obj} errors={errors} onChange={onChange} />
      </fieldset>
    )
  }
  if (typeof value === 'string' || value === undefined) {
    const long = name.endsWith('prompt') || name.endsWith('description')
    return (
      <Field label={label} hint={hint} error={error}>{(id, aria) => long
        ? <textarea id={id} {...aria} rows={2} value={value ?? ''} onChange={(e) => onChange(e.target.value)} />
        : <input id={id} {...aria} value={value ?? ''} onChange={(e) => onChange(e.target.value)} />}
      </Field>
    )
  }
  return <Field label={label} hint={hint} error={error}>{(id, aria) => <JsonField id={id} aria={aria} value={value} onChange={onChange} />}</Field>
}
