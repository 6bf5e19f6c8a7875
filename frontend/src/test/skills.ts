// Skills as the API reads them, for the component tests of the Skills tab,
// the agent form's picker and the read_skill card.
import type { Skill } from '../lib/api'
import { member } from './mcp'

export const doc = (name: string, description: string, body = '# Steps\n\n1. Tag it\n') => `---\nname: ${name}\ndescription: ${description}\n---\n${body}`

/** A skill member authored here. */
export function skill(over: Partial<Skill> = {}): Skill {
  const name = over.name ?? 'release'
  const description = over.description ?? 'How we cut a release'
  return {
    id: 'k1', scope: 'private', owner_id: member.id, name, description, model_name: name, content: doc(name, description),
    detached: false, created_at: '', updated_at: '', ...over,
  }
}

/** One imported from acme/tools. */
export const imported = (over: Partial<Skill> = {}) =>
  skill({
    id: 'k2', name: 'house-style', description: 'Our prose rules', model_name: 'acme/tools:house-style', content: doc('house-style', 'Our prose rules'),
    source_repo: 'https://github.com/acme/tools', repo_label: 'acme/tools', source_path: 'style/SKILL.md', source_commit: 'c0ffee1234567', ...over,
  })
