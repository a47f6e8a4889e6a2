import * as z from 'zod/mini'

// Pydantic's lax mode (its default, and vLLM's): an `int`, `float` or `bool` field also takes the JSON values that
// convert exactly (https://docs.pydantic.dev/latest/concepts/conversion_table/). The one place request fields are
// coerced: the chat request schema uses these for every scalar it types, nested ones included, so the field-by-field
// parse and the full parse give the same coerced request. A value of the right type returns after one `typeof`.

type Ctx = z.core.ParsePayload<unknown>

function refuse(ctx: Ctx, input: unknown, type: string, message: string): never {
  ctx.issues.push({ code: 'custom', message, input, params: { type } })
  return z.NEVER as never
}

// Python's `int(str)` as pydantic-core applies it: surrounding whitespace, a sign, digits with single underscores
// between them, and a fraction of zeros only ("5.0").
const INT_TEXT = /^\s*[+-]?\d+(?:_\d+)*(?:\.0*)?\s*$/
// A finite decimal float. Pydantic also reads "inf" and "nan"; they are refused here, since JSON cannot carry them on
// to an upstream (docs/reference-engine.md, "Deviations from vLLM").
const FLOAT_TEXT = /^\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\s*$/
const TRUE_TEXT = new Set(['1', 'on', 't', 'true', 'y', 'yes'])
const FALSE_TEXT = new Set(['0', 'off', 'f', 'false', 'n', 'no'])

function laxInt(input: unknown, ctx: Ctx): number {
  if (typeof input === 'number') {
    if (Number.isInteger(input)) return input
    if (Number.isFinite(input)) {
      return refuse(
        ctx,
        input,
        'int_from_float',
        'Input should be a valid integer, got a number with a fractional part',
      )
    }
    return refuse(ctx, input, 'finite_number', 'Input should be a finite number')
  }
  if (typeof input === 'string') {
    if (!INT_TEXT.test(input)) {
      return refuse(ctx, input, 'int_parsing', 'Input should be a valid integer, unable to parse string as an integer')
    }
    return Number(input.trim().replaceAll('_', '').replace(/\.0*$/, ''))
  }
  if (typeof input === 'boolean') return input ? 1 : 0
  return refuse(ctx, input, 'int_type', 'Input should be a valid integer')
}

function laxFloat(input: unknown, ctx: Ctx): number {
  if (typeof input === 'number') {
    // A JSON numeral beyond the double range (1e999) parses as Infinity, which JSON cannot carry on.
    if (Number.isFinite(input)) return input
    return refuse(ctx, input, 'float_type', 'Input should be a valid number')
  }
  if (typeof input === 'string') {
    if (!FLOAT_TEXT.test(input)) {
      return refuse(ctx, input, 'float_parsing', 'Input should be a valid number, unable to parse string as a number')
    }
    const value = Number(input.trim())
    if (Number.isFinite(value)) return value
    return refuse(ctx, input, 'float_parsing', 'Input should be a valid number, unable to parse string as a number')
  }
  if (typeof input === 'boolean') return input ? 1 : 0
  return refuse(ctx, input, 'float_type', 'Input should be a valid number')
}

function laxBool(input: unknown, ctx: Ctx): boolean {
  if (typeof input === 'boolean') return input
  if (typeof input === 'number') {
    if (input === 0 || input === 1) return input === 1
  } else if (typeof input === 'string') {
    const text = input.toLowerCase()
    if (TRUE_TEXT.has(text)) return true
    if (FALSE_TEXT.has(text)) return false
  } else {
    return refuse(ctx, input, 'bool_type', 'Input should be a valid boolean')
  }
  return refuse(ctx, input, 'bool_parsing', 'Input should be a valid boolean, unable to interpret input')
}

// A transform has no JSON Schema of its own; the registry gives the OpenAPI document the inputs each one takes.
function documented<T extends z.core.$ZodType>(schema: T, type: string[]): T {
  z.globalRegistry.add(schema, { type } as never)
  return schema
}

/** A pydantic `int` in lax mode: integers, integral floats, integer strings and booleans, as a number. */
export const LaxIntSchema = documented(z.transform(laxInt), ['integer', 'string', 'boolean'])

/** A pydantic `float` in lax mode: finite numbers, numeric strings and booleans, as a number. */
export const LaxNumberSchema = documented(z.transform(laxFloat), ['number', 'string', 'boolean'])

/** A pydantic `bool` in lax mode: booleans, 0 and 1, and `"true"/"false"/"yes"/"no"/"on"/"off"/"t"/"f"/"y"/"n"/"1"/"0"`. */
export const LaxBoolSchema = documented(z.transform(laxBool), ['boolean', 'integer', 'string'])
