/**
 * The `terminal` renderer (exec_command): the command's output in a
 * monospace block — streamed (run.tool_progress) while it runs, then the
 * stored result, which replaces it.
 */
export function TerminalOutput({ output, progress }: { output?: string; progress?: string }) {
  const running = output === undefined
  const text = running ? progress ?? '' : output
  return (
    <pre className={`terminal-output${running ? ' running' : ''}`} role="region" tabIndex={0} aria-label={running ? 'Output so far' : 'Command output'} aria-busy={running}>
      {text}
      {running && <span className="terminal-cursor" aria-hidden>▍</span>}
    </pre>
  )
}
