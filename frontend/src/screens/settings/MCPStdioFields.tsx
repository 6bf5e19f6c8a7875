import { useQuery } from '@tanstack/react-query'
import { Field } from '../../components/Field'
import { SecretRowsEditor, type RowErrors } from '../../components/SecretRowsEditor'
import { api, ok, type Project } from '../../lib/api'
import { keys } from '../../lib/queries'
import type { MCPFormState, Transport } from './mcpServerBody'

/** The admin setting that lets members run a program on this server's host too. */
export const MEMBERS_ON_HOST = 'mcp_stdio_members_on_host'

/**
 * Whether the caller may run a stdio server on this server's host (admins
 * always; members when an admin allowed it), and the caller's projects to run
 * one in instead. Asked only while the form is on stdio.
 */
export function useStdioPlaces(admin: boolean, on: boolean) {
  const settings = useQuery({ queryKey: ['settings'], queryFn: () => ok(api.GET('/api/v1/settings')), enabled: on && !admin })
  const hostAllowed = admin || settings.data?.find((s) => s.key === MEMBERS_ON_HOST)?.value === 'true'
  return { hostAllowed, projects: useOwnProjects(on) }
}

/** The caller's own projects (where they may run a stdio server), asked only when `on`. */
export function useOwnProjects(on: boolean): Project[] {
  const projects = useQuery({ queryKey: keys.projectList(false), queryFn: () => ok(api.GET('/api/v1/projects', { params: { query: {} } })), enabled: on })
  return projects.data ?? []
}

/** The transport: an HTTP endpoint, or a program the workbench starts and talks to over stdin/stdout. */
export function TransportChoice({ value, onChange, error }: { value: Transport; onChange: (t: Transport) => void; error?: string }) {
  const choices: [Transport, string][] = [['http', 'HTTP endpoint'], ['stdio', 'Local program (stdio)']]
  return (
    <Field label="Transport" group error={error}
      hint={value === 'stdio' ? 'The workbench starts the program and speaks MCP over its stdin and stdout' : 'A server reached over streamable HTTP'}>{(_, aria) => (
      <div className="checks" role="radiogroup" {...aria}>
        {choices.map(([t, label]) => (
          <label key={t} className="check">
            <input type="radio" name="mcp-transport" value={t} checked={value === t} onChange={() => onChange(t)} /> {label}
          </label>
        ))}
      </div>
    )}</Field>
  )
}

interface Props {
  f: MCPFormState
  /** Whether stored variable values may be kept (same command line, same place). */
  keepEnv: boolean
  set: <K extends keyof MCPFormState>(k: K, v: MCPFormState[K]) => void
  errors: Record<string, string>
  envErrors: RowErrors
  hostAllowed: boolean
  projects: Project[]
}

/** A stdio server's program: the command, its arguments one per line, its environment (write-only values) and where it runs. */
export function MCPStdioFields({ f, keepEnv, set, errors, envErrors, hostAllowed, projects }: Props) {
  // A stored project the caller does not own (an admin editing another's server) stays choosable.
  const unlisted = f.projectId && !projects.some((p) => p.id === f.projectId) ? f.projectId : ''
  return (
    <fieldset className="subgroup" aria-label="Program">
      <legend>Program</legend>
      <div className="grid2">
        <Field label="Command" hint="The program to start: npx, uvx, node, or a path such as /usr/local/bin/server" error={errors['config.command']}>{(id, aria) => (
          <input id={id} {...aria} className="mono" value={f.command} placeholder="npx" onChange={(e) => set('command', e.target.value)} required spellCheck={false} autoCapitalize="off" />
        )}</Field>
        <Field label="Run in" error={errors['config.project_id']}
          hint={hostAllowed
            ? 'This server’s host, or the sandbox of one of your projects'
            : `Only admins may run a program on this server’s host: ${projects.length ? 'pick one of your projects (its sandbox runs it)' : 'make a project (Projects) to run it in its sandbox'}, or ask an admin`}>{(id, aria) => (
          <select id={id} {...aria} value={f.projectId} onChange={(e) => set('projectId', e.target.value)}>
            {hostAllowed ? <option value="">This server’s host</option> : <option value="" disabled>Choose a project…</option>}
            {projects.map((p) => <option key={p.id} value={p.id}>Project {p.name}</option>)}
            {unlisted && <option value={unlisted}>Project {unlisted} (not yours)</option>}
          </select>
        )}</Field>
      </div>
      <Field label="Arguments" hint="One argument per line, exactly as typed: no shell quoting or splitting (a line with spaces is one argument)" error={errors['config.args']}>{(id, aria) => (
        <textarea id={id} {...aria} className="mono" rows={3} value={f.args} placeholder={'-y\n@modelcontextprotocol/server-everything'} onChange={(e) => set('args', e.target.value)} spellCheck={false} autoCapitalize="off" />
      )}</Field>
      <SecretRowsEditor legend="Environment" noun="Variable" namePlaceholder="API_KEY" rows={f.env} errors={envErrors} keepable={keepEnv}
        onChange={(rows) => set('env', rows)}
        intro={keepEnv
          ? 'Added to the program’s environment (an API key, a token); it does not inherit this server’s own. Values are write-only: stored sealed and never shown again.'
          : 'The command line or where it runs changed: stored values are not given to a new program or place — enter each again, or remove the variable.'} />
      {errors['config.env'] && <p className="error-text">{errors['config.env']}</p>}
    </fieldset>
  )
}
