import { describe, expect, it } from 'vitest'
import { fileNameOf } from './download'

describe('the file name of a download', () => {
  it('reads the quoted name the export sends', () => {
    expect(fileNameOf('attachment; filename="my_project.tar"')).toBe('my_project.tar')
  })
  it('prefers the encoded filename*', () => {
    expect(fileNameOf(`attachment; filename="a.tar"; filename*=UTF-8''caf%C3%A9.tar`)).toBe('café.tar')
  })
  it('reads an unquoted name and unescapes a quoted one', () => {
    expect(fileNameOf('attachment; filename=plain.tar')).toBe('plain.tar')
    expect(fileNameOf('attachment; filename="say \\"hi\\".tar"')).toBe('say "hi".tar')
  })
  it('never returns a path', () => {
    expect(fileNameOf('attachment; filename="../../etc/passwd"')).toBe('passwd')
  })
  it('is undefined without a name', () => {
    expect(fileNameOf(null)).toBeUndefined()
    expect(fileNameOf('attachment')).toBeUndefined()
  })
})
