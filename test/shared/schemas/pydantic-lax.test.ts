import { describe, expect, it } from 'vitest'
import * as z from 'zod/mini'
import { toValidationIssues } from '#shared/errors/validation-issues'
import { LaxBoolSchema, LaxIntSchema, LaxNumberSchema } from '#shared/schemas/pydantic-lax'

// Pydantic v2's lax conversions (its conversion table), which vLLM's request models apply to JSON bodies.

function refusal(schema: z.core.$ZodType, input: unknown): [string, string] | undefined {
  const parsed = z.safeParse(schema, input)
  if (parsed.success) return undefined
  const [issue] = toValidationIssues(parsed.error.issues, ['body', 'field'])
  return [issue?.type ?? '', issue?.msg ?? '']
}

describe('LaxIntSchema', () => {
  it.each([
    [5, 5],
    [-3, -3],
    [5.0, 5],
    [1e20, 1e20],
    ['5', 5],
    [' -12 ', -12],
    ['+7', 7],
    ['1_000', 1000],
    ['5.0', 5],
    ['5.', 5],
    [true, 1],
    [false, 0],
  ])('reads %j as %j', (input, expected) => {
    expect(z.parse(LaxIntSchema, input)).toBe(expected)
  })

  it.each([
    [1.5, 'int_from_float', 'Input should be a valid integer, got a number with a fractional part'],
    [Number.POSITIVE_INFINITY, 'finite_number', 'Input should be a finite number'],
    ['5.5', 'int_parsing', 'Input should be a valid integer, unable to parse string as an integer'],
    ['five', 'int_parsing', 'Input should be a valid integer, unable to parse string as an integer'],
    ['1__0', 'int_parsing', 'Input should be a valid integer, unable to parse string as an integer'],
    ['', 'int_parsing', 'Input should be a valid integer, unable to parse string as an integer'],
    [null, 'int_type', 'Input should be a valid integer'],
    [[1], 'int_type', 'Input should be a valid integer'],
    [{}, 'int_type', 'Input should be a valid integer'],
  ])('refuses %j with pydantic type %s', (input, type, msg) => {
    expect(refusal(LaxIntSchema, input)).toEqual([type, msg])
  })
})

describe('LaxNumberSchema', () => {
  it.each([
    [0.5, 0.5],
    [2, 2],
    ['0.5', 0.5],
    [' 1e-3 ', 0.001],
    ['.5', 0.5],
    ['-2', -2],
    [true, 1],
    [false, 0],
  ])('reads %j as %j', (input, expected) => {
    expect(z.parse(LaxNumberSchema, input)).toBe(expected)
  })

  it.each([
    ['hot', 'float_parsing', 'Input should be a valid number, unable to parse string as a number'],
    ['inf', 'float_parsing', 'Input should be a valid number, unable to parse string as a number'],
    ['1e999', 'float_parsing', 'Input should be a valid number, unable to parse string as a number'],
    [Number.POSITIVE_INFINITY, 'float_type', 'Input should be a valid number'],
    [null, 'float_type', 'Input should be a valid number'],
    [[0.5], 'float_type', 'Input should be a valid number'],
  ])('refuses %j with pydantic type %s', (input, type, msg) => {
    expect(refusal(LaxNumberSchema, input)).toEqual([type, msg])
  })
})

describe('LaxBoolSchema', () => {
  it.each([
    [true, true],
    [false, false],
    [1, true],
    [0, false],
    ['true', true],
    ['True', true],
    ['YES', true],
    ['on', true],
    ['t', true],
    ['y', true],
    ['1', true],
    ['false', false],
    ['no', false],
    ['off', false],
    ['f', false],
    ['n', false],
    ['0', false],
  ])('reads %j as %j', (input, expected) => {
    expect(z.parse(LaxBoolSchema, input)).toBe(expected)
  })

  it.each([
    [2, 'bool_parsing', 'Input should be a valid boolean, unable to interpret input'],
    [0.5, 'bool_parsing', 'Input should be a valid boolean, unable to interpret input'],
    ['maybe', 'bool_parsing', 'Input should be a valid boolean, unable to interpret input'],
    ['', 'bool_parsing', 'Input should be a valid boolean, unable to interpret input'],
    [null, 'bool_type', 'Input should be a valid boolean'],
    [{}, 'bool_type', 'Input should be a valid boolean'],
  ])('refuses %j with pydantic type %s', (input, type, msg) => {
    expect(refusal(LaxBoolSchema, input)).toEqual([type, msg])
  })
})
