import { describe, expect, it } from 'vitest'
import * as z from 'zod/mini'
import { toValidationIssues } from '#shared/errors/validation-issues'
import { DatetimeSchema } from '#shared/schemas/datetime'

const Body = z.object({ at: DatetimeSchema, until: z.optional(z.nullable(DatetimeSchema)) })

function issues(body: unknown) {
  const result = z.safeParse(Body, body, { reportInput: true })
  return result.success ? [] : toValidationIssues(result.error.issues)
}

describe('DatetimeSchema', () => {
  // Expected issues are pydantic 2.13.4's for `at: datetime; until: datetime | None = None` (model_validate_json).
  it("reports an impossible date and a non-datetime with pydantic's type, msg and ctx", () => {
    // Act
    const found = issues({ at: true, until: '2024-02-30' })

    // Assess
    expect(found).toEqual([
      { type: 'datetime_type', loc: ['body', 'at'], msg: 'Input should be a valid datetime', input: true },
      {
        type: 'datetime_from_date_parsing',
        loc: ['body', 'until'],
        msg: 'Input should be a valid datetime or date, day value is outside expected range',
        input: '2024-02-30',
        ctx: { error: 'day value is outside expected range' },
      },
    ])
  })

  it('reports garbage, year 0 and null the way pydantic does', () => {
    expect(issues({ at: 'yesterday' })).toEqual([
      {
        type: 'datetime_from_date_parsing',
        loc: ['body', 'at'],
        msg: 'Input should be a valid datetime or date, input is too short',
        input: 'yesterday',
        ctx: { error: 'input is too short' },
      },
    ])
    expect(issues({ at: '0000-06-01' })).toEqual([
      {
        type: 'datetime_parsing',
        loc: ['body', 'at'],
        msg: 'Input should be a valid datetime, year 0 is out of range',
        input: '0000-06-01',
        ctx: { error: 'year 0 is out of range' },
      },
    ])
    expect(issues({ at: null })).toEqual([
      { type: 'datetime_type', loc: ['body', 'at'], msg: 'Input should be a valid datetime', input: null },
    ])
  })

  it('keeps a missing datetime as missing and accepts date-only and numeric strings unchanged', () => {
    expect(issues({})).toEqual([{ type: 'missing', loc: ['body', 'at'], msg: 'Field required' }])
    expect(z.parse(Body, { at: '2024-01-01', until: '1700000000.5' })).toEqual({
      at: '2024-01-01',
      until: '1700000000.5',
    })
  })
})
