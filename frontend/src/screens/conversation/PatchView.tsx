/** The patch text of an apply_patch call, from its arguments. */
function patchText(args?: string): string | null {
  if (!args) return null
  try {
    const v = JSON.parse(args)
    return typeof v?.input === 'string' ? v.input : null
  } catch {
    return null
  }
}

function lineClass(line: string): string {
  if (line.startsWith('***')) return 'patch-file'
  if (line.startsWith('@@')) return 'patch-hunk'
  if (line.startsWith('+')) return 'patch-add'
  if (line.startsWith('-')) return 'patch-del'
  return ''
}

/** apply_patch's patch as a diff: files, hunks, added and removed lines. */
export function PatchView({ args }: { args?: string }) {
  const text = patchText(args)
  if (!text) return null
  return (
    <pre className="patch-view" role="region" tabIndex={0} aria-label="Patch">
      {text.split('\n').map((line, i) => (
        <span key={i} className={lineClass(line)}>{line + '\n'}</span>
      ))}
    </pre>
  )
}
