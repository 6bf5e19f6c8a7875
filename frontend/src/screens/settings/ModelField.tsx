import { useId, type ReactNode } from 'react'
import { Field } from '../../components/Field'
import { errorText } from '../../lib/api'
import { useProviderModels } from '../../lib/queries'

/**
 * The agent's model: free text, with the models the chosen provider's
 * vendor lists offered as suggestions (a datalist). A listing that fails
 * says why under the field and blocks nothing: a model the vendor does
 * not list (or a vendor that cannot be reached now) may still be typed.
 */
export function ModelField({ providerId, value, error, onChange }: { providerId: string; value: string; error?: string; onChange: (v: string) => void }) {
  const models = useProviderModels(providerId)
  const listId = useId()
  const offered = models.data?.models ?? []
  let hint: ReactNode
  if (!providerId) hint = 'Pick a provider to see the models it offers, or type a model name.'
  else if (models.isPending) hint = 'Asking the provider for its models…'
  else if (models.isError) hint = <span className="warn-text">Could not list the provider's models: {errorText(models.error)}. You can still type a model name.</span>
  else if (!offered.length) hint = 'The provider lists no models; type the model name.'
  else hint = `${offered.length} model${offered.length === 1 ? '' : 's'} offered by the provider; pick one or type any name.`
  return (
    // The listing's state stays under the field even when the server refuses the value: it is why a name is or is not offered.
    <Field label="Model" error={error}>{(id, aria) => (
      <>
        <input id={id} {...aria} aria-describedby={[`${id}-models`, aria['aria-describedby']].filter(Boolean).join(' ')} list={listId} value={value}
          autoComplete="off" spellCheck={false} placeholder="gpt-5.2, claude-…, echo" onChange={(e) => onChange(e.target.value)} />
        <datalist id={listId}>
          {offered.map((m) => <option key={m.id} value={m.id}>{m.display_name && m.display_name !== m.id ? m.display_name : undefined}</option>)}
        </datalist>
        <small className="hint" id={`${id}-models`} role="status">{hint}</small>
      </>
    )}</Field>
  )
}
