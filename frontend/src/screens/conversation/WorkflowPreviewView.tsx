import type { components } from '../../lib/apiTypes.gen'

type Preview = NonNullable<components['schemas']['WorkflowPreview']>

const OP_CLASS: Record<string, string> = { '+': 'patch-add', '-': 'patch-del' }

/**
 * What a save_workflow approval would store: the definition drawn as text
 * and, when it replaces a stored workflow, the change line by line — so a
 * person approves the workflow itself, not its JSON.
 */
export function WorkflowPreviewView({ preview }: { preview: Preview }) {
  const diff = preview.replaces && preview.diff?.length ? preview.diff : null
  return (
    <div className="workflow-preview">
      <div className="muted small">
        {diff ? 'This save replaces your workflow of that name. The change:' : 'This save creates the workflow:'}
      </div>
      <pre className="patch-view" role="region" tabIndex={0} aria-label={diff ? 'Workflow change' : 'Workflow definition'}>
        {diff
          ? diff.map((l, i) => (
            <span key={i} className={OP_CLASS[l.op] ?? ''}>{(l.op === '=' ? ' ' : l.op) + ' ' + l.text + '\n'}</span>
          ))
          : preview.definition}
      </pre>
    </div>
  )
}
