import { describe, expect, it } from 'vitest'
import * as z from 'zod/mini'
import { toValidationIssues } from '#shared/errors/validation-issues'

describe('toValidationIssues', () => {
  it("prints a regex check's bare pattern, as pydantic does, without the literal's slashes and flags (QA)", () => {
    // Prepare
    const Schema = z.object({ name: z.string().check(z.regex(/^a\/b[0-9]{2}$/i)) })

    // Act
    const result = z.safeParse(Schema, { name: 'a b' }, { reportInput: true })

    // Assess
    expect(result.success).toBe(false)
    expect(toValidationIssues(result.error?.issues ?? [])).toEqual([
      {
        type: 'string_pattern_mismatch',
        loc: ['body', 'name'],
        msg: "String should match pattern '^a\\/b[0-9]{2}$'",
        input: 'a b',
      },
    ])
  })
})
