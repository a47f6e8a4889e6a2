// Numbers as Python prints (`repr`) and reads (`int(s)`) them, for digests, exact JSON, refs, usage counts and error
// messages that quote a number as Weave's and pydantic's Python code does. No imports, so every module that needs them
// can import them (the Console's browser bundle too, through usage-counts.ts).

/**
 * Formats a number as Python's `repr` would after `json.loads`: integers as digits, other floats in the shortest
 * round-trip form with an exponent when the decimal exponent is below -4 or at least 16 (`1e-05`, `1e+16`).
 */
export function pyNumber(value: number): string {
  if (Number.isNaN(value)) return 'NaN'
  if (!Number.isFinite(value)) return value > 0 ? 'Infinity' : '-Infinity'
  // JSON cannot tell 1.0 from 1: a safe integer is taken to be a Python int; beyond 2^53 it can only be a float.
  if (Number.isSafeInteger(value)) return String(value)
  if (Number.isInteger(value) && Math.abs(value) < 1e16) return `${value}.0`
  const [mantissa = '', exp = '0'] = value.toExponential().split('e')
  const exponent = Number(exp)
  if (exponent < -4 || exponent >= 16) {
    const sign = exponent < 0 ? '-' : '+'
    return `${mantissa}e${sign}${String(Math.abs(exponent)).padStart(2, '0')}`
  }
  return String(value)
}

/** Formats a number as Python's `repr` of a `float` (`101.0`, `99.5`, `1e-05`). */
export function pyFloat(value: number): string {
  if (Number.isInteger(value) && Math.abs(value) < 1e16) return `${Object.is(value, -0) ? '-0' : String(value)}.0`
  return pyNumber(value)
}

const DECIMAL = /\p{Nd}/u

// The value of a Unicode decimal digit: Unicode encodes each set of them as 10 consecutive code points from 0 to 9
// (some sets adjoin), so it is the distance from the start of its run of digits, modulo 10.
function digitValue(char: string): string {
  if (char >= '0' && char <= '9') return char
  const cp = char.codePointAt(0) ?? 0
  let start = cp
  while (DECIMAL.test(String.fromCodePoint(start - 1))) start--
  return String((cp - start) % 10)
}

/**
 * Python's `int(s)`: optional whitespace and sign, decimal digits of any script (`v٢` and `v２` are version 2) with
 * single underscores between them.
 */
export function parsePythonInt(text: string): number | undefined {
  const m = /^\s*([+-]?)(\p{Nd}+(?:_\p{Nd}+)*)\s*$/u.exec(text)
  if (m === null) return undefined
  const n = Number(Array.from((m[2] as string).replaceAll('_', ''), digitValue).join(''))
  return m[1] === '-' ? -n : n
}
