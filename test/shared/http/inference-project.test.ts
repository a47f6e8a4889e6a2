import { describe, expect, it } from 'vitest'
import { projectHeader, tracedProjectFits } from '#shared/http/inference-project'

// A completion's trace index key `CALLTRACE#<project id>#<36-character trace id>` within DynamoDB's 2,048 bytes.
const LONGEST = 2048 - 'CALLTRACE#'.length - 1 - 36

describe('projectHeader', () => {
  it.each([
    ['a blank Compat-Project', '', 'e/p', { value: 'e/p', param: 'OpenAI-Project' }],
    ['a Compat-Project of spaces', '  ', ' e/p ', { value: 'e/p', param: 'OpenAI-Project' }],
    ['both headers', 'e/c', 'e/o', { value: 'e/c', param: 'Compat-Project' }],
    ['both blank', '', ' ', undefined],
    ['neither', undefined, undefined, undefined],
  ])('reads %s', (_, compat, openai, expected) => {
    // Act
    const header = projectHeader(compat, openai)

    // Assess
    expect(header).toEqual(expected)
  })
})

describe('tracedProjectFits', () => {
  it('accepts a project id of the longest byte length and refuses one byte more, counting UTF-8 bytes', () => {
    // Prepare: `é` is one character and two bytes
    const ascii = 'e/'.padEnd(LONGEST, 'x')
    const accented = `e/${'é'.repeat((LONGEST - 3) / 2)}x`

    // Act
    const fits = [ascii, `${ascii}x`, accented, `${accented}x`].map(tracedProjectFits)

    // Assess
    expect(Buffer.byteLength(accented)).toBe(LONGEST)
    expect(fits).toEqual([true, false, true, false])
  })
})
