import { BadRequestError, RequestValidationError } from '#shared/errors/http-error'

/** A node of Weave's query expression language (contract §6), validated. */
export type Expr = { [op: string]: unknown }

const BINARY = ['$eq', '$gt', '$gte', '$lt', '$lte']
const CONVERT_TO = ['double', 'string', 'int', 'bool', 'exists']

function invalid(loc: (string | number)[], msg: string): never {
  throw new RequestValidationError([{ type: 'value_error', loc: ['body', ...loc], msg: `Value error, ${msg}` }])
}

function checkOperand(node: unknown, loc: (string | number)[]): void {
  if (typeof node !== 'object' || node === null || Array.isArray(node)) invalid(loc, 'operand must be an object')
  const keys = Object.keys(node)
  if (keys.length !== 1) invalid(loc, 'an operand has exactly one key')
  const [op] = keys as [string]
  const arg = (node as Expr)[op]
  const here = [...loc, op]
  if (op === '$literal') return
  if (op === '$getField') {
    if (typeof arg !== 'string') invalid(here, '$getField takes a string')
    return
  }
  if (op === '$convert') {
    const a = arg as { input?: unknown; to?: unknown }
    if (typeof a !== 'object' || a === null || !CONVERT_TO.includes(String(a.to))) invalid(here, 'invalid $convert')
    checkOperand(a.input, [...here, 'input'])
    return
  }
  if (op === '$size') {
    checkOperand(arg, here)
    return
  }
  checkOperation(node, loc)
}

function checkOperation(node: unknown, loc: (string | number)[]): void {
  if (typeof node !== 'object' || node === null || Array.isArray(node)) invalid(loc, 'operation must be an object')
  const keys = Object.keys(node)
  if (keys.length !== 1) invalid(loc, 'an operation has exactly one key')
  const [op] = keys as [string]
  const arg = (node as Expr)[op]
  const here = [...loc, op]
  if (op === '$and' || op === '$or') {
    if (!Array.isArray(arg) || arg.length === 0) invalid(here, `${op} takes a non-empty list`)
    for (const [i, a] of arg.entries()) checkOperand(a, [...here, i])
  } else if (op === '$not') {
    if (!Array.isArray(arg) || arg.length !== 1) invalid(here, '$not takes exactly one operand')
    checkOperand(arg[0], [...here, 0])
  } else if (BINARY.includes(op)) {
    if (!Array.isArray(arg) || arg.length !== 2) invalid(here, `${op} takes exactly two operands`)
    for (const [i, a] of arg.entries()) checkOperand(a, [...here, i])
  } else if (op === '$in') {
    if (!Array.isArray(arg) || arg.length !== 2 || !Array.isArray(arg[1]))
      invalid(here, '$in takes [operand, [operands]]')
    checkOperand(arg[0], [...here, 0])
    for (const [i, a] of (arg[1] as unknown[]).entries()) checkOperand(a, [...here, 1, i])
  } else if (op === '$contains' || op === '$containsToken') {
    const a = arg as { input?: unknown; substr?: unknown; case_insensitive?: unknown }
    if (typeof a !== 'object' || a === null) invalid(here, `${op} takes {input, substr}`)
    checkOperand(a.input, [...here, 'input'])
    checkOperand(a.substr, [...here, 'substr'])
  } else invalid(here, `unknown operator ${op}`)
}

/** Validates a `Query` (`{"$expr": Operation}`) and returns its operation; malformed queries are a 422. */
export function parseQuery(query: unknown, loc: (string | number)[] = ['query']): Expr {
  if (
    typeof query !== 'object' ||
    query === null ||
    Array.isArray(query) ||
    Object.keys(query).length !== 1 ||
    !('$expr' in query)
  ) {
    invalid(loc, 'a query is {"$expr": operation}')
  }
  const expr = (query as { $expr: unknown }).$expr
  checkOperation(expr, [...loc, '$expr'])
  return expr as Expr
}

/** Resolves a field path against a row. */
export type FieldReader = (path: string) => unknown

type Cast = 'number' | 'bool' | 'string' | 'none'

function castOf(node: unknown): Cast | undefined {
  const lit = (node as Expr).$literal
  if (!('$literal' in (node as Expr))) return undefined
  if (typeof lit === 'boolean') return 'bool'
  if (typeof lit === 'number') return 'number'
  if (typeof lit === 'string') return 'string'
  return 'none'
}

function asText(v: unknown): string {
  if (v === undefined || v === null) return ''
  if (typeof v === 'string') return v
  if (typeof v === 'number' || typeof v === 'boolean') return String(v)
  return ''
}

function cast(v: unknown, to: Cast | undefined): unknown {
  if (to === 'number') {
    if (typeof v === 'boolean') return v ? 1 : 0
    const n = typeof v === 'number' ? v : Number(asText(v))
    return asText(v) === '' || Number.isNaN(n) ? null : n
  }
  if (to === 'bool') {
    if (typeof v === 'boolean') return v
    const t = asText(v).toLowerCase()
    return t === 'true' || t === '1' ? true : t === 'false' || t === '0' ? false : null
  }
  if (to === 'string') return asText(v)
  return v
}

function operand(node: unknown, read: FieldReader): unknown {
  const n = node as Expr
  if ('$literal' in n) return n.$literal
  if ('$getField' in n) return read(String(n.$getField))
  if ('$convert' in n) {
    const { input, to } = n.$convert as { input: unknown; to: string }
    const v = operand(input, read)
    if (to === 'exists') return v !== undefined && v !== null
    if (to === 'double') return cast(v, 'number')
    if (to === 'int') {
      const x = cast(v, 'number')
      return x === null ? null : Math.trunc(x as number)
    }
    if (to === 'bool') return cast(v, 'bool')
    return asText(v)
  }
  if ('$size' in n) {
    const v = operand(n.$size, read)
    return Array.isArray(v) ? v.length : 0
  }
  return evaluate(n, read)
}

function cmp(a: unknown, b: unknown): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b)
  const x = asText(a)
  const y = asText(b)
  return x < y ? -1 : x > y ? 1 : 0
}

function tokens(text: string): string[] {
  return text.split(/[^\p{L}\p{N}_]+/u).filter((t) => t !== '')
}

/** Evaluates an operation against a row: true, false or null (NULL excludes the row, as in SQL). */
export function evaluate(expr: Expr, read: FieldReader): boolean | null {
  const [op] = Object.keys(expr) as [string]
  const arg = expr[op]
  if (op === '$and' || op === '$or') {
    const values = (arg as unknown[]).map((a) => operand(a, read))
    if (op === '$and')
      return values.some((v) => v === false || v === 0) ? false : values.some((v) => v == null) ? null : true
    return values.some((v) => v === true || (typeof v === 'number' && v !== 0))
      ? true
      : values.some((v) => v == null)
        ? null
        : false
  }
  if (op === '$not') {
    const v = operand((arg as unknown[])[0], read)
    return v == null ? null : !v
  }
  if (BINARY.includes(op)) {
    const [l, r] = arg as [unknown, unknown]
    const isNull = (n: unknown) => '$literal' in (n as Expr) && (n as Expr).$literal === null
    if (op === '$eq' && (isNull(l) || isNull(r))) return operand(isNull(r) ? l : r, read) == null
    const to = castOf(r) ?? castOf(l)
    const lv = cast(operand(l, read), to)
    const rv = cast(operand(r, read), to)
    if (lv === null || rv === null) return null
    const c = cmp(lv, rv)
    return op === '$eq' ? c === 0 : op === '$gt' ? c > 0 : op === '$gte' ? c >= 0 : op === '$lt' ? c < 0 : c <= 0
  }
  if (op === '$in') {
    const [l, list] = arg as [unknown, unknown[]]
    const casts = new Set(list.map(castOf))
    const to = casts.size === 1 ? [...casts][0] : 'none'
    const lv = cast(operand(l, read), to)
    if (lv === null) return null
    return list.some((item) => cmp(lv, cast(operand(item, read), to)) === 0)
  }
  const { input, substr, case_insensitive: ci } = arg as { input: unknown; substr: unknown; case_insensitive?: boolean }
  const needle = operand(substr, read)
  if (typeof needle !== 'string') throw new BadRequestError(`${op} requires a string substr`)
  const hay = operand(input, read)
  const norm = (s: string) => (ci ? s.toLowerCase() : s)
  if (Array.isArray(hay)) return hay.some((h) => norm(asText(h)) === norm(asText(needle)))
  if (op === '$contains') return norm(asText(hay)).includes(norm(asText(needle)))
  return tokens(norm(asText(hay))).includes(norm(asText(needle)))
}
