// The composer's slash commands: what typing "/" offers (the commands,
// then after "/workflow " the workflows by name), and what a sent text
// starting with one means. Pure, so it is unit-tested.

export type CommandName = 'workflow' | 'plan'

export interface SlashCommand { name: CommandName; usage: string; about: string }

export const COMMANDS: Record<CommandName, SlashCommand> = {
  workflow: { name: 'workflow', usage: '/workflow <name> <brief>', about: 'Start a workflow in this conversation, led by the brief' },
  plan: { name: 'plan', usage: '/plan [message]', about: 'Turn plan mode on: the agent plans before it acts' },
}

/** One line of the popup: what it shows, and the text choosing it leaves in the composer. */
export interface Suggestion { id: string; label: string; detail: string; completion: string }

/** Named things the composer may start: the workflows the caller can see. */
export interface Named { id: string; name: string }

const MAX = 8
const lower = (s: string) => s.toLowerCase()

/**
 * What the popup offers for the composer's text: the commands while the
 * first word is being typed, the workflows by name (case-insensitive
 * prefix) after "/workflow ", nothing once the text is past that.
 */
export function suggest(text: string, commands: CommandName[], workflows: Named[]): Suggestion[] {
  const head = /^\/(\S*)$/.exec(text)
  if (head) {
    return commands
      .filter((c) => c.startsWith(lower(head[1])))
      .map((c) => ({ id: `cmd-${c}`, label: `/${c}`, detail: COMMANDS[c].about, completion: `/${c} ` }))
  }
  const wf = /^\/workflow\s+([\s\S]*)$/i.exec(text)
  if (wf && commands.includes('workflow')) {
    const typed = lower(wf[1])
    return workflows
      .filter((w) => lower(w.name).startsWith(typed))
      .slice(0, MAX)
      .map((w) => ({ id: `wf-${w.id}`, label: w.name, detail: 'workflow', completion: `/workflow ${w.name} ` }))
  }
  return []
}

export type Parsed<W extends Named> =
  | { kind: 'workflow'; workflow: W; brief: string }
  | { kind: 'plan'; text: string }
  | { kind: 'error'; message: string }

/**
 * What a text sent from the composer asks for: null when it is a message
 * (it does not start with one of commands), an error to show when a
 * command is incomplete. A workflow is matched by the longest name,
 * whatever its case, that the text after /workflow starts with — so a
 * name may hold spaces — and the rest is the brief.
 */
export function parseSlash<W extends Named>(text: string, commands: CommandName[], workflows: W[]): Parsed<W> | null {
  const m = /^\/(\w+)(?:\s+([\s\S]*))?$/.exec(text.trim())
  if (!m) return null
  const name = lower(m[1]) as CommandName
  if (!commands.includes(name)) return null
  const rest = (m[2] ?? '').trim()
  if (name === 'plan') return { kind: 'plan', text: rest }
  if (!rest) return { kind: 'error', message: `Name a workflow: ${COMMANDS.workflow.usage}.` }
  let found: W | undefined
  for (const w of workflows) {
    const n = w.name.trim()
    if (!n || !lower(rest).startsWith(lower(n))) continue
    if (rest.length > n.length && !/\s/.test(rest[n.length])) continue
    if (!found || n.length > found.name.trim().length) found = w
  }
  if (!found) {
    const word = rest.split(/\s+/)[0]
    const known = workflows.map((w) => w.name)
    return {
      kind: 'error',
      message: `No workflow is named "${word}". ${known.length ? `The workflows are: ${known.join(', ')}.` : 'None is defined yet: add one in Workflows.'}`,
    }
  }
  const brief = rest.slice(found.name.trim().length).trim()
  if (!brief) return { kind: 'error', message: `Write a brief after the name: /workflow ${found.name} <what it should do>.` }
  return { kind: 'workflow', workflow: found, brief }
}
