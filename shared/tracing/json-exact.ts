import { randomBytes } from 'node:crypto'
// digest.ts imports the wrapper classes from here; neither module uses the other while it loads, so the cycle is benign.
import { pyFloat } from '#shared/tracing/py-number'

/**
 * A JSON parser and writer that keep what `JSON.parse` and `JSON.stringify` forget and Weave's digests depend on
 * (docs/tracing.md §8.1: "keep numbers as received"): a whole number written as a float (`1.0`, `1e5`) stays a Python
 * float, and an integer beyond 2^53 keeps its exact digits. Everything else parses to the plain JavaScript value.
 */

// While `jsonExact` runs (JSON.stringify is synchronous, so no other request interleaves), the wrappers below write a
// placeholder string holding this per-process random nonce and their index in `met`, replaced afterwards by the
// number's text; outside it they write plain numbers. No user string can hold the nonce, so none is replaced.
const NONCE = `pyexact${randomBytes(16).toString('hex')}`
const PLACEHOLDER = new RegExp(`"${NONCE}(\\d+)"`, 'g')
let met: (PyFloat | PyInt)[] | undefined

function placeholder(wrapper: PyFloat | PyInt): string | undefined {
  if (met === undefined) return undefined
  met.push(wrapper)
  return `${NONCE}${met.length - 1}`
}

/** A float whose value is whole (`1.0`): Python prints it `1.0`, JavaScript would print `1`. */
export class PyFloat {
  constructor(readonly value: number) {}
  toJSON(): number | string {
    return placeholder(this) ?? this.value
  }
}

/** An integer too large for a double, with its exact decimal digits. */
export class PyInt {
  constructor(readonly digits: string) {}
  toJSON(): number | string {
    return placeholder(this) ?? Number(this.digits)
  }
}

/**
 * Whether a parsed JSON value is an object (a dict): not an array, and not one of the exact-number wrappers above,
 * which are numbers (their prototype is not `Object.prototype`; the exact parser's objects may have none).
 */
export function isJsonObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== 'object' || v === null) return false
  const proto = Object.getPrototypeOf(v)
  return proto === Object.prototype || proto === null
}

/** A parsed JSON value with an exact-number wrapper as the JavaScript number it stands for; anything else as it is. */
export function plainNumber(v: unknown): unknown {
  return v instanceof PyFloat ? v.value : v instanceof PyInt ? Number(v.digits) : v
}

/**
 * JSON text of `value` as `JSON.stringify` writes it, except that a `PyFloat` is written as Python's `json.dumps`
 * writes the float (`1.0`, `1e+20`, `-0.0`) and a `PyInt` as its digits; `exact` tells whether the value held any.
 * A value without wrappers costs one `JSON.stringify`.
 */
export function jsonExact(value: unknown): { text: string; exact: boolean } {
  const outer = met
  const wrappers: (PyFloat | PyInt)[] = []
  met = wrappers
  let text: string
  try {
    // JSON.stringify answers undefined only for undefined or a function at the top, which no JSON body holds.
    text = JSON.stringify(value) ?? 'null'
  } finally {
    met = outer
  }
  if (wrappers.length === 0) return { text, exact: false }
  const exactText = text.replace(PLACEHOLDER, (_, i: string) => {
    const w = wrappers[Number(i)] as PyFloat | PyInt
    return w instanceof PyFloat ? pyFloat(w.value) : w.digits
  })
  return { text: exactText, exact: true }
}

/** `JSON.stringify(value)` with `PyFloat` and `PyInt` written exactly (see `jsonExact`). */
export function stringifyJsonExact(value: unknown): string {
  return jsonExact(value).text
}

const NUMBER = /-?(?:0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/y
// biome-ignore lint/suspicious/noControlCharactersInRegex: JSON strings may not hold raw control characters.
const STRING = /"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/y
const SPACE = /[ \t\n\r]*/y

class Parser {
  pos = 0
  constructor(private readonly text: string) {}

  private skip(): void {
    SPACE.lastIndex = this.pos
    SPACE.exec(this.text)
    this.pos = SPACE.lastIndex
  }

  private fail(): never {
    throw new SyntaxError(`Unexpected token at position ${this.pos}`)
  }

  private match(re: RegExp): RegExpExecArray {
    re.lastIndex = this.pos
    const m = re.exec(this.text)
    if (m === null) this.fail()
    this.pos = re.lastIndex
    return m
  }

  value(): unknown {
    this.skip()
    const ch = this.text[this.pos]
    if (ch === '{') return this.object()
    if (ch === '[') return this.array()
    if (ch === '"') return JSON.parse(this.match(STRING)[0])
    for (const [word, v] of [
      ['true', true],
      ['false', false],
      ['null', null],
    ] as const) {
      if (this.text.startsWith(word, this.pos)) {
        this.pos += word.length
        return v
      }
    }
    const m = this.match(NUMBER)
    const n = Number(m[0])
    if (m[1] !== undefined || m[2] !== undefined) return Number.isInteger(n) ? new PyFloat(n) : n
    return Number.isSafeInteger(n) ? n : new PyInt(m[0])
  }

  private object(): Record<string, unknown> {
    const out: Record<string, unknown> = {}
    this.pos++
    this.skip()
    if (this.text[this.pos] === '}') {
      this.pos++
      return out
    }
    for (;;) {
      this.skip()
      const key = JSON.parse(this.match(STRING)[0]) as string
      this.skip()
      if (this.text[this.pos++] !== ':') this.fail()
      Object.defineProperty(out, key, { value: this.value(), enumerable: true, writable: true, configurable: true })
      this.skip()
      const sep = this.text[this.pos++]
      if (sep === '}') return out
      if (sep !== ',') this.fail()
    }
  }

  private array(): unknown[] {
    const out: unknown[] = []
    this.pos++
    this.skip()
    if (this.text[this.pos] === ']') {
      this.pos++
      return out
    }
    for (;;) {
      out.push(this.value())
      this.skip()
      const sep = this.text[this.pos++]
      if (sep === ']') return out
      if (sep !== ',') this.fail()
    }
  }
}

/** Parses JSON text keeping float-ness and big-integer digits; throws SyntaxError on invalid JSON. */
export function parseJsonExact(text: string): unknown {
  const parser = new Parser(text)
  const value = parser.value()
  SPACE.lastIndex = parser.pos
  SPACE.exec(text)
  if (SPACE.lastIndex !== text.length) throw new SyntaxError(`Unexpected data at position ${SPACE.lastIndex}`)
  return value
}

/**
 * The part of a JSON request body at `path`, parsed exactly; undefined without a body or when the path is missing.
 *
 * @example exactPart(await c.req.text(), ['obj', 'val'])
 */
export function exactPart(rawBody: string | undefined, path: readonly string[]): unknown {
  if (rawBody === undefined) return undefined
  let v: unknown
  try {
    v = parseJsonExact(rawBody)
  } catch {
    return undefined
  }
  for (const key of path) {
    if (typeof v !== 'object' || v === null || !Object.hasOwn(v, key)) return undefined
    v = (v as Record<string, unknown>)[key]
  }
  return v
}

/** Parses JSON text that `jsonExact` wrote: exactly when it held wrappers, else with the faster `JSON.parse`. */
export function parseStoredJson(text: string, exact: boolean): unknown {
  return exact ? parseJsonExact(text) : JSON.parse(text)
}
