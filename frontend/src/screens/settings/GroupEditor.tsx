import { Field, JsonField, ListField } from '../../components/Field'
import { BOUNDS, ENUMS, HINTS, JSON_FIELDS, TRISTATE } from './agentShape'

type Obj = Record<string, unknown>
const label = (k: string) => k.replace(/_/g, ' ').replace(/^./, (c) => c.toUpperCase())

/**
 * One group of agent knobs, drawn from the value's own shape: booleans as
 * checkboxes, numbers as number fields, enums as selects, name lists as
 * comma text, free-form values as JSON. Errors are keyed by dotted path.
 */
export function GroupEditor({ path, value, template, errors, onChange }: { path: string; value: Obj; template?: Obj; errors: Record<string, string>; onChange: (v: Obj) => void }) {
  const keys = Array.from(new Set([...Object.keys(template ?? {}), ...Object.keys(value)]))
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
  if (JSON_FIELDS.has(path)) return <Field label={label(name)} hint={hint} error={error}>{(id) => <JsonField id={id} value={value} onChange={onChange} />}</Field>
  if (ENUMS[name]) {
    return (
      <Field label={label(name)} hint={hint} error={error}>{(id) => (
        <select id={id} value={String(value ?? '')} onChange={(e) => onChange(e.target.value)}>
          {ENUMS[name].map((o) => <option key={o} value={o}>{o || 'default'}</option>)}
        </select>
      )}</Field>
    )
  }
  if (TRISTATE.has(name)) {
    return (
      <Field label={label(name)} hint={hint} error={error}>{(id) => (
        <select id={id} value={value === true ? 'on' : value === false ? 'off' : ''} onChange={(e) => onChange(e.target.value === '' ? null : e.target.value === 'on')}>
          <option value="">default</option>
          <option value="on">on</option>
          <option value="off">off</option>
        </select>
      )}</Field>
    )
  }
  if (typeof value === 'boolean') {
    return (
      <Field label={label(name)} hint={hint} error={error} inline>{(id) => (
        <input id={id} type="checkbox" checked={!!value} onChange={(e) => onChange(e.target.checked)} />
      )}</Field>
    )
  }
  if (typeof value === 'number' || (nullable && value === null)) {
    return (
      <Field label={label(name)} hint={hint} error={error}>{(id) => (
        <input id={id} type="number" step="any" min={BOUNDS[path]?.min} max={BOUNDS[path]?.max} value={value === null || value === undefined ? '' : String(value)}
          onChange={(e) => onChange(e.target.value === '' ? (nullable ? null : 0) : Number(e.target.value))} />
      )}</Field>
    )
  }
  if (Array.isArray(value) && value.every((x) => typeof x === 'string')) {
    return <Field label={label(name)} hint={hint} error={error}>{(id) => <ListField id={id} value={value as string[]} onChange={onChange} />}</Field>
  }
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    return (
      <fieldset className="subgroup">
        <legend>{label(name)}</legend>
        <GroupEditor path={path} value={value as Obj} errors={errors} onChange={onChange} />
      </fieldset>
    )
  }
  if (typeof value === 'string' || value === undefined) {
    const long = name.endsWith('prompt') || name.endsWith('description')
    return (
      <Field label={label(name)} hint={hint} error={error}>{(id) => long
        ? <textarea id={id} rows={2} value={value ?? ''} onChange={(e) => onChange(e.target.value)} />
        : <input id={id} value={value ?? ''} onChange={(e) => onChange(e.target.value)} />}
      </Field>
    )
  }
  return <Field label={label(name)} hint={hint} error={error}>{(id) => <JsonField id={id} value={value} onChange={onChange} />}</Field>
}
