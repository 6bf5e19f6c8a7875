import { newSecretRow, rowUsed, secretRowsOf, SecretRowsEditor, type RowErrors, type SecretRow } from '../../components/SecretRowsEditor'
import { MASK, type EnvVar } from '../../lib/api'

/** One environment variable in the editor (see SecretRow: a stored one keeps its value and its name). */
export type EnvRow = SecretRow

export const newEnvRow = newSecretRow
export const envRowsOf = (env: EnvVar[] | null | undefined): EnvRow[] => secretRowsOf(env ?? [])

/** The env to send, and which row each entry came from (400s are keyed env[i].name / env[i].value by the sent index). */
export function envBody(rows: EnvRow[]): { env: EnvVar[]; rowOf: number[] } {
  const sent = rows.filter(rowUsed)
  return {
    env: sent.map((r) => ({ name: r.name.trim(), value: r.stored && r.edit.mode === 'keep' ? MASK : r.edit.value })),
    rowOf: sent.map((r) => r.key),
  }
}

export function EnvEditor({ rows, errors, onChange }: { rows: EnvRow[]; errors: RowErrors; onChange: (rows: EnvRow[]) => void }) {
  return (
    <SecretRowsEditor legend="Environment" noun="Variable" namePlaceholder="NAME" rows={rows} errors={errors} onChange={onChange}
      intro="Variables every command, shell and terminal in the project’s container sees. Values are write-only: stored sealed and never shown again." />
  )
}
