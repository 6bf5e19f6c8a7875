import { describe, expect, it } from 'vitest'
import { parseSlash, suggest } from './slash'

const flows = [{ id: 'w1', name: 'Build' }, { id: 'w2', name: 'build all' }, { id: 'w3', name: 'Review' }]
const both = ['workflow', 'plan'] as const

describe('suggest', () => {
  it('offers the commands while the first word is typed, and nothing for plain text', () => {
    expect(suggest('/', [...both], flows).map((s) => s.label)).toEqual(['/workflow', '/plan'])
    expect(suggest('/w', [...both], flows).map((s) => [s.label, s.completion])).toEqual([['/workflow', '/workflow ']])
    expect(suggest('/P', [...both], flows).map((s) => s.label)).toEqual(['/plan'])
    expect(suggest('/x', [...both], flows)).toEqual([])
    expect(suggest('hello /w', [...both], flows)).toEqual([])
    expect(suggest(' /w', [...both], flows)).toEqual([])
    expect(suggest('/w', ['plan'], flows)).toEqual([])
  })

  it('offers the workflows after "/workflow ", by name prefix whatever its case, until the brief starts', () => {
    expect(suggest('/workflow ', [...both], flows).map((s) => s.label)).toEqual(['Build', 'build all', 'Review'])
    expect(suggest('/workflow BU', [...both], flows).map((s) => [s.label, s.completion])).toEqual([['Build', '/workflow Build '], ['build all', '/workflow build all ']])
    expect(suggest('/workflow build ', [...both], flows).map((s) => s.label)).toEqual(['build all'])
    expect(suggest('/workflow Build fix the tests', [...both], flows)).toEqual([])
    expect(suggest('/workflow ', ['plan'], flows)).toEqual([])
  })
})

describe('parseSlash', () => {
  it('leaves messages and unknown commands alone', () => {
    expect(parseSlash('hello', [...both], flows)).toBeNull()
    expect(parseSlash('/usr/bin is a path', [...both], flows)).toBeNull()
    expect(parseSlash('/deploy now', [...both], flows)).toBeNull()
    expect(parseSlash('/workflow Build x', ['plan'], flows)).toBeNull()
  })

  it('starts the named workflow, whatever its case, with the rest as the brief; the longest name wins', () => {
    expect(parseSlash('/workflow build fix the login bug', [...both], flows)).toEqual({ kind: 'workflow', workflow: flows[0], brief: 'fix the login bug' })
    expect(parseSlash('/Workflow BUILD ALL  everything\nand more ', [...both], flows)).toEqual({ kind: 'workflow', workflow: flows[1], brief: 'everything\nand more' })
  })

  it('says what is missing: the name, a known name, the brief', () => {
    expect(parseSlash('/workflow', [...both], flows)).toEqual({ kind: 'error', message: 'Name a workflow: /workflow <name> <brief>.' })
    expect(parseSlash('/workflow deploy now', [...both], flows)).toEqual({ kind: 'error', message: 'No workflow is named "deploy". The workflows are: Build, build all, Review.' })
    expect(parseSlash('/workflow Buildings x', [...both], flows)).toMatchObject({ kind: 'error', message: expect.stringContaining('No workflow is named "Buildings"') })
    expect(parseSlash('/workflow x y', [...both], [])).toEqual({ kind: 'error', message: 'No workflow is named "x". None is defined yet: add one in Workflows.' })
    expect(parseSlash('/workflow review  ', [...both], flows)).toEqual({ kind: 'error', message: 'Write a brief after the name: /workflow Review <what it should do>.' })
  })

  it('reads /plan with or without a message', () => {
    expect(parseSlash('/plan', [...both], flows)).toEqual({ kind: 'plan', text: '' })
    expect(parseSlash('/plan  ship the release', [...both], flows)).toEqual({ kind: 'plan', text: 'ship the release' })
  })
})
