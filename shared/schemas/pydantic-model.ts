import * as z from 'zod/mini'
import { LaxBoolSchema, LaxIntSchema } from '#shared/schemas/pydantic-lax'
import { pyRepr } from '#shared/tracing/digest'
import { PyFloat, PyInt } from '#shared/tracing/json-exact'
import { pyFloat, pyNumber } from '#shared/tracing/py-number'

// Pydantic models (v2, lax mode) as zod schemas, for the server-side class models of docs/tracing.md §8.2: each field
// type is a zod transform that reports pydantic's error `type` and message, and `pyModel` validates a dict field by
// field in declaration order (unknown keys ignored, defaults filled) and dumps it as Weave's `dump_object` does.

type Ctx = z.core.ParsePayload<unknown>
type Json = Record<string, unknown>

/** One pydantic error: location, `type`, message and the offending input. */
export type PydanticError = { loc: (string | number)[]; type: string; msg: string; input: unknown }

const isDict = (v: unknown): v is Json =>
  typeof v === 'object' &&
  v !== null &&
  !Array.isArray(v) &&
  [Object.prototype, null].includes(Object.getPrototypeOf(v))

function refuse(ctx: Ctx, input: unknown, type: string, message: string, path: (string | number)[] = []): never {
  ctx.issues.push({ code: 'custom', message, input, path, params: { type, input } })
  return z.NEVER as never
}

// Runs a field schema on one value and re-reports its issues under `prefix`; undefined when it failed.
function runField(schema: z.core.$ZodType, value: unknown, ctx: Ctx, prefix: (string | number)[]) {
  const r = z.safeParse(schema, value, { reportInput: true })
  if (r.success) return { ok: true as const, value: r.data }
  for (const issue of r.error.issues) {
    const params = (issue as { params?: { type?: string; input?: unknown } }).params
    const input = params !== undefined && 'input' in params ? params.input : (issue as { input?: unknown }).input
    refuseAt(ctx, [...prefix, ...(issue.path as (string | number)[])], params?.type ?? issue.code, issue.message, input)
  }
  return { ok: false as const }
}

function refuseAt(ctx: Ctx, path: (string | number)[], type: string, message: string, input: unknown): void {
  ctx.issues.push({ code: 'custom', message, input, path, params: { type, input } })
}

// The pydantic error type a lax schema reported.
const issueType = (issue: z.core.$ZodIssue | undefined, fallback: string): string =>
  (issue as { params?: { type?: string } } | undefined)?.params?.type ?? fallback

// Whole floats parsed exactly (`2.0`) are numbers to pydantic's int and bool fields.
const unwrapNumber = (v: unknown) => (v instanceof PyFloat ? v.value : v)

/** pydantic `str` (lax mode still refuses numbers and booleans). */
export const PyStrSchema = z.transform((v: unknown, ctx) =>
  typeof v === 'string' ? v : refuse(ctx, v, 'string_type', 'Input should be a valid string'),
)

/** pydantic `int` in lax mode; an integer beyond 2^53 keeps its digits. */
export const PyIntSchema = z.transform((v: unknown, ctx) => {
  if (v instanceof PyInt) return v
  const r = z.safeParse(LaxIntSchema, unwrapNumber(v))
  if (r.success) return r.data
  return refuse(ctx, v, issueType(r.error.issues[0], 'int_type'), r.error.issues[0]?.message ?? '')
})

/** pydantic `bool` in lax mode. */
export const PyBoolSchema = z.transform((v: unknown, ctx) => {
  const r = z.safeParse(LaxBoolSchema, unwrapNumber(v))
  if (r.success) return r.data
  return refuse(ctx, v, issueType(r.error.issues[0], 'bool_type'), r.error.issues[0]?.message ?? '')
})

/** `Any`: the value as sent. */
export const PyAnySchema = z.transform((v: unknown) => v)

/** `X | None`: null passes, anything else is validated as `X`. */
export function pyOptional(inner: z.core.$ZodType) {
  return z.transform((v: unknown, ctx) => {
    if (v === null) return null
    const r = runField(inner, v, ctx, [])
    return r.ok ? r.value : z.NEVER
  })
}

/** A `str` enum: one of `values`, pydantic's `enum` error otherwise. */
export function pyEnum(values: readonly string[]) {
  const expected = values
    .map(pyRepr)
    .join(', ')
    .replace(/, ([^,]*)$/, ' or $1')
  return z.transform((v: unknown, ctx) =>
    typeof v === 'string' && values.includes(v) ? v : refuse(ctx, v, 'enum', `Input should be ${expected}`),
  )
}

/** `list[X]`. */
export function pyList(item: z.core.$ZodType) {
  return z.transform((v: unknown, ctx) => {
    if (!Array.isArray(v)) return refuse(ctx, v, 'list_type', 'Input should be a valid list')
    const out: unknown[] = []
    let failed = false
    v.forEach((x, i) => {
      const r = runField(item, x, ctx, [i])
      if (r.ok) out.push(r.value)
      else failed = true
    })
    return failed ? z.NEVER : out
  })
}

/** `dict[str, X]`. */
export function pyDict(value: z.core.$ZodType) {
  return z.transform((v: unknown, ctx) => {
    if (!isDict(v)) return refuse(ctx, v, 'dict_type', 'Input should be a valid dictionary')
    const out: Json = {}
    let failed = false
    for (const [k, x] of Object.entries(v)) {
      const r = runField(value, x, ctx, [k])
      if (r.ok) out[k] = r.value
      else failed = true
    }
    return failed ? z.NEVER : out
  })
}

/** One field of a model: its type and, when it is optional, the default filled in for a missing key. */
export type PyField = { schema: z.core.$ZodType; default?: () => unknown }

/** A pydantic model: its class name, its bases (`mro()[1:-1]`) and its fields in declaration order. */
export type PyModelSpec = { name: string; bases: readonly string[]; fields: readonly (readonly [string, PyField])[] }

/** Validates a dict against `spec` (pydantic `model_validate`): the fields in declaration order, defaults filled. */
export function pyModelFields(spec: PyModelSpec, input: unknown, ctx: Ctx): Json | undefined {
  if (!isDict(input)) {
    refuse(ctx, input, 'model_type', `Input should be a valid dictionary or instance of ${spec.name}`)
    return undefined
  }
  const out: Json = {}
  let failed = false
  for (const [key, field] of spec.fields) {
    if (!Object.hasOwn(input, key) || input[key] === undefined) {
      if (field.default !== undefined) out[key] = field.default()
      else {
        refuseAt(ctx, [key], 'missing', 'Field required', input)
        failed = true
      }
      continue
    }
    const r = runField(field.schema, input[key], ctx, [key])
    if (r.ok) out[key] = r.value
    else failed = true
  }
  return failed ? undefined : out
}

/** Weave's `dump_object` of a validated model: `_type`, the fields, then `_class_name` and `_bases`. */
export function dumpModel(spec: PyModelSpec, fields: Json): Json {
  return { _type: spec.name, ...fields, _class_name: spec.name, _bases: [...spec.bases] }
}

/** A nested pydantic model field: validated, then dumped with its class annotations. */
export function pyModel(spec: PyModelSpec) {
  return z.transform((v: unknown, ctx) => {
    const fields = pyModelFields(spec, v, ctx)
    return fields === undefined ? z.NEVER : dumpModel(spec, fields)
  })
}

/** Validates `input` against `spec`: the dumped model, or the pydantic errors in field order. */
export function validateModel(spec: PyModelSpec, input: unknown): { val: Json } | { errors: PydanticError[] } {
  const schema = pyModel(spec)
  const r = z.safeParse(schema, input, { reportInput: true })
  if (r.success) return { val: r.data as Json }
  return {
    errors: r.error.issues.map((issue) => {
      const params = (issue as { params?: { type?: string; input?: unknown } }).params
      return {
        loc: issue.path as (string | number)[],
        type: params?.type ?? issue.code,
        msg: issue.message,
        input: params?.input,
      }
    }),
  }
}

/** Python's `repr` of a JSON value as parsed (dicts keep their key order). */
export function pyValueRepr(v: unknown): string {
  if (v === null || v === undefined) return 'None'
  if (v === true) return 'True'
  if (v === false) return 'False'
  if (typeof v === 'number') return pyNumber(v)
  if (typeof v === 'string') return pyRepr(v)
  if (v instanceof PyFloat) return pyFloat(v.value)
  if (v instanceof PyInt) return v.digits
  if (Array.isArray(v)) return `[${v.map(pyValueRepr).join(', ')}]`
  if (isDict(v))
    return `{${Object.entries(v)
      .map(([k, x]) => `${pyRepr(k)}: ${pyValueRepr(x)}`)
      .join(', ')}}`
  return pyRepr(String(v))
}

/** Python's type name of a JSON value as parsed. */
export function pyTypeName(v: unknown): string {
  if (v === null || v === undefined) return 'NoneType'
  if (typeof v === 'boolean') return 'bool'
  if (typeof v === 'number') return Number.isInteger(v) ? 'int' : 'float'
  if (v instanceof PyFloat) return 'float'
  if (v instanceof PyInt) return 'int'
  if (typeof v === 'string') return 'str'
  if (Array.isArray(v)) return 'list'
  return 'dict'
}

// pydantic-core shortens an input repr longer than 50 characters to its first and last 25 around "...".
function shortRepr(v: unknown): string {
  const text = pyValueRepr(v)
  return text.length > 50 ? `${text.slice(0, 25)}...${text.slice(-25)}` : text
}

/**
 * `str(ValidationError)` without pydantic's documentation-link line:
 * `N validation error(s) for Title`, then per error its dotted location and `  msg [type=…, input_value=…, input_type=…]`.
 */
export function formatValidationError(title: string, errors: readonly PydanticError[]): string {
  const head = `${errors.length} validation error${errors.length === 1 ? '' : 's'} for ${title}`
  const lines = errors.map((e) => {
    const detail = `  ${e.msg} [type=${e.type}, input_value=${shortRepr(e.input)}, input_type=${pyTypeName(e.input)}]`
    return e.loc.length === 0 ? detail : `${e.loc.join('.')}\n${detail}`
  })
  return [head, ...lines].join('\n')
}
