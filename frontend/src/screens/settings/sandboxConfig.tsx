// A sandbox's config form. This is the ONE place the UI switches on the
// sandbox type: every other screen offers actions from the row's derived
// `supports` flags.
import { Field } from '../../components/Field'
import { SecretInput, secretValue, type SecretEdit } from '../../components/SecretField'
import { rowUsed, secretRowsOf, SecretRowsEditor, type RowErrors, type SecretRow } from '../../components/SecretRowsEditor'
import { MASK, type Sandbox } from '../../lib/api'

export type SandboxType = Sandbox['type']
export const SANDBOX_TYPES: SandboxType[] = ['docker', 'e2b']

// A 'secret-map' is an object of named write-only values (request
// headers): edited as rows, each value kept with the mask until replaced.
type Kind = 'text' | 'int' | 'float' | 'bool' | 'select' | 'secret' | 'secret-multiline' | 'secret-map'
interface Spec {
  key: string; label: string; kind: Kind; hint?: string; placeholder?: string; options?: [string, string][]; initial?: unknown
  /** What one row of a secret-map is called: "Header" → "Header 1 name", "Add header". */
  noun?: string
}

const SPECS: Record<SandboxType, Spec[]> = {
  docker: [
    { key: 'image', label: 'Image', kind: 'text', placeholder: 'ubuntu:24.04', hint: 'Required: what every project container runs' },
    { key: 'host', label: 'Host', kind: 'text', placeholder: 'ssh://user@host or tcp://host:2375', hint: 'Empty: this machine’s Docker daemon' },
    { key: 'ssh_password', label: 'SSH password', kind: 'secret', hint: 'For an ssh:// host' },
    { key: 'ssh_key', label: 'SSH key', kind: 'secret-multiline', placeholder: '-----BEGIN OPENSSH PRIVATE KEY-----', hint: 'A private key for an ssh:// host' },
    { key: 'runtime', label: 'Runtime', kind: 'text', placeholder: 'runsc', hint: 'Empty: the daemon’s default (runc)' },
    { key: 'user', label: 'User', kind: 'text', placeholder: 'user[:group]', hint: 'Empty runs as root' },
    { key: 'network', label: 'Network', kind: 'text', placeholder: 'bridge', hint: 'The docker network to join; empty means no network at all' },
    { key: 'memory_mb', label: 'Memory (MiB)', kind: 'int', initial: 0, hint: '0 = 4096' },
    { key: 'cpus', label: 'CPUs', kind: 'float', initial: 0, hint: '0 = 2' },
    { key: 'max_read_file_bytes', label: 'Max read file bytes', kind: 'int', initial: 0, hint: 'The largest file the read tool loads; 0 = 8 MiB' },
  ],
  e2b: [
    { key: 'template_id', label: 'Template ID', kind: 'text', hint: 'Required: built in the service’s console or CLI' },
    { key: 'api_url', label: 'API URL', kind: 'text', placeholder: 'https://api.e2b.app', hint: 'The control plane; empty = https://api.<domain>' },
    { key: 'domain', label: 'Domain', kind: 'text', placeholder: 'e2b.app', hint: 'Sandbox hosts are <port>-<id>.<domain>; empty = e2b.app' },
    { key: 'api_key', label: 'API key', kind: 'secret' },
    { key: 'headers', label: 'Headers', kind: 'secret-map', noun: 'Header', placeholder: 'X-Api-Key',
      hint: 'Extra HTTP headers some compatible services need. Values are write-only.' },
    { key: 'data_plane_auth', label: 'Data-plane auth', kind: 'select', initial: '',
      options: [['', 'auto'], ['access_token', 'access_token'], ['api_key', 'api_key'], ['none', 'none']],
      hint: 'auto = the per-sandbox access token when the service issues one, else the API key' },
    { key: 'timeout_seconds', label: 'Timeout (seconds)', kind: 'int', initial: 0, hint: 'The lease each use refreshes; 0 = 300' },
    { key: 'auto_pause', label: 'Auto-pause', kind: 'bool', initial: true, hint: 'An expired lease pauses the sandbox (files kept); off destroys the tree' },
    { key: 'allow_internet', label: 'Allow internet', kind: 'bool', initial: false, hint: 'Let commands reach the internet' },
    { key: 'max_read_file_bytes', label: 'Max read file bytes', kind: 'int', initial: 0, hint: '0 = 8 MiB' },
  ],
}

const isSecret = (s: Spec) => s.kind === 'secret' || s.kind === 'secret-multiline'
const isMap = (s: Spec) => s.kind === 'secret-map'
const objectOf = (v: unknown) => (v && typeof v === 'object' && !Array.isArray(v) ? v : {}) as Record<string, unknown>

/** The secret (write-only) keys of a type's config. */
export const secretKeys = (type: SandboxType) => SPECS[type].filter(isSecret).map((s) => s.key)

/** Every key of a type's config, as its field errors name them ("config.<key>"). */
export const configKeys = (type: SandboxType) => SPECS[type].map((s) => s.key)

/** A type's config with its defaults, overlaid with what is stored (secrets and secret maps excluded: they are edited apart). */
export function configFor(type: SandboxType, stored?: unknown): Record<string, unknown> {
  const from = objectOf(stored)
  const out: Record<string, unknown> = {}
  for (const s of SPECS[type]) {
    if (isSecret(s) || isMap(s)) continue
    out[s.key] = from[s.key] ?? s.initial ?? ''
  }
  return out
}

/** Rows of each secret map of a type, from what is stored (a read masks every value). */
export function secretMapsFor(type: SandboxType, stored?: unknown): Record<string, SecretRow[]> {
  const from = objectOf(stored)
  return Object.fromEntries(SPECS[type].filter(isMap).map((s) => [s.key,
    secretRowsOf(Object.entries(objectOf(from[s.key])).map(([name, value]) => ({ name, value: String(value) })))]))
}

/** Which secret map row a field error names: "config.<map>.<lowercased name>" → the row. */
export type RowsByError = Record<string, { map: string; row: number }>

export interface BuiltConfig {
  config: Record<string, unknown>
  rowOf: RowsByError
  /** What must change before anything is sent, per secret map. */
  rowErrors: Record<string, RowErrors>
}

/**
 * The config to send (PUT replaces it whole): the fields, each secret as
 * its edit says (the mask keeps, "" clears), and each secret map as an
 * object of the rows in use — a kept row sends the mask, a removed one is
 * left out (which removes it), and "" is a value like any other.
 */
export function buildConfig(type: SandboxType, config: Record<string, unknown>, secrets: Record<string, SecretEdit>, maps: Record<string, SecretRow[]>): BuiltConfig {
  const out: Record<string, unknown> = { ...config, ...Object.fromEntries(Object.entries(secrets).map(([k, v]) => [k, secretValue(v)])) }
  const rowOf: RowsByError = {}
  const rowErrors: Record<string, RowErrors> = {}
  for (const s of SPECS[type].filter(isMap)) {
    const sent: Record<string, string> = {}
    const errors: RowErrors = {}
    const noun = (s.noun ?? 'entry').toLowerCase()
    for (const r of (maps[s.key] ?? []).filter(rowUsed)) {
      const name = r.name.trim()
      const at = `config.${s.key}.${name}`.toLowerCase()
      if (!name) errors[r.key] = { name: `Name the ${noun}` }
      else if (at in rowOf) errors[r.key] = { name: `Given twice (${noun} names are case-insensitive)` }
      else {
        sent[name] = secretValue(r.edit)
        rowOf[at] = { map: s.key, row: r.key }
      }
    }
    out[s.key] = sent
    if (Object.keys(errors).length) rowErrors[s.key] = errors
  }
  return { config: out, rowOf, rowErrors }
}

/** The API's field errors split: those about one secret map row ("config.headers.<Name>") onto it, the rest by field. */
export function splitConfigErrors(fields: Record<string, string>, rowOf: RowsByError): { rows: Record<string, RowErrors>; rest: Record<string, string> } {
  const rows: Record<string, RowErrors> = {}
  const rest: Record<string, string> = {}
  for (const [k, v] of Object.entries(fields)) {
    const at = rowOf[k.toLowerCase()]
    if (at) rows[at.map] = { ...rows[at.map], [at.row]: { ...rows[at.map]?.[at.row], value: v } }
    else rest[k] = v
  }
  return { rows, rest }
}

/** What a row shows of a sandbox's config: its type's first field (the image, the template). */
export function configHeadline(type: SandboxType, config: unknown): string {
  const key = SPECS[type]?.[0]?.key
  const v = key && config && typeof config === 'object' ? (config as Record<string, unknown>)[key] : undefined
  return typeof v === 'string' ? v : ''
}

/** Whether the sandbox's daemon is reached over SSH, so a host key is pinned for it. */
export function pinsHostKey(type: SandboxType, config: unknown): boolean {
  const host = config && typeof config === 'object' ? (config as Record<string, unknown>).host : undefined
  return type === 'docker' && typeof host === 'string' && host.startsWith('ssh://')
}

/**
 * What the edit form says of a sandbox projects live on, after "N projects
 * live here: ": what they froze, and what an edit still changes.
 */
export function frozenNotice(type: SandboxType): string {
  switch (type) {
    case 'e2b':
      return 'the service, template, auto-pause and internet access are frozen: each project’s files live in its E2B sandbox. The timeout, the key and the headers stay editable.'
    default:
      return 'the type and where it runs are frozen. A change to what runs (the image, the limits) replaces their containers at their next use; files under /workspace stay.'
  }
}

/** Which secrets are stored now: a read returns them masked. */
export function storedSecrets(stored: unknown): Set<string> {
  const from = (stored && typeof stored === 'object' ? stored : {}) as Record<string, unknown>
  return new Set(Object.entries(from).filter(([, v]) => v === MASK).map(([k]) => k))
}

interface Props {
  type: SandboxType
  config: Record<string, unknown>
  secrets: Record<string, SecretEdit>
  stored: Set<string>
  existing: boolean
  errors: Record<string, string>
  maps: Record<string, SecretRow[]>
  /** Per secret map, per row: its messages. */
  rowErrors: Record<string, RowErrors>
  onConfig: (key: string, value: unknown) => void
  onSecret: (key: string, edit: SecretEdit) => void
  onMap: (key: string, rows: SecretRow[]) => void
}

/**
 * The fields of the chosen type, then its secret maps; errors are keyed
 * "config.<field>" as the server sends them (a secret map's rows take theirs
 * through rowErrors).
 */
export function SandboxConfigFields({ type, config, secrets, stored, existing, errors, maps, rowErrors, onConfig, onSecret, onMap }: Props) {
  return (
    <>
      <div className="grid2" data-config={type}>
        {SPECS[type].filter((s) => !isMap(s)).map((s) => (
          <Field key={s.key} label={s.label} hint={s.hint} error={errors[`config.${s.key}`]} inline={s.kind === 'bool'}>{(id) => {
            switch (s.kind) {
              case 'secret':
              case 'secret-multiline':
                return <SecretInput id={id} edit={secrets[s.key]} stored={stored.has(s.key)} existing={existing} multiline={s.kind === 'secret-multiline'}
                  placeholder={s.placeholder} onChange={(e) => onSecret(s.key, e)} />
              case 'bool':
                return <input id={id} type="checkbox" checked={!!config[s.key]} onChange={(e) => onConfig(s.key, e.target.checked)} />
              case 'select':
                return (
                  <select id={id} value={String(config[s.key] ?? '')} onChange={(e) => onConfig(s.key, e.target.value)}>
                    {s.options!.map(([v, l]) => <option key={v} value={v}>{l}</option>)}
                  </select>
                )
              case 'int':
              case 'float':
                return <input id={id} type="number" min={0} step={s.kind === 'float' ? 0.5 : 1} value={String(config[s.key] ?? 0)}
                  onChange={(e) => onConfig(s.key, e.target.value === '' ? 0 : Number(e.target.value))} />
              default:
                return <input id={id} value={String(config[s.key] ?? '')} placeholder={s.placeholder}
                  onChange={(e) => onConfig(s.key, e.target.value)} />
            }
          }}</Field>
        ))}
      </div>
      {SPECS[type].filter(isMap).map((s) => (
        <div key={s.key} className={`field${errors[`config.${s.key}`] ? ' has-error' : ''}`} data-config-map={s.key}>
          <SecretRowsEditor legend={s.label} intro={s.hint ?? ''} noun={s.noun ?? 'Entry'} namePlaceholder={s.placeholder ?? ''}
            rows={maps[s.key] ?? []} errors={rowErrors[s.key] ?? {}} onChange={(rows) => onMap(s.key, rows)} />
          {errors[`config.${s.key}`] && <small className="error-text" role="alert">{errors[`config.${s.key}`]}</small>}
        </div>
      ))}
    </>
  )
}
