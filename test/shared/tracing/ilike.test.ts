import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { ilikeMatcher } from '#shared/tracing/ilike'

// The single expression the matcher replaces (one `.*` per `%`): the reference for what matches, on inputs too short
// for its backtracking to matter.
function oneExpression(pattern: string): RegExp {
  const body = [...pattern]
    .map((ch) => (ch === '%' ? '.*' : ch === '_' ? '.' : ch.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('')
  return new RegExp(body, 'is')
}

describe("ILIKE '%pattern%'", () => {
  it('matches substrings case-insensitively, `%` as any run and `_` as one character', () => {
    // Prepare
    const cases: [string, string, boolean][] = [
      ['REVIEW', 'Code review queue', true],
      ['a_r', 'the AHR queue', true],
      ['a_r', 'ar', false],
      ['re%ew', 'Code review', true],
      ['re%ew', 'ewre', false],
      ['%%', 'anything', true],
      ['', '', true],
      ['50%_off', '50% off', true],
      ['x.y', 'xzy', false],
      ['(a+)+$', 'my (a+)+$ queue', true],
    ]

    // Act
    const results = cases.map(([pattern, text]) => ilikeMatcher(pattern)(text))

    // Assess
    expect(results).toEqual(cases.map(([, , expected]) => expected))
  })

  it('agrees with the single expression on short patterns and names', () => {
    const char = fc.constantFrom('a', 'A', 'b', '%', '_', '.', 'é', 'É')
    fc.assert(
      fc.property(
        fc.string({ unit: char, maxLength: 8 }),
        fc.string({ unit: char, maxLength: 12 }),
        (pattern, text) => {
          // Act
          const matched = ilikeMatcher(pattern)(text)

          // Assess
          expect(matched).toBe(oneExpression(pattern).test(text))
        },
      ),
    )
  })

  it('answers a pattern that makes the single expression backtrack for hours at once', () => {
    // Prepare: 14 characters against 80 `a`s (the single expression took 35 s at 12, and blocked the server)
    const name = 'a'.repeat(80)
    const pattern = `${'%a'.repeat(6)}%b`

    // Act
    const matched = ilikeMatcher(pattern)(name)

    // Assess
    expect(matched).toBe(false)
    expect(ilikeMatcher(`${'%a'.repeat(6)}%`)(name)).toBe(true)
  })
})
