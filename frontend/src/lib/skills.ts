// Skills as the panel, the agent form and the timeline read them, and the
// client-side reading of a SKILL.md's frontmatter for the editor's preview.
// The preview is only a preview: the server parses the document at save
// time (real YAML) and its verdict is the one shown at the field.
import { useQuery } from '@tanstack/react-query'
import { api, ok, type Skill } from './api'
import { keys } from './queries'

export const useSkills = () => useQuery({ queryKey: keys.skills, queryFn: () => ok(api.GET('/api/v1/skills')) })

/** The server's bounds (core/skills): a document's size, a name's and a description's length. */
export const MAX_DOCUMENT = 256 << 10
export const MAX_NAME = 64
export const MAX_DESCRIPTION = 1024
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/

/** What the preview reads from a SKILL.md: the name and description, or what is wrong (problems, in order). */
export interface SkillPreview { name: string; description: string; problems: string[] }

/** A new skill's starting document. */
export const SKILL_TEMPLATE = '---\nname: \ndescription: \n---\n# Instructions\n\n'

/**
 * Reads the frontmatter of a SKILL.md as the server would, closely enough
 * for a preview: a "---" first line, top-level `key: value` lines (quoted
 * values unquoted, `|` / `>` blocks joined) up to the closing "---" or
 * "...". Nested YAML is skipped, not judged.
 */
export function previewSkill(content: string): SkillPreview {
  const problems: string[] = []
  const bytes = new TextEncoder().encode(content).length
  if (bytes > MAX_DOCUMENT) problems.push(`is ${bytes} bytes: a skill holds at most ${MAX_DOCUMENT} (256 KiB)`)
  const lines = content.replace(/^\uFEFF/, '').split('\n').map((l) => l.replace(/\r$/, ''))
  if (lines.length < 2 || lines[0].trimEnd() !== '---') {
    return { name: '', description: '', problems: [...problems, 'has no frontmatter: a SKILL.md starts with a --- line, name: and description:, and a closing --- line'] }
  }
  const end = lines.findIndex((l, i) => i > 0 && (l.trimEnd() === '---' || l.trimEnd() === '...'))
  if (end < 0) return { name: '', description: '', problems: [...problems, 'has no closing --- line after its frontmatter'] }
  const fields = readFields(lines.slice(1, end))
  const name = fields.get('name')?.trim() ?? ''
  const description = fields.get('description')?.trim() ?? ''
  if (fields.size === 0) problems.push('has an empty frontmatter: it needs name: and description:')
  else {
    if (!fields.has('name')) problems.push('frontmatter has no name:')
    else if (!name) problems.push('frontmatter name: is empty')
    else if (name.length > MAX_NAME) problems.push(`frontmatter name is longer than ${MAX_NAME} characters`)
    else if (!NAME.test(name)) problems.push(`frontmatter name "${name}" may hold only letters, digits, '.', '_' and '-' (no spaces, colons or slashes), starting with a letter or digit`)
    if (!fields.has('description')) problems.push('frontmatter has no description:')
    else if (!description) problems.push('frontmatter description: is empty')
    else if ([...description].length > MAX_DESCRIPTION) problems.push(`frontmatter description is longer than ${MAX_DESCRIPTION} characters`)
  }
  return { name, description, problems }
}

/** Top-level `key: value` pairs of a frontmatter block; block scalars (| and >) read their indented lines. */
function readFields(lines: string[]): Map<string, string> {
  const out = new Map<string, string>()
  for (let i = 0; i < lines.length; i++) {
    const m = /^([A-Za-z_][\w-]*)\s*:(?:\s+(.*))?$/.exec(lines[i].trimEnd())
    if (!m) continue
    let value = stripComment(m[2] ?? '')
    if (/^[|>][+-]?$/.test(value)) {
      const block: string[] = []
      while (i + 1 < lines.length && (/^\s/.test(lines[i + 1]) || lines[i + 1].trim() === '')) block.push(lines[++i].trim())
      value = block.join(value.startsWith('|') ? '\n' : ' ').trim()
    } else {
      value = unquote(value)
    }
    out.set(m[1], value)
  }
  return out
}

function stripComment(v: string): string {
  if (/^["']/.test(v)) return v.trim()
  const i = v.search(/\s#/)
  return (i >= 0 ? v.slice(0, i) : v).trim()
}

function unquote(v: string): string {
  if (v.length >= 2 && v.startsWith('"') && v.endsWith('"')) return v.slice(1, -1).replace(/\\"/g, '"').replace(/\\\\/g, '\\')
  if (v.length >= 2 && v.startsWith("'") && v.endsWith("'")) return v.slice(1, -1).replace(/''/g, "'")
  return v
}

/** Where a skill came from, in a line: "imported from acme/tools @ 1a2b3c4", "… edited here (detached)", or "" for one authored here. */
export function skillOrigin(k: Pick<Skill, 'source_repo' | 'source_commit' | 'source_path' | 'detached'>): string {
  if (!k.source_repo) return ''
  const repo = k.source_repo.replace(/^https:\/\/github\.com\//, '')
  const at = k.source_commit ? ` @ ${k.source_commit.slice(0, 7)}` : ''
  return k.detached ? `imported from ${repo}, edited here (detached)` : `imported from ${repo}${at}`
}

/** An agent's skills selection, tri-state: every skill it may use (null), none ([]), or these ids. */
export type SkillsChoice = 'all' | 'none' | 'some'
export const choiceOf = (skills: string[] | null | undefined): SkillsChoice => (skills == null ? 'all' : skills.length ? 'some' : 'none')
