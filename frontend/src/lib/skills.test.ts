// The editor's frontmatter preview: what a SKILL.md says its name and
// description are, or what the server would refuse it for.
import { describe, expect, it } from 'vitest'
import { previewSkill, skillOrigin } from './skills'

describe('previewSkill', () => {
  it('reads name and description, quoted or not, with comments and other keys around them', () => {
    expect(previewSkill('---\nname: release\ndescription: How we cut a release\n---\n# Steps\n')).toEqual({ name: 'release', description: 'How we cut a release', problems: [] })
    expect(previewSkill(`\uFEFF---\r\nname: "house-style"  \r\n# a comment\r\nlicense: MIT\r\ndescription: 'It''s our prose'\r\n...\r\nbody`)).toEqual({ name: 'house-style', description: "It's our prose", problems: [] })
    expect(previewSkill('---\nname: a.b_c-1 # trailing\ndescription: x\n---\n').name).toBe('a.b_c-1')
  })

  it('joins a folded or literal block description', () => {
    expect(previewSkill('---\nname: r\ndescription: >\n  How we cut\n  a release\nmetadata:\n  k: v\n---\n').description).toBe('How we cut a release')
    expect(previewSkill('---\nname: r\ndescription: |\n  line one\n  line two\n---\n').description).toBe('line one\nline two')
  })

  it('says what is missing or wrong, as the server words it', () => {
    expect(previewSkill('# no frontmatter').problems).toEqual([expect.stringMatching(/^has no frontmatter/)])
    expect(previewSkill('---\nname: x\n').problems).toEqual([expect.stringMatching(/no closing ---/)])
    expect(previewSkill('---\n# only a comment\n---\n').problems).toEqual([expect.stringMatching(/^has an empty frontmatter/)])
    expect(previewSkill('---\nname: release\n---\n').problems).toEqual(['frontmatter has no description:'])
    expect(previewSkill('---\nname:\ndescription: d\n---\n').problems).toEqual(['frontmatter name: is empty'])
    expect(previewSkill('---\nname: my skill\ndescription: d\n---\n').problems).toEqual([expect.stringMatching(/^frontmatter name "my skill" may hold only letters, digits/)])
    expect(previewSkill(`---\nname: ${'n'.repeat(65)}\ndescription: d\n---\n`).problems).toEqual([expect.stringMatching(/longer than 64/)])
    expect(previewSkill(`---\nname: big\ndescription: d\n---\n${'x'.repeat(256 << 10)}`).problems).toEqual([expect.stringMatching(/^is \d+ bytes: a skill holds at most 262144/)])
  })
})

describe('skillOrigin', () => {
  it('names the repository and commit of an import, says when it was edited here, and nothing for one authored here', () => {
    expect(skillOrigin({ source_repo: 'https://github.com/acme/tools', source_commit: '1a2b3c4d5e6f', source_path: 'skills/release/SKILL.md', detached: false }))
      .toBe('imported from acme/tools @ 1a2b3c4')
    expect(skillOrigin({ source_repo: 'https://github.com/acme/tools', source_commit: '1a2b3c4d5e6f', detached: true })).toBe('imported from acme/tools, edited here (detached)')
    expect(skillOrigin({ detached: false })).toBe('')
  })
})
