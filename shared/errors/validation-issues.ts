import * as z from 'zod/mini'
import type { ValidationIssue } from '#shared/errors/http-error'
import { LaxIntSchema } from '#shared/schemas/pydantic-lax'

type ZodIssue = z.core.$ZodIssue

const INT_TYPE: [string, string] = ['int_type', 'Input should be a valid integer']

// zod reports an integer field given a non-number exactly as a number field (`expected: "number"`), and the finished
// issue no longer names its schema. The error map still sees the schema: it gives such issues pydantic's integer
// message, which `describe` recognises. Installed once, for every parse, when this module loads (before any request).
z.config({
  customError: (issue) => {
    const format = (issue.inst?._zod.def as { format?: unknown } | undefined)?.format
    return issue.code === 'invalid_type' && typeof format === 'string' && format.includes('int')
      ? INT_TYPE[1]
      : undefined
  },
})

// Integer fields take JSON integers only. For anything else pydantic's lax `int` says why (`int_parsing` for "x",
// `int_from_float` for 1.5, `finite_number`), and strict `int`'s `int_type` covers what lax mode would have converted
// ("5", true) (pydantic-core src/errors/types.rs).
function integerIssue(input: unknown): [string, string] {
  const lax = z.safeParse(LaxIntSchema, input)
  if (lax.success) return INT_TYPE
  const refusal = lax.error.issues[0] as (ZodIssue & { params?: { type?: unknown } }) | undefined
  return typeof refusal?.params?.type === 'string' ? [refusal.params.type, refusal.message] : INT_TYPE
}

const TYPE_NAMES: Record<string, [string, string]> = {
  string: ['string_type', 'Input should be a valid string'],
  number: ['float_type', 'Input should be a valid number'],
  int: ['int_type', 'Input should be a valid integer'],
  boolean: ['bool_type', 'Input should be a valid boolean'],
  object: ['dict_type', 'Input should be a valid dictionary'],
  record: ['dict_type', 'Input should be a valid dictionary'],
  map: ['dict_type', 'Input should be a valid dictionary'],
  array: ['list_type', 'Input should be a valid list'],
  tuple: ['list_type', 'Input should be a valid list'],
  null: ['none_required', 'Input should be None'],
  date: ['datetime_type', 'Input should be a valid datetime'],
}

function quote(value: unknown): string {
  return typeof value === 'string' ? `'${value}'` : JSON.stringify(value)
}

// zod keeps a regex check's pattern as `RegExp#toString()`, `/<source>/<flags>`; pydantic prints the bare pattern.
function patternSource(pattern: string | undefined): string {
  if (pattern === undefined) return ''
  const end = pattern.lastIndexOf('/')
  return pattern.startsWith('/') && end > 0 ? pattern.slice(1, end) : pattern
}

function lengthIssue(issue: ZodIssue & { code: 'too_small' | 'too_big' }): [string, string] {
  const small = issue.code === 'too_small'
  const bound = Number(small ? (issue as { minimum: unknown }).minimum : (issue as { maximum: unknown }).maximum)
  switch (issue.origin) {
    case 'string':
      return small
        ? ['string_too_short', `String should have at least ${bound} character${bound === 1 ? '' : 's'}`]
        : ['string_too_long', `String should have at most ${bound} character${bound === 1 ? '' : 's'}`]
    case 'array':
    case 'set': {
      const actual = Array.isArray(issue.input) ? issue.input.length : undefined
      const tail = actual === undefined ? '' : ` after validation, not ${actual}`
      return small
        ? ['too_short', `List should have at least ${bound} item${bound === 1 ? '' : 's'}${tail}`]
        : ['too_long', `List should have at most ${bound} item${bound === 1 ? '' : 's'}${tail}`]
    }
    default: {
      const inclusive = issue.inclusive !== false
      if (small) {
        return inclusive
          ? ['greater_than_equal', `Input should be greater than or equal to ${bound}`]
          : ['greater_than', `Input should be greater than ${bound}`]
      }
      return inclusive
        ? ['less_than_equal', `Input should be less than or equal to ${bound}`]
        : ['less_than', `Input should be less than ${bound}`]
    }
  }
}

function describe(issue: ZodIssue): [string, string] {
  switch (issue.code) {
    case 'invalid_type':
      if (issue.input === undefined && !('received' in issue)) return ['missing', 'Field required']
      if (issue.expected === 'int' || issue.message === INT_TYPE[1]) return integerIssue(issue.input)
      return TYPE_NAMES[issue.expected] ?? [`${issue.expected}_type`, `Input should be a valid ${issue.expected}`]
    case 'too_small':
    case 'too_big':
      return lengthIssue(issue)
    case 'invalid_value': {
      // A JSON body holds no undefined value: no input is a missing key (a `direction` left out of `sort_by`).
      if (issue.input === undefined) return ['missing', 'Field required']
      const values = issue.values.map(quote)
      const list = values.length <= 1 ? (values[0] ?? '') : `${values.slice(0, -1).join(', ')} or ${values.at(-1)}`
      return ['literal_error', `Input should be ${list}`]
    }
    case 'invalid_format':
      if (issue.format === 'datetime') return ['datetime_from_date_parsing', 'Input should be a valid datetime']
      if (issue.format === 'regex') {
        return ['string_pattern_mismatch', `String should match pattern '${patternSource(issue.pattern)}'`]
      }
      return ['value_error', `Value error, invalid ${issue.format}`]
    case 'not_multiple_of':
      return ['multiple_of', `Input should be a multiple of ${issue.divisor}`]
    case 'unrecognized_keys':
      return ['extra_forbidden', 'Extra inputs are not permitted']
    case 'custom':
      // A check that reproduces a pydantic error names its type in `params` and gives pydantic's message.
      if (typeof issue.params?.type === 'string') return [issue.params.type, issue.message]
      return ['value_error', `Value error, ${issue.message}`]
    default:
      return ['value_error', issue.message]
  }
}

/** Converts zod issues into pydantic-style issues (`type`, `loc`, `msg`, `input`), prefixing each location. */
export function toValidationIssues(
  issues: readonly ZodIssue[],
  prefix: (string | number)[] = ['body'],
): ValidationIssue[] {
  const out: ValidationIssue[] = []
  for (const issue of issues) {
    // A failed union reports the alternatives' own errors; keep the most specific branch's issues: the fewest, and
    // among as few the deepest (the branch that got furthest, e.g. `pop.index` rather than a missing `append`).
    if (issue.code === 'invalid_union' && issue.errors.length > 0) {
      const depth = (branch: readonly { path: readonly PropertyKey[] }[]) =>
        Math.max(...branch.map((i) => i.path.length))
      const best = issue.errors.reduce((a, b) =>
        b.length < a.length || (b.length === a.length && depth(b) > depth(a)) ? b : a,
      )
      const nested = best.map((i) => ({ ...i, path: [...issue.path, ...i.path] }))
      out.push(...toValidationIssues(nested as ZodIssue[], prefix))
      continue
    }
    const [type, msg] = describe(issue)
    const loc = [...prefix, ...issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p))]
    const entry: ValidationIssue = { type, loc, msg }
    if (issue.input !== undefined) entry.input = issue.input
    const ctx = issue.code === 'custom' ? issue.params?.ctx : undefined
    if (typeof ctx === 'object' && ctx !== null) entry.ctx = ctx as Record<string, unknown>
    out.push(entry)
  }
  return out
}
